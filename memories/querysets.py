"""The one access filter of memories (DESIGN §3)."""

from __future__ import annotations

from django.contrib.postgres.expressions import ArraySubquery
from django.db import models

from almanac.models import UserProfile
from almanac.selectors import user_keys_subquery


class MemoryQuerySet(models.QuerySet):
    def visible_to(self, user, *, statuses: tuple[str, ...] | None = ("active",)):
        """Rows `user` may read: same tenant and an `acl` key the user holds *now*.

        Membership is resolved inside the query (a subquery of GroupMembership), so a
        removal takes effect on the very next query. Fails closed: anonymous, inactive
        or tenant-less users get nothing. `statuses=None` keeps every status.
        """
        if user is None or not getattr(user, "is_authenticated", False) or not user.is_active:
            return self.none()
        tenant_id = UserProfile.objects.filter(user_id=user.pk).values("tenant_id")[:1]
        qs = self.filter(
            tenant_id=models.Subquery(tenant_id), acl__overlap=ArraySubquery(user_keys_subquery(user))
        )
        if statuses is not None:
            qs = qs.filter(status__in=list(statuses))
        return qs


class SessionQuerySet(models.QuerySet):
    def of_user(self, user):
        if user is None or not getattr(user, "is_authenticated", False) or not user.is_active:
            return self.none()
        return self.filter(user_id=user.pk, tenant__profiles__user_id=user.pk)
