from django.apps import AppConfig


class WikiConfig(AppConfig):
    name = "wiki"

    def ready(self) -> None:
        from django.db.models.signals import post_delete, post_save

        from wiki.matching import entities_changed
        from wiki.models import Entity

        def changed(sender, instance, **kwargs):
            entities_changed(instance.tenant_id)

        post_save.connect(changed, sender=Entity, weak=False, dispatch_uid="wiki-entity-changed")
        post_delete.connect(changed, sender=Entity, weak=False, dispatch_uid="wiki-entity-changed-delete")
        self._receive_connector_signals()

    @staticmethod
    def _receive_connector_signals() -> None:
        from connectors.signals import container_visibility_changed, event_ingested
        from wiki import receivers

        event_ingested.connect(receivers.event_ingested, dispatch_uid="wiki.event_ingested")
        container_visibility_changed.connect(
            receivers.container_visibility_changed, dispatch_uid="wiki.container_visibility_changed"
        )
