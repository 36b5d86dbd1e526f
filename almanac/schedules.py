"""Periodic jobs. Each app lists its own in `SCHEDULES` of its `tasks` module; this finds
them in every installed app, as the admin finds `admin` modules."""

from importlib import import_module

from django.apps import apps
from django.utils.module_loading import module_has_submodule
from django_q.models import Schedule


def app_modules(name: str) -> list:
    """The `<app>.<name>` module of every installed app that has one, in INSTALLED_APPS order."""
    return [
        import_module(f"{config.name}.{name}")
        for config in apps.get_app_configs()
        if module_has_submodule(config.module, name)
    ]


def setup_schedules() -> list[str]:
    names = []
    for module in app_modules("tasks"):
        for spec in getattr(module, "SCHEDULES", []):
            name = spec["name"]
            Schedule.objects.update_or_create(
                name=name,
                defaults={
                    "func": spec["func"],
                    "schedule_type": Schedule.MINUTES,
                    "minutes": spec["minutes"],
                    "repeats": -1,
                },
            )
            names.append(name)
    return names
