import time

from django.core.management.base import BaseCommand, CommandError
from django_q.tasks import async_task

from almanac.errors import ApplicationError
from almanac.models import Tenant
from wiki.models import Rebuild
from wiki.services.rebuild import rebuild_run, rebuild_start


class Command(BaseCommand):
    help = (
        "Recompile the wiki from the inbox (every thread of a tenant, or one page's threads), "
        "with progress. Idempotent: safe to rerun."
    )

    def add_arguments(self, parser):
        parser.add_argument("--tenant", help="tenant slug (default: all tenants)")
        parser.add_argument("--page", default="", help="only the threads of this page (slug; needs --tenant)")
        parser.add_argument(
            "--background",
            action="store_true",
            help="queue it as a django-q task and follow its progress (a qcluster runs it)",
        )
        parser.add_argument("--no-wait", action="store_true", help="with --background: queue and return")
        parser.add_argument("--status", action="store_true", help="list the latest rebuilds and exit")

    def handle(self, tenant=None, page="", background=False, no_wait=False, status=False, **options):
        if status:
            return self._status()
        if page and not tenant:
            raise CommandError("--page needs --tenant")
        tenants = Tenant.objects.all()
        if tenant:
            tenants = tenants.filter(slug=tenant)
            if not tenants.exists():
                raise CommandError(f"no tenant {tenant!r}")
        for row in tenants.order_by("slug"):
            try:
                rebuild = rebuild_start(tenant=row, page_slug=page)
            except ApplicationError as exc:
                raise CommandError(str(exc)) from exc
            if background:
                async_task("wiki.tasks.rebuild_task", rebuild.pk)
                self.stdout.write(f"{row.slug}: rebuild {rebuild.pk} queued")
                rebuild = rebuild if no_wait else self._follow(rebuild.pk)
            else:
                rebuild = rebuild_run(rebuild_id=rebuild.pk, progress=self._progress)
            if rebuild.state == Rebuild.State.FAILED:
                raise CommandError(f"{row.slug}: rebuild {rebuild.pk} failed: {rebuild.error}")
            if rebuild.state == Rebuild.State.DONE:
                self.stdout.write(self.style.SUCCESS(self._line(rebuild)))

    def _line(self, rebuild: Rebuild) -> str:
        scope = rebuild.page_slug or "all pages"
        return (
            f"rebuild {rebuild.pk} {rebuild.tenant.slug}/{scope}: {rebuild.state}, "
            f"events {rebuild.events_done}/{rebuild.events_total}, "
            f"threads {rebuild.threads_done}/{rebuild.threads_total}"
        )

    def _progress(self, rebuild: Rebuild) -> None:
        self.stdout.write(self._line(rebuild))

    def _follow(self, rebuild_id: int) -> Rebuild:
        seen = None
        while True:
            rebuild = Rebuild.objects.select_related("tenant").get(pk=rebuild_id)
            line = self._line(rebuild)
            if line != seen:
                self.stdout.write(line)
                seen = line
            if rebuild.state in (Rebuild.State.DONE, Rebuild.State.FAILED):
                return rebuild
            time.sleep(1)

    def _status(self) -> None:
        for rebuild in Rebuild.objects.select_related("tenant").order_by("-created_at", "-id")[:20]:
            self.stdout.write(self._line(rebuild))
