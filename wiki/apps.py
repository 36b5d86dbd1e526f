from django.apps import AppConfig


class WikiConfig(AppConfig):
    name = "wiki"

    def ready(self) -> None:
        from django.db.models.signals import post_delete, post_save

        from wiki.models import Entity
        from wiki.selectors import entities_changed

        def changed(sender, instance, **kwargs):
            entities_changed(instance.tenant_id)

        post_save.connect(changed, sender=Entity, weak=False, dispatch_uid="wiki-entity-changed")
        post_delete.connect(changed, sender=Entity, weak=False, dispatch_uid="wiki-entity-changed-delete")
