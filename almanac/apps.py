from django.apps import AppConfig


class AlmanacConfig(AppConfig):
    name = "almanac"
    verbose_name = "Tenancy and access"
