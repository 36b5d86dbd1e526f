from django.apps import AppConfig


class ConnectorsConfig(AppConfig):
    name = "connectors"
