"""Periodic jobs. Each app lists its own in `SCHEDULES` of its `tasks` module."""

from importlib import import_module

from django_q.models import Schedule

APPS = ["memories", "connectors", "wiki", "skills"]


def setup_schedules() -> list[str]:
    names = []
    for app in APPS:
        try:
            module = import_module(f"{app}.tasks")
        except ModuleNotFoundError:
            continue
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
