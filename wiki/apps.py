from django.apps import AppConfig


class WikiConfig(AppConfig):
    name = "wiki"

    def ready(self) -> None:
        from wiki import receivers  # noqa: F401  (connects the receivers)
