from django.apps import AppConfig


class AlmanacConfig(AppConfig):
    name = "almanac"
    verbose_name = "Tenancy and access"

    def ready(self):
        from almanac import signals  # noqa: F401  (connects the receivers)
