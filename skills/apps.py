from django.apps import AppConfig
from django.db import connections
from django.db.models.signals import post_migrate


def _sync_builtins(sender, using="default", **kwargs):
    # After `migrate`, so the admin lists every built-in skill from the start (skipped when
    # a partial migrate has not created the table yet).
    from skills.models import Skill
    from skills.services import skill_sync_builtins

    if Skill._meta.db_table in connections[using].introspection.table_names():
        skill_sync_builtins()


class SkillsConfig(AppConfig):
    name = "skills"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self):
        from skills import signals  # noqa: F401  (connects the domain-event receiver)

        post_migrate.connect(_sync_builtins, sender=self, dispatch_uid="skills_sync_builtins")
