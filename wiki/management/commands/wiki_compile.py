import time

from django.core.management.base import BaseCommand, CommandError

from almanac.models import Tenant
from wiki.services.backlog import compile_pending
from wiki.services.people import directory_sync


class Command(BaseCommand):
    help = (
        "Compile pending (and retry failed) inbox events into the wiki; refresh people pages. Safe to rerun."
    )

    def add_arguments(self, parser):
        parser.add_argument("tenant", nargs="?", help="tenant slug (default: all tenants)")
        parser.add_argument("--limit", type=int, default=None, help="at most this many events (1 or more)")
        parser.add_argument(
            "--no-people", action="store_true", help="skip the directory sync of person pages"
        )
        parser.add_argument("--no-progress", action="store_true", help="no progress lines")

    def handle(self, tenant=None, limit=None, no_people=False, no_progress=False, **options):
        if limit is not None and limit < 1:
            raise CommandError("--limit must be 1 or more")
        tenants = Tenant.objects.all()
        if tenant:
            tenants = tenants.filter(slug=tenant)
            if not tenants.exists():
                raise CommandError(f"no tenant {tenant!r}")
        total = 0
        for row in tenants.order_by("slug"):
            if not no_people:
                directory_sync(tenant=row)
            progress = None if no_progress else self._progress(row.slug)
            count = compile_pending(tenant=row, limit=limit, progress=progress)
            total += count
            self.stdout.write(f"{row.slug}: {count} events compiled")
        self.stdout.write(self.style.SUCCESS(f"{total} events compiled"))

    def _progress(self, slug: str):
        """A line per batch: events done of the backlog, the rate and the time left."""
        started = time.monotonic()

        def report(done: int, total: int) -> None:
            elapsed = max(time.monotonic() - started, 1e-6)
            rate = done / elapsed
            eta = (total - done) / rate if rate else 0.0
            self.stdout.write(f"{slug}: compiled {done}/{total} events, {rate:.0f} events/s, ETA {eta:.0f}s")

        return report
