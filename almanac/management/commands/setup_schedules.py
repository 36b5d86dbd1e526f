from django.core.management.base import BaseCommand

from almanac.schedules import setup_schedules


class Command(BaseCommand):
    help = "Create or update the periodic django-q2 schedules (safe to rerun)."

    def handle(self, **options):
        names = setup_schedules()
        self.stdout.write("schedules: " + (", ".join(names) or "none"))
