"""The one access filter of memories (docs/design.md, Identity and access)."""

from __future__ import annotations

from django.db import models

from almanac.selectors import acl_visible

# A memory's acl is its scope's key (`Memory.acl_key`), held to these kinds by a constraint.
ACL_KEY_PREFIXES = ("user:", "dept:", "project:", "tenant:")


class MemoryQuerySet(models.QuerySet):
    def visible_to(self, user, *, statuses: tuple[str, ...] | None = ("active",)):
        """Rows `user` may read: same tenant and an `acl` key the user holds *now*.

        The shared `almanac.selectors.acl_visible` resolves membership on every call, so a
        removal takes effect on the very next query. Fails closed: anonymous, inactive
        or tenant-less users get nothing. `statuses=None` keeps every status.
        """
        qs = acl_visible(self, user, key_prefixes=ACL_KEY_PREFIXES)
        if statuses is not None:
            qs = qs.filter(status__in=list(statuses))
        return qs


class SessionQuerySet(models.QuerySet):
    def of_user(self, user):
        if user is None or not getattr(user, "is_authenticated", False) or not user.is_active:
            return self.none()
        return self.filter(user_id=user.pk, tenant__profiles__user_id=user.pk)
