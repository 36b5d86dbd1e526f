from django.apps import AppConfig
from django.db.models.signals import post_migrate


def _sync_builtins(sender, using="default", **kwargs):
    # Runs after `migrate` so the admin lists every built-in skill from the start.
    from skills.services import skill_sync_builtins

    skill_sync_builtins()


class SkillsConfig(AppConfig):
    name = "skills"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self):
        post_migrate.connect(_sync_builtins, sender=self, dispatch_uid="skills_sync_builtins")
