"""The append-only audit log: one row per security-relevant action."""

from __future__ import annotations

from django.contrib.auth import get_user_model

from almanac.models import (
    AccessGroup,
)

User = get_user_model()


def audit_record(
    *,
    action: str,
    tenant=None,
    tenant_id: int | None = None,
    actor: str = "",
    object_type: str = "",
    object_id="",
    detail: dict | None = None,
):
    """Append one audit event (never content that a purge must remove)."""
    from almanac.models import AuditEvent

    return AuditEvent.objects.create(
        tenant_id=tenant.pk if tenant is not None else tenant_id,
        actor=actor[:200],
        action=action,
        object_type=object_type,
        object_id=str(object_id)[:64],
        detail=detail or {},
    )


# Who is listed by name in one access event; a larger change (a connector's first sync of
# a big channel) records the count and the first names.
AUDIT_MAX_USERS = 200


def access_audit(
    *, changes: dict[int, set[int]], granted: bool, actor: str, origin: str = "", groups: dict | None = None
) -> None:
    """One `access.grant` / `access.revoke` event per access group: {group id: user ids}
    that just joined or left it. Membership is the permission model, so every change of it,
    by the directory, a connector or an admin, is recorded with who made it."""
    changes = {gid: ids for gid, ids in changes.items() if ids}
    if not changes:
        return
    groups = {
        **AccessGroup.objects.in_bulk(list(changes)),
        **(groups or {}),
    }  # `groups`: read before a delete
    names = dict(User.objects.filter(pk__in=set().union(*changes.values())).values_list("pk", "username"))
    for gid, ids in sorted(changes.items()):
        group = groups.get(gid)
        if group is None:
            continue
        users = sorted(names.get(uid, str(uid)) for uid in ids)
        audit_record(
            action="access.grant" if granted else "access.revoke",
            tenant_id=group.tenant_id,
            actor=actor or "system",
            object_type="access_group",
            object_id=group.key,
            detail={
                "group": group.key,
                "users": users[:AUDIT_MAX_USERS],
                "count": len(users),
                **({"origin": origin} if origin else {}),
            },
        )
