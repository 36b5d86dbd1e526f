from django.apps import AppConfig


class ContextConfig(AppConfig):
    name = "context"
    verbose_name = "Context for agents"

    def ready(self):
        from django.conf import settings

        from context.budget import block_shares

        block_shares(settings.CONTEXT_BLOCK_SHARES)  # a bad value fails at start, not on a call
