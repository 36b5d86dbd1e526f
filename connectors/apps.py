from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class ConnectorsConfig(AppConfig):
    name = "connectors"
    verbose_name = _("Connectors")
