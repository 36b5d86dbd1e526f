from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class SkillsConfig(AppConfig):
    name = "skills"
    verbose_name = _("Skills")
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self):
        from skills import receivers  # noqa: F401  (connects the receivers)
