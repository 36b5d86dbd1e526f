from django.apps import AppConfig
from django.conf import settings
from django.core import checks
from django.utils.module_loading import import_string
from django.utils.translation import gettext_lazy as _


class MemoriesConfig(AppConfig):
    name = "memories"
    verbose_name = _("Memories")

    def ready(self):
        from memories import receivers  # noqa: F401  (connects the receivers)

        checks.register(rerank_check)


def rerank_check(app_configs=None, **kwargs):
    """MEMORY_RERANK names a callable that imports: checked when the server, the worker or
    `migrate` starts, not on the first recall (a 500 for every call then)."""
    path = settings.MEMORY_RERANK
    if not path:
        return []
    try:
        hook = import_string(path)
    except ImportError as exc:
        return [checks.Error(f"MEMORY_RERANK={path!r} cannot be imported: {exc}", id="memories.E001")]
    if not callable(hook):
        return [checks.Error(f"MEMORY_RERANK={path!r} is not callable", id="memories.E002")]
    return []
