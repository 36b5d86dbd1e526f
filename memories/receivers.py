"""Receivers: a user's rename or deletion reaches their memories (`memories.services.users`).

Only here because a plain `User.save()`/`delete()` (Django's UserAdmin, the shell) calls no
service of ours; each receiver hands over to a service at once (docs/style.md, Where code goes).
"""

from __future__ import annotations

from django.conf import settings
from django.db.models.signals import pre_delete, pre_save
from django.dispatch import receiver

from almanac.signals import personal_key_changed
from memories.services import users


@receiver(personal_key_changed, dispatch_uid="memories.personal_key_changed")
def _personal_key_changed(sender, *, tenant_id, old_key, new_key, user=None, **kwargs) -> int:
    if new_key:
        return users.memories_personal_key_move(tenant_id=tenant_id, old_key=old_key, new_key=new_key)
    return users.memories_personal_key_retire(tenant_id=tenant_id, key=old_key, user=user)


@receiver(pre_delete, sender=settings.AUTH_USER_MODEL, dispatch_uid="memories.user_pre_delete")
def _user_deleted(sender, instance, **kwargs) -> None:
    users.memories_owner_leave(user=instance)


@receiver(pre_save, sender=settings.AUTH_USER_MODEL, dispatch_uid="memories.user_pre_save")
def _user_saving(sender, instance, raw=False, update_fields=None, **kwargs) -> None:
    if raw or not instance.pk or (update_fields is not None and "username" not in update_fields):
        return  # a new user, a fixture, a login (last_login only)
    users.memories_before_rename(user=instance)
