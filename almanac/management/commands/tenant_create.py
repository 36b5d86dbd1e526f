from django.core.management.base import BaseCommand, CommandError

from almanac.errors import ApplicationError
from almanac.services.tenancy import tenant_create


class Command(BaseCommand):
    help = "Create a tenant (a company). Idempotent: an existing slug is kept (its name updated)."

    def add_arguments(self, parser):
        parser.add_argument("slug")
        parser.add_argument("--name", default="")

    def handle(self, slug, name, **options):
        try:
            tenant, created = tenant_create(slug=slug, name=name)
        except ApplicationError as exc:
            raise CommandError(exc.message) from exc
        self.stdout.write(f"{'created' if created else 'exists'}: tenant {tenant.slug} ({tenant.name})")
