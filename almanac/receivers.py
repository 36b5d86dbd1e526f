"""Receivers that keep the personal key `user:<username>` on the person (docs/design.md, Identity and access),
and check the embedding columns after `migrate`.

Django's UserAdmin and the shell rename or delete a user with a plain `User.save()` /
`delete()`, which calls no service of ours: these receivers are the one way to catch every
path, and they hand over to a service at once (docs/style.md, Where code goes: no logic in signals).
`post_save` runs inside the caller's transaction (the admin's, a service's); in autocommit
the service opens its own, right after the user row is written.
"""

from __future__ import annotations

from django.apps import apps
from django.conf import settings
from django.db.models.signals import post_migrate, post_save, pre_delete, pre_save
from django.dispatch import receiver

from almanac.models import UserProfile
from almanac.services.users import profile_name_fill, user_personal_key_sync, user_personal_keys_retire


@receiver(post_save, sender=settings.AUTH_USER_MODEL, dispatch_uid="almanac.user_post_save")
def _user_saved(sender, instance, created, raw=False, update_fields=None, **kwargs) -> None:
    if created or raw or (update_fields is not None and "username" not in update_fields):
        return  # e.g. a login writes only last_login
    user_personal_key_sync(user=instance)


@receiver(pre_delete, sender=settings.AUTH_USER_MODEL, dispatch_uid="almanac.user_pre_delete")
def _user_deleted(sender, instance, **kwargs) -> None:
    user_personal_keys_retire(user=instance)


@receiver(pre_save, sender=UserProfile, dispatch_uid="almanac.profile_pre_save")
def _profile_saving(sender, instance, raw=False, **kwargs) -> None:
    if not raw:
        profile_name_fill(profile=instance)


# Once per migrate (this app's signal comes after every app has migrated).
@receiver(post_migrate, sender=apps.get_app_config("almanac"), dispatch_uid="almanac.embedding_dim")
def _embedding_columns_after_migrate(sender, using="default", **kwargs) -> None:
    """A fresh install with another EMBEDDING_DIM gets columns of that size; columns that
    hold vectors of another size are reported (only `reembed` can fill them again)."""
    import sys

    from almanac.embedding_columns import empty_columns_fit

    if using != "default":
        return
    stale = empty_columns_fit()
    if stale:
        sys.stderr.write(
            f"warning: {', '.join(stale)} hold vectors of another size than EMBEDDING_DIM: "
            "run `manage.py reembed` (until then writes and searches of those rows fail)\n"
        )
