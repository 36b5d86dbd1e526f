from django.core.management.base import BaseCommand, CommandError

from almanac.errors import ApplicationError
from almanac.models import Tenant
from almanac.services.users import user_create


class Command(BaseCommand):
    help = (
        "Create or update a user of a tenant (names are per tenant: the same name in another tenant is "
        "another person); departments and projects are created on first use."
    )

    def add_arguments(self, parser):
        parser.add_argument("tenant")
        parser.add_argument("username")
        parser.add_argument("--email", default="")
        parser.add_argument("--dept", action="append", default=[], help="department name (repeatable)")
        parser.add_argument("--project", action="append", default=[], help="project name (repeatable)")
        parser.add_argument("--password", default=None)
        parser.add_argument("--admin", action="store_true", help="staff + superuser (admin console)")

    def handle(self, tenant, username, **o):
        tenant_obj = Tenant.objects.filter(slug=tenant).first()
        if tenant_obj is None:
            raise CommandError(f"unknown tenant {tenant!r}; create it with tenant_create first")
        try:
            user = user_create(
                tenant=tenant_obj,
                username=username,
                email=o["email"],
                departments=o["dept"],
                projects=o["project"],
                password=o["password"],
                is_admin=o["admin"],
            )
        except ApplicationError as exc:
            raise CommandError(exc.message) from exc
        profile = user.profile
        depts = ", ".join(d.name for d in profile.departments.all()) or "-"
        projects = ", ".join(p.name for p in profile.projects.all()) or "-"
        self.stdout.write(
            f"user {profile.username} in {tenant_obj.slug}: departments {depts}; projects {projects}"
        )
