"""The append-only audit log: one row per security-relevant action."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import UTC, datetime

from django.contrib.auth import get_user_model
from django.db.models import TextField
from django.db.models.functions import Cast

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
    """Append one audit event (never content that a purge must remove). The database
    chains it: `seq`, `created_at`, `prev_digest` and `digest` come back from the insert."""
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


# --- The hash chain (migration 0006_audit_chain; docs/operations.md, "Audit log") -------
CHAIN_FIELDS = ("seq", "id", "tenant_id", "actor", "action", "object_type", "object_id")


def audit_digest(*, values: dict, detail_text: str, created_at: datetime, prev_digest: str) -> str:
    """sha256 of a row as the chain trigger computes it, recomputed here independently of
    the database's function: each field as `<length>:<text>`, in the trigger's order."""
    fields = [("" if values[name] is None else str(values[name])) for name in CHAIN_FIELDS]
    fields += [detail_text, created_at.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%f"), prev_digest]
    return hashlib.sha256("".join(f"{len(f)}:{f}" for f in fields).encode()).hexdigest()


@dataclass
class ChainReport:
    tenant_id: int | None
    rows: int = 0
    head_seq: int = 0
    head_digest: str = ""
    problem: str = ""  # the first one found, or ""
    problem_seq: int | None = None

    @property
    def ok(self) -> bool:
        return not self.problem


def audit_chain_tenants() -> list[int | None]:
    """The chains there are: one per tenant with audit rows, None for rows without a tenant."""
    from almanac.models import AuditEvent

    ids = set(AuditEvent.objects.values_list("tenant_id", flat=True).distinct())
    return sorted(ids, key=lambda t: (t is not None, t or 0))


def audit_chain_verify(*, tenant_id: int | None, batch: int = 5000) -> ChainReport:
    """Walk one chain in `seq` order and report the first problem:
    - forged: a row's digest is not the digest of its content (changed, or inserted around
      the trigger);
    - gap: a row does not follow the digest of the row before it and `seq` skips (rows deleted);
    - reordered: a row follows the digest of another row than the one before it, or its
      `seq` is not the next one, or its time is earlier than the row before it.
    Rows deleted at the end of a chain leave no trace inside it: compare the head with a
    copy kept elsewhere (`audit_verify --expect`)."""
    from almanac.models import AuditEvent

    report = ChainReport(tenant_id=tenant_id)
    rows = (
        AuditEvent.objects.filter(tenant_id=tenant_id)
        if tenant_id is not None
        else AuditEvent.objects.filter(tenant_id__isnull=True)
    )
    chain = rows
    rows = rows.annotate(detail_text=Cast("detail", TextField())).order_by("seq", "id")
    previous_time = None
    for row in rows.values(*CHAIN_FIELDS, "detail_text", "created_at", "prev_digest", "digest").iterator(
        batch
    ):
        expected_seq = report.head_seq + 1
        problem = _chain_problem(row, report.head_digest, expected_seq, previous_time, chain)
        if problem:
            report.problem, report.problem_seq = f"seq {row['seq']} (id {row['id']}): {problem}", row["seq"]
            return report
        report.rows, report.head_seq, report.head_digest = report.rows + 1, row["seq"], row["digest"]
        previous_time = row["created_at"]
    return report


def _chain_problem(row: dict, head: str, expected_seq: int, previous_time, chain) -> str:
    digest = audit_digest(
        values=row,
        detail_text=row["detail_text"],
        created_at=row["created_at"],
        prev_digest=row["prev_digest"],
    )
    if digest != row["digest"]:
        return "forged: its digest does not match its content"
    if row["prev_digest"] != head:
        if row["prev_digest"] and chain.filter(seq__lt=row["seq"], digest=row["prev_digest"]).exists():
            return "reordered: it follows an earlier row than the one before it"
        if row["seq"] > expected_seq:
            return f"gap: rows {expected_seq}..{row['seq'] - 1} are missing"
        return "forged: it follows no row of this chain"
    if row["seq"] != expected_seq:
        return f"reordered: seq {row['seq']} where {expected_seq} was expected"
    if previous_time is not None and row["created_at"] < previous_time:
        return "reordered: its time is earlier than the row before it"
    return ""
