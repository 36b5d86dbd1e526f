from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class MetricsConfig(AppConfig):
    name = "metrics"
    verbose_name = _("Metrics")

    def ready(self):
        from metrics import instruments, receivers  # noqa: F401  (multiprocess directory, receivers)
