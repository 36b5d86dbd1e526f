"""Agent keys: creation (the raw key is shown once), revocation, last use."""

from __future__ import annotations

import secrets

from django.utils import timezone

from almanac.errors import ApplicationError
from almanac.models import (
    AgentKey,
    Tenant,
)
from almanac.services.audit import audit_record


def agentkey_create(
    *,
    tenant: Tenant,
    name: str,
    can_push_events: bool = False,
    can_act_for_users: bool = True,
    rate_limit: str = "",
    actor: str = "",
) -> tuple[AgentKey, str]:
    """Create an agent key and return it with its secret (shown once, stored hashed).
    `rate_limit`: requests per period ("600/m"); empty: the `API_RATE_LIMIT` setting."""
    from almanac.throttling import rate_parse

    name = (name or "").strip()
    if not name:
        raise ApplicationError("agent key name may not be empty")
    try:
        rate_parse(rate_limit)
    except ValueError as exc:
        raise ApplicationError(str(exc)) from exc
    if AgentKey.objects.filter(tenant=tenant, name=name, revoked_at__isnull=True).exists():
        raise ApplicationError(f"an active key named {name!r} already exists; revoke it first")
    raw = f"alm_{secrets.token_urlsafe(32)}"
    key = AgentKey.objects.create(
        tenant=tenant,
        name=name,
        prefix=raw[:10],
        hashed_secret=AgentKey.hash_secret(raw),
        can_push_events=can_push_events,
        can_act_for_users=can_act_for_users,
        rate_limit=rate_limit.strip(),
    )
    _key_audit(key, "agentkey.create", actor)
    return key, raw


def _key_audit(key: AgentKey, action: str, actor: str) -> None:
    audit_record(
        action=action,
        tenant_id=key.tenant_id,
        actor=actor or "system",
        object_type="agent_key",
        object_id=key.pk,
        detail={
            "name": key.name,
            "prefix": key.prefix,
            "can_act_for_users": key.can_act_for_users,
            "can_push_events": key.can_push_events,
        },
    )


def agentkey_revoke(*, key: AgentKey, actor: str = "") -> bool:
    """Revoke `key`; False when it was revoked already."""
    if key.revoked_at is not None:
        return False
    key.revoked_at = timezone.now()
    key.save(update_fields=["revoked_at"])
    _key_audit(key, "agentkey.revoke", actor)
    return True


def agentkey_touch(*, key: AgentKey) -> None:
    """Record use at most once a minute, so the hot path does not write on every call."""
    now = timezone.now()
    if key.last_used_at is None or (now - key.last_used_at).total_seconds() > 60:
        AgentKey.objects.filter(pk=key.pk).update(last_used_at=now)
        key.last_used_at = now
