"""Receivers: a user's rename or deletion reaches their memories (`memories.services.users`);
a skill's reads and keeps (`skills.signals`) and the preferences of an ended session reach them.

Only here because a plain `User.save()`/`delete()` (Django's UserAdmin, the shell) calls no
service of ours; each receiver hands over to a service at once (docs/style.md, Where code goes).
"""

from __future__ import annotations

from django.conf import settings
from django.db.models.signals import pre_delete, pre_save
from django.dispatch import receiver

from almanac.signals import personal_key_changed
from memories import selectors
from memories.services import preferences, users
from memories.services.memories import memory_create
from skills.registry import subscribe
from skills.signals import memory_for_skill, rows_for_skill

# What a user says in a session may be a standing preference: `preference_extract` runs on
# every ended session and what it finds becomes preference memories (memories.services.preferences).
subscribe(
    "session.ended",
    "preference_extract",
    to_input=preferences.session_preference_input,
    on_output=preferences.session_preferences_keep,
)


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


@receiver(rows_for_skill, dispatch_uid="memories.rows_for_skill")
def _rows_for_skill(sender, *, source: str, user, since, until, **kwargs) -> list[dict] | None:
    if source != "memories":
        return None
    return selectors.memories_of_period(user=user, since=since, until=until)


@receiver(memory_for_skill, dispatch_uid="memories.memory_for_skill")
def _memory_for_skill(
    sender,
    *,
    user,
    content,
    memory_type,
    kind,
    occurred_at,
    meta,
    reason,
    scope="user",
    scope_key=None,
    **kwargs,
) -> int:
    memory, _ = memory_create(
        owner=user,
        content=content,
        memory_type=memory_type,
        scope=scope,
        scope_key=scope_key,
        kind=kind,
        occurred_at=occurred_at,
        meta=meta,
        reason=reason,
    )
    return memory.pk
