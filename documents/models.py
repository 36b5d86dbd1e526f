"""A document a user uploaded into a scope: its file (under the data directory, by hash), the
text read from it page by page, and where that reading stands."""

from __future__ import annotations

from django.conf import settings
from django.contrib.postgres.fields import ArrayField
from django.contrib.postgres.indexes import GinIndex
from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy as _
from simple_history.models import HistoricalRecords

from almanac.models import Tenant
from almanac.selectors import acl_visible
from memories.models import scope_constraints
from memories.querysets import ACL_KEY_PREFIXES


class DocumentQuerySet(models.QuerySet):
    def visible_to(self, user):
        """Documents `user` may read: exactly the memories' rule (`almanac.selectors.acl_visible`),
        so a document is seen by whoever sees the memories of its scope."""
        return acl_visible(self, user, key_prefixes=ACL_KEY_PREFIXES)


class Document(models.Model):
    class Status(models.TextChoices):
        PENDING = "pending"  # stored, its text not read yet
        READ = "read"  # text read, `document.uploaded` sent: the skills are at work
        DONE = "done"  # the clause skill has kept what it found
        FAILED = "failed"  # `reason` says why (no text layer, an unreadable file)

    class Format(models.TextChoices):
        PDF = "pdf"
        MARKDOWN = "markdown"
        TEXT = "text"

    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="documents")
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="documents"
    )
    scope = models.CharField(max_length=16)
    scope_key = models.CharField(max_length=200)
    acl = ArrayField(models.CharField(max_length=300), help_text="access-group key, derived from the scope")
    filename = models.CharField(max_length=255)
    format = models.CharField(max_length=16, choices=Format.choices)
    sha256 = models.CharField(max_length=64)
    size = models.PositiveBigIntegerField()
    path = models.CharField(max_length=300, help_text="the file, relative to the data directory")
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.PENDING)
    reason = models.TextField(blank=True, help_text="why reading it failed")
    pages = models.PositiveIntegerField(default=0)
    characters = models.PositiveIntegerField(default=0)
    page_texts = models.JSONField(default=list, blank=True, help_text="the text of each page, in order")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    history = HistoricalRecords(excluded_fields=["page_texts"])
    objects = DocumentQuerySet.as_manager()

    class Meta:
        verbose_name = _("document")
        verbose_name_plural = _("documents")
        ordering = ["-created_at", "-id"]
        indexes = [
            GinIndex(fields=["acl"], name="documents_document_acl_gin"),
            models.Index(fields=["tenant", "sha256"], name="documents_document_hash"),
            models.Index(
                fields=["status", "id"], condition=Q(status="pending"), name="documents_document_pending"
            ),
        ]
        constraints = [
            # The same file twice in one scope is one document.
            models.UniqueConstraint(
                fields=["tenant", "scope", "scope_key", "sha256"],
                name="%(app_label)s_%(class)s_unique_in_scope",
            ),
            *scope_constraints(),  # a document's acl is its scope's key, as a memory's
        ]

    def __str__(self) -> str:
        return f"#{self.pk} {self.filename}"
