"""Receivers of the documents app: `contract_clauses` runs on each document read
(`document.uploaded`) and what it finds becomes memories (`documents.services.clauses`); a
user's rename or deletion reaches the documents of their own scope."""

from __future__ import annotations

from django.conf import settings
from django.db.models.signals import pre_delete
from django.dispatch import receiver

from almanac.signals import personal_key_changed
from documents.services import clauses, users
from skills.registry import subscribe

subscribe(
    "document.uploaded",
    "contract_clauses",
    to_input=clauses.contract_input,
    on_output=lambda payload, output: clauses.document_clauses_keep(
        document_id=payload["document_id"], output=output
    ),
)


@receiver(personal_key_changed, dispatch_uid="documents.personal_key_changed")
def _personal_key_changed(sender, *, tenant_id, old_key, new_key, user=None, **kwargs) -> int:
    return users.documents_personal_key_change(tenant_id=tenant_id, old_key=old_key, new_key=new_key)


@receiver(pre_delete, sender=settings.AUTH_USER_MODEL, dispatch_uid="documents.user_pre_delete")
def _user_deleted(sender, instance, **kwargs) -> None:
    users.documents_owner_leave(user=instance)
