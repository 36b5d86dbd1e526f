"""The documents part of the memories page: the reader's recent documents in plain words,
and whom the upload form offers to share a new one with."""

from __future__ import annotations

from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from almanac.labels import group_label, group_labels, labels_ordered
from almanac.models import AccessGroup
from almanac.selectors import user_tenant
from documents.selectors import document_list
from memories.services.scopes import user_units

RECENT_DOCUMENTS = 10
# Where a document's reading stands, in the reader's language.
DOCUMENT_STATUS = {
    "pending": gettext_lazy("waiting to be read"),
    "read": gettext_lazy("read; looking for clauses"),
    "done": gettext_lazy("done"),
    "failed": gettext_lazy("failed"),
}
READING = ("pending", "read")  # a document's reading is under way
UNIT_SCOPES = (AccessGroup.Kind.DEPARTMENT, AccessGroup.Kind.PROJECT)


def document_rows(user) -> list[dict]:
    """The reader's recent documents, each with where its reading stands and who may read
    it in plain words ("Sales department", as a memory card says it)."""
    documents = list(document_list(user=user)[:RECENT_DOCUMENTS])
    labels = group_labels(user=user, keys={key for d in documents for key in d.acl})
    return [
        {
            "document": d,
            "status": DOCUMENT_STATUS.get(d.status, d.status),
            "reading": d.status in READING,
            "visible_to": labels_ordered(labels, d.acl),
        }
        for d in documents
    ]


def upload_audiences(user) -> list[tuple[str, str]]:
    """Whom the upload form offers to share a document with, as (value, words): only the
    reader ("user"), each of their departments and projects ("dept:sales"), everyone at
    the company ("tenant"). The upload service still checks the choice."""
    tenant = user_tenant(user)
    if tenant is None:
        return [("user", _("Only me"))]
    units = [
        (f"{scope}:{unit.key}", group_label(key=unit.group_key, kind=scope, name=unit.name))
        for scope in UNIT_SCOPES
        for unit in sorted(user_units(user=user, scope=scope), key=lambda unit: unit.name.lower())
    ]
    everyone = group_label(key=tenant.group_key, kind=AccessGroup.Kind.TENANT, name=tenant.name)
    return [("user", _("Only me")), *units, ("tenant", everyone)]


def upload_scope(audience: str) -> tuple[str, str | None]:
    """The form's choice as the upload service's (scope, scope_key): "dept:sales" →
    ("dept", "sales"), "user" → ("user", None)."""
    scope, _sep, key = audience.strip().partition(":")
    return scope or "user", key.strip() or None
