"""Sources, their sync state, identities, and the append-only event inbox."""

from __future__ import annotations

import hashlib
import json

from django.conf import settings
from django.contrib.postgres.fields import ArrayField
from django.core.exceptions import ValidationError
from django.db import models
from django.utils.translation import gettext_lazy as _

from almanac.models import AccessGroup, Department, Project, Tenant

# A source's name is the `origin` of the memberships it grants; these origins are taken
# (almanac.services.BUILTIN, and grants made by hand), and a source called so could grant
# access that nothing revokes.
RESERVED_SOURCE_NAMES = frozenset({"builtin", "admin"})


def validate_source_name(value: str) -> None:
    if value.lower() in RESERVED_SOURCE_NAMES:
        raise ValidationError(f"'{value}' is reserved and cannot name a source")


class Source(models.Model):
    class Kind(models.TextChoices):
        SLACK = "slack"
        EMAIL = "email"
        CALENDAR = "calendar"
        NOTES = "notes"
        GITHUB = "github"
        PUSH = "push"  # events pushed through the API under an arbitrary source name

    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="sources")
    kind = models.CharField(max_length=16, choices=Kind.choices)
    name = models.CharField(
        max_length=100,
        validators=[validate_source_name],
        help_text="the `source` field of events, e.g. slack",
    )
    config = models.JSONField(
        default=dict, blank=True, help_text="non-secret settings: URLs, channels, folders"
    )
    credentials = models.TextField(
        blank=True,
        help_text="encrypted with CONNECTOR_SECRET_KEY, or env:VAR_NAME to read it from the environment",
    )
    enabled = models.BooleanField(default=True)
    poll_minutes = models.PositiveIntegerField(default=5)
    # Whose department admins govern it (docs/operations.md, Roles); tenant admins govern all.
    departments = models.ManyToManyField(
        Department,
        blank=True,
        related_name="sources",
        verbose_name=_("departments"),
        help_text=_("their department admins govern this source"),
    )
    projects = models.ManyToManyField(
        Project,
        blank=True,
        related_name="sources",
        verbose_name=_("projects"),
        help_text=_("their project admins govern this source"),
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name = _("source")
        verbose_name_plural = _("sources")
        constraints = [
            models.UniqueConstraint(fields=["tenant", "name"], name="%(app_label)s_%(class)s_unique_name"),
        ]

    def __str__(self) -> str:
        return f"{self.tenant.slug}/{self.name}"


class SyncCursor(models.Model):
    source = models.OneToOneField(Source, on_delete=models.CASCADE, related_name="cursor")
    cursor = models.JSONField(default=dict, blank=True)
    last_attempt_at = models.DateTimeField(null=True, blank=True)
    last_success_at = models.DateTimeField(null=True, blank=True)
    backoff_until = models.DateTimeField(null=True, blank=True)
    consecutive_failures = models.PositiveIntegerField(default=0)
    last_error = models.TextField(blank=True)

    class Meta:
        verbose_name = _("sync cursor")
        verbose_name_plural = _("sync cursors")

    def __str__(self) -> str:
        return f"cursor of {self.source}"


class ExternalIdentity(models.Model):
    """A handle of a person in a source (Slack user id, e-mail address, GitHub login)."""

    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="external_identities")
    source_kind = models.CharField(max_length=16)
    handle = models.CharField(max_length=300)
    display_name = models.CharField(max_length=300, blank=True)
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="external_identities",
    )

    class Meta:
        verbose_name = _("external identity")
        verbose_name_plural = _("external identities")
        constraints = [
            models.UniqueConstraint(
                fields=["tenant", "source_kind", "handle"], name="%(app_label)s_%(class)s_unique_handle"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.source_kind}:{self.handle}"


class Event(models.Model):
    """One normalized event (docs/api.md, Connectors). Append-only; compiled into the wiki."""

    class Kind(models.TextChoices):
        MESSAGE = "message"
        MESSAGE_CHANGED = "message_changed"
        MESSAGE_DELETED = "message_deleted"
        EMAIL = "email"
        EMAIL_RECALLED = "email_recalled"
        CALENDAR_EVENT = "calendar_event"
        MEETING_NOTE = "meeting_note"
        ISSUE = "issue"
        ISSUE_CLOSED = "issue_closed"
        PULL_REQUEST = "pull_request"
        MEMBERSHIP_ADDED = "membership_added"
        MEMBERSHIP_REMOVED = "membership_removed"

    class State(models.TextChoices):
        PENDING = "pending"
        COMPILED = "compiled"
        FAILED = "failed"

    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="events")
    source = models.ForeignKey(Source, on_delete=models.CASCADE, related_name="events")
    external_id = models.CharField(max_length=500)
    version = models.PositiveIntegerField(default=1)
    kind = models.CharField(max_length=32, choices=Kind.choices)
    occurred_at = models.DateTimeField()
    container_key = models.CharField(max_length=300)
    container_name = models.CharField(max_length=300, blank=True)
    container_members = ArrayField(models.CharField(max_length=300), null=True, blank=True)
    container_public = models.BooleanField(default=False)
    thread_key = models.CharField(max_length=500, blank=True)
    author = models.CharField(max_length=300, blank=True)
    title = models.CharField(max_length=500, blank=True)
    text = models.TextField(blank=True)
    tags = models.JSONField(default=dict, blank=True)
    url = models.CharField(max_length=1000, blank=True)
    raw = models.JSONField(default=dict, blank=True)
    digest = models.CharField(
        max_length=32, blank=True, editable=False, help_text="of the content, see Event.content_digest"
    )
    received_at = models.DateTimeField(auto_now_add=True)
    state = models.CharField(max_length=16, choices=State.choices, default=State.PENDING)
    compiled_at = models.DateTimeField(null=True, blank=True)
    error = models.TextField(blank=True)

    class Meta:
        verbose_name = _("event")
        verbose_name_plural = _("events")
        constraints = [
            models.UniqueConstraint(
                fields=["source", "external_id", "version"], name="%(app_label)s_%(class)s_unique_version"
            ),
        ]
        indexes = [
            models.Index(fields=["source", "external_id"], name="connectors_event_item_idx"),
            models.Index(
                fields=["received_at"],
                condition=models.Q(state="pending"),
                name="connectors_event_pending_idx",
            ),
            models.Index(fields=["tenant", "thread_key"], name="connectors_event_thread_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.source.name}:{self.external_id}@{self.version} ({self.kind})"

    def content_digest(self) -> str:
        """What a redelivery must repeat to be a duplicate: the kind and the content, not the
        container (its members are applied, never stored as news), nor `raw` (Slack's reply
        counters and reactions change on every read), nor the time (a version is a time), nor
        the author: an item's author never changes, but how a path names them does (the Slack
        Events API knows a guest only by user id, the poller by the e-mail of users.list), and
        a re-read must not become a version. Rows stored before digests existed have none and
        compare equal to anything (`_version_for`), so changing this needs no migration."""
        parts = [self.kind, self.title, self.text, self.tags, self.url, self.thread_key]
        data = json.dumps(parts, sort_keys=True, default=str)
        return hashlib.sha256(data.encode()).hexdigest()[:32]


class MembershipClock(models.Model):
    """The event time of the latest membership information applied to a source's access
    group (last write by event time wins): `user` empty, the latest full member list that
    `origin` sent for the group; `user` set, the latest membership_added/removed of that
    person (a removal's clock is its tombstone: an older join cannot bring them back)."""

    group = models.ForeignKey(AccessGroup, on_delete=models.CASCADE, related_name="membership_clocks")
    origin = models.CharField(max_length=64)
    user = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.CASCADE)
    at = models.DateTimeField()
    members_digest = models.CharField(max_length=32, blank=True, help_text="of the member list applied")

    class Meta:
        verbose_name = _("membership clock")
        verbose_name_plural = _("membership clocks")
        constraints = [
            models.UniqueConstraint(
                fields=["group", "origin", "user"],
                nulls_distinct=False,
                name="%(app_label)s_%(class)s_unique_clock",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.group_id}/{self.origin}/{self.user_id or '*'} @ {self.at:%Y-%m-%d %H:%M:%S}"
