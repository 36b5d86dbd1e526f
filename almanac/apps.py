from django.apps import AppConfig


class AlmanacConfig(AppConfig):
    name = "almanac"
    verbose_name = "Tenancy and access"

    def ready(self):
        from django.conf import settings
        from django.core.exceptions import ImproperlyConfigured
        from django.db.models.signals import post_migrate

        from almanac import receivers  # noqa: F401  (connects the receivers)
        from almanac.throttling import rate_parse

        try:  # a typo here would otherwise fail every API call
            rate_parse(settings.API_RATE_LIMIT)
        except ValueError as exc:
            raise ImproperlyConfigured(f"API_RATE_LIMIT: {exc}") from exc

        # once per migrate (this app's signal comes after every app has migrated)
        post_migrate.connect(
            embedding_columns_after_migrate, sender=self, dispatch_uid="almanac.embedding_dim"
        )


def embedding_columns_after_migrate(using="default", **kwargs) -> None:
    """A fresh install with another EMBEDDING_DIM gets columns of that size; columns that
    hold vectors of another size are reported (only `reembed` can fill them again)."""
    import sys

    from almanac.embedding_columns import empty_columns_fit

    if using != "default":
        return
    stale = empty_columns_fit()
    if stale:
        sys.stderr.write(
            f"warning: {', '.join(stale)} hold vectors of another size than EMBEDDING_DIM: "
            "run `manage.py reembed` (until then writes and searches of those rows fail)\n"
        )
