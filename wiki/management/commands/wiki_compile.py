from django.core.management.base import BaseCommand, CommandError

from almanac.models import Tenant
from wiki import services


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

    def handle(self, tenant=None, limit=None, no_people=False, **options):
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
                services.directory_sync(tenant=row)
            count = services.compile_pending(tenant=row, limit=limit)
            total += count
            self.stdout.write(f"{row.slug}: {count} events compiled")
        self.stdout.write(self.style.SUCCESS(f"{total} events compiled"))
