from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class AlmanacConfig(AppConfig):
    name = "almanac"
    verbose_name = _("Tenancy and access")

    def ready(self):
        from django.conf import settings
        from django.core.exceptions import ImproperlyConfigured

        from almanac import receivers  # noqa: F401  (connects the receivers)
        from almanac.throttling import rate_parse

        try:  # a typo here would otherwise fail every API call
            rate_parse(settings.API_RATE_LIMIT)
        except ValueError as exc:
            raise ImproperlyConfigured(f"API_RATE_LIMIT: {exc}") from exc
