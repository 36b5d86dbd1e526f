from django.apps import AppConfig


class DocumentsConfig(AppConfig):
    name = "documents"

    def ready(self):
        from documents import receivers  # noqa: F401  (connects the receivers, subscribes the skills)
