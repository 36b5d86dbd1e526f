import logging

from django.core.management.base import BaseCommand

from almanac.demo import PASSWORD, load_company
from almanac.schedules import app_modules


class Command(BaseCommand):
    help = "Create (or refresh) the demo company: users, keys, wiki sources and memories. Idempotent."

    def handle(self, **options):
        # The loaders enqueue a task per event: django-q's line for each would bury the keys
        # printed below.
        logging.getLogger("django-q").setLevel(max(logging.WARNING, logging.getLogger("django-q").level))
        company = load_company()
        # Each app's `demo.load(company)`, in INSTALLED_APPS order (sources before the wiki
        # compiled from them, before the memories).
        for module in app_modules("demo"):
            if not hasattr(module, "load"):
                continue  # almanac.demo: the company itself, loaded above
            summary = module.load(company)
            if summary:
                self.stdout.write(f"{module.__name__.split('.')[0]}: {summary}")
        users = ", ".join(sorted(company.users))
        self.stdout.write(
            f"tenant {company.tenant.slug}: users {users} (password {PASSWORD!r}; admin is 'admin')"
        )
        for name, raw in company.new_keys.items():
            self.stdout.write(f"agent key {name} (shown once): {raw}")
        if not company.new_keys:
            self.stdout.write(
                "agent keys already exist; make another with: manage.py agentkey_create acme NAME"
            )
