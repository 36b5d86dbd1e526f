from django.core.management.base import BaseCommand, CommandError

from almanac.errors import ApplicationError
from almanac.models import Tenant
from almanac.services.keys import agentkey_create


class Command(BaseCommand):
    help = "Create an agent key; the secret is printed once, alone on the last line."

    def add_arguments(self, parser):
        parser.add_argument("tenant")
        parser.add_argument("name")
        parser.add_argument("--connector", action="store_true", help="may push connector events")
        parser.add_argument(
            "--rate-limit",
            default="",
            help='requests per period, e.g. "600/m"; default: API_RATE_LIMIT; "0": none',
        )

    def handle(self, tenant, name, connector, rate_limit="", **options):
        tenant_obj = Tenant.objects.filter(slug=tenant).first()
        if tenant_obj is None:
            raise CommandError(f"unknown tenant {tenant!r}; create it with tenant_create first")
        try:
            key, raw = agentkey_create(
                tenant=tenant_obj,
                name=name,
                can_push_events=connector,
                rate_limit=rate_limit,
                actor="manage.py",
            )
        except ApplicationError as exc:
            raise CommandError(exc.message) from exc
        perms = "act for users" + (", push connector events" if connector else "")
        self.stdout.write(
            f"agent key {key.name!r} for {tenant_obj.slug} ({perms}); store it now, it is not shown again:"
        )
        self.stdout.write(raw)
