"""Tenancy, access groups and agent keys: the one access mechanism of Almanac."""

from __future__ import annotations

import hashlib

from django.conf import settings
from django.db import models
from django.db.models.functions import Now
from django.utils.text import slugify
from django.utils.translation import gettext_lazy as _


def key_part(name: str) -> str:
    """The stable, unicode-preserving part of a group key made from a display name."""
    return slugify(name, allow_unicode=True) or name.strip().lower()


class Tenant(models.Model):
    slug = models.SlugField(max_length=64, unique=True)
    name = models.CharField(max_length=200)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name = _("tenant")
        verbose_name_plural = _("tenants")

    def __str__(self) -> str:
        return self.slug

    @property
    def group_key(self) -> str:
        return f"tenant:{self.slug}"


class Department(models.Model):
    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="departments")
    name = models.CharField(max_length=200)
    key = models.CharField(max_length=200)

    class Meta:
        verbose_name = _("department")
        verbose_name_plural = _("departments")
        constraints = [
            models.UniqueConstraint(fields=["tenant", "key"], name="%(app_label)s_%(class)s_unique_key"),
        ]

    def __str__(self) -> str:
        return self.name

    @property
    def group_key(self) -> str:
        return f"dept:{self.key}"


class Project(models.Model):
    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="projects")
    name = models.CharField(max_length=200)
    key = models.CharField(max_length=200)

    class Meta:
        verbose_name = _("project")
        verbose_name_plural = _("projects")
        constraints = [
            models.UniqueConstraint(fields=["tenant", "key"], name="%(app_label)s_%(class)s_unique_key"),
        ]

    def __str__(self) -> str:
        return self.name

    @property
    def group_key(self) -> str:
        return f"project:{self.key}"


class UserProfile(models.Model):
    """A person of one tenant. `username` is their name in that tenant (what agents send as
    `user`, what they log in with); `auth.User.username` is the installation-wide handle,
    the name itself or `<tenant>:<name>` when another tenant has that name too
    (`almanac.services.users.user_handle`)."""

    user = models.OneToOneField(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="profile")
    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="profiles")
    username = models.CharField(
        "name in tenant", max_length=150, help_text="the name in the tenant (unique there)"
    )
    departments = models.ManyToManyField(Department, blank=True, related_name="members")
    projects = models.ManyToManyField(Project, blank=True, related_name="members")
    title = models.CharField(max_length=200, blank=True)
    display_name = models.CharField(max_length=200, blank=True)

    class Meta:
        verbose_name = _("user profile")
        verbose_name_plural = _("user profiles")
        constraints = [
            models.UniqueConstraint(
                fields=["tenant", "username"], name="%(app_label)s_%(class)s_unique_username"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.username}@{self.tenant.slug}"


class AccessGroup(models.Model):
    class Kind(models.TextChoices):
        TENANT = "tenant"
        DEPARTMENT = "dept"
        PROJECT = "project"
        USER = "user"
        SOURCE = "source"  # slack:channel:..., email:thread:..., github:repo:..., calendar:event:...

    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="access_groups")
    key = models.CharField(max_length=300)
    kind = models.CharField(max_length=16, choices=Kind.choices)
    name = models.CharField(max_length=300, blank=True)
    builtin = models.BooleanField(default=False)
    # A source container's visibility as its newest observation says (an event's
    # `container.public`, dated like its member list): its sections' ACLs follow it.
    public = models.BooleanField(null=True, blank=True, help_text="source container: readable tenant-wide")
    public_at = models.DateTimeField(null=True, blank=True, help_text="when `public` was last observed")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name = _("access group")
        verbose_name_plural = _("access groups")
        constraints = [
            models.UniqueConstraint(fields=["tenant", "key"], name="%(app_label)s_%(class)s_unique_key"),
        ]

    def __str__(self) -> str:
        return self.key


class GroupMembership(models.Model):
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="group_memberships"
    )
    group = models.ForeignKey(AccessGroup, on_delete=models.CASCADE, related_name="memberships")
    origin = models.CharField(
        max_length=64, default="builtin", help_text="builtin, admin, or a connector source"
    )
    confirmed_at = models.DateTimeField(auto_now=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name = _("group membership")
        verbose_name_plural = _("group memberships")
        constraints = [
            models.UniqueConstraint(fields=["user", "group"], name="%(app_label)s_%(class)s_unique_member"),
        ]

    def __str__(self) -> str:
        # Names, not ids: the admin's messages and delete pages show this.
        return f"{self.user} in {self.group}"


def rate_limit_validate(value: str) -> None:
    from django.core.exceptions import ValidationError

    from almanac.throttling import rate_parse

    try:
        rate_parse(value)
    except ValueError as exc:
        raise ValidationError(str(exc)) from exc


class AgentKey(models.Model):
    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="agent_keys")
    name = models.CharField(max_length=200)
    prefix = models.CharField(max_length=16)
    hashed_secret = models.CharField(max_length=64, unique=True)
    can_act_for_users = models.BooleanField(default=True)
    can_push_events = models.BooleanField(default=False)
    rate_limit = models.CharField(
        max_length=20,
        blank=True,
        help_text='requests per period, e.g. "600/m" or "50/s"; empty: the API_RATE_LIMIT setting; "0": none',
        validators=[rate_limit_validate],
    )
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        verbose_name = _("agent key")
        verbose_name_plural = _("agent keys")
        constraints = [
            models.UniqueConstraint(
                fields=["tenant", "name"],
                condition=models.Q(revoked_at__isnull=True),
                name="%(app_label)s_%(class)s_unique_active_name",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.name} ({self.prefix}…)"

    @staticmethod
    def hash_secret(raw: str) -> str:
        # Keys are 256-bit random strings, so a fast hash is safe and lets us look them up by hash.
        return hashlib.sha256(raw.encode()).hexdigest()

    @property
    def is_active(self) -> bool:
        return self.revoked_at is None


class TermStat(models.Model):
    """Document frequency of one keyword term in one tenant's corpus (BM25's IDF)."""

    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="+")
    corpus = models.CharField(max_length=32)
    term = models.CharField(max_length=200)
    df = models.IntegerField(default=0)

    class Meta:
        verbose_name = _("term statistic")
        verbose_name_plural = _("term statistics")
        constraints = [
            models.UniqueConstraint(
                fields=["tenant", "corpus", "term"], name="%(app_label)s_%(class)s_unique_term"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.corpus}:{self.term} df={self.df}"


class CorpusStat(models.Model):
    """Document count and total length of one tenant's corpus (BM25's length normalisation)."""

    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="+")
    corpus = models.CharField(max_length=32)
    docs = models.BigIntegerField(default=0)
    total_len = models.BigIntegerField(default=0)

    class Meta:
        verbose_name = _("corpus statistic")
        verbose_name_plural = _("corpus statistics")
        constraints = [
            models.UniqueConstraint(
                fields=["tenant", "corpus"], name="%(app_label)s_%(class)s_unique_corpus"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.corpus}: {self.docs} docs"


class AuditEvent(models.Model):
    """Append-only, hash-chained log of governance-relevant actions.

    Enforced in the database, not by convention (docs/operations.md, "Audit log"):
    - the app connects as a role with INSERT and SELECT only on this table (no UPDATE,
      DELETE, TRUNCATE, no ownership, so no ALTER/DROP/DISABLE TRIGGER);
    - a trigger (migration `audit_append_only`) refuses UPDATE and DELETE even to the owner;
    - a trigger owned by the owner role (migration `audit_chain`) stamps every insert, under
      a per-chain lock: `seq` (1, 2, ... per tenant; NULL tenant: one global chain),
      `created_at` (the database clock: no back-dating), `prev_digest` (the chain head) and
      `digest` = sha256 of the row and `prev_digest`. Whatever the app sends for them is
      overwritten; `manage.py audit_verify` walks the chains.
    """

    tenant = models.ForeignKey(
        Tenant, null=True, on_delete=models.DO_NOTHING, db_constraint=False, related_name="+"
    )
    actor = models.CharField(max_length=200, blank=True, help_text="username, agent key name or job")
    action = models.CharField(max_length=64)
    object_type = models.CharField(max_length=64, blank=True)
    object_id = models.CharField(max_length=64, blank=True)
    detail = models.JSONField(default=dict, blank=True)
    # Set by the chain trigger; db_default makes Django read them back (INSERT ... RETURNING).
    created_at = models.DateTimeField(db_default=Now())
    seq = models.BigIntegerField(db_default=0, editable=False, help_text="position in its tenant's chain")
    prev_digest = models.CharField(max_length=64, db_default="", editable=False)
    digest = models.CharField(max_length=64, db_default="", editable=False)

    class Meta:
        verbose_name = _("audit event")
        verbose_name_plural = _("audit events")
        indexes = [models.Index(fields=["tenant", "-created_at"], name="almanac_audit_recent_idx")]
        constraints = [
            # One row per position of a chain; also the index the trigger reads the head from.
            models.UniqueConstraint(
                fields=["tenant", "seq"], nulls_distinct=False, name="%(app_label)s_%(class)s_chain_seq"
            )
        ]

    def __str__(self) -> str:
        return (
            f"{self.created_at:%Y-%m-%d %H:%M} {self.actor} {self.action} {self.object_type}:{self.object_id}"
        )


class QueuedTask(models.Model):
    """A background task waiting in the queue or running, by what it does (`almanac.queue`):
    the same work asked for meanwhile is not enqueued again; a running task runs once more."""

    key = models.CharField(max_length=200, primary_key=True, help_text="the task's function and arguments")
    queued_at = models.DateTimeField()
    running = models.BooleanField(default=False)
    again = models.BooleanField(default=False, help_text="asked for while it ran: it runs once more")

    class Meta:
        verbose_name = _("queued task")
        verbose_name_plural = _("queued tasks")

    def __str__(self) -> str:
        return self.key


class AdminScope(models.Model):
    """A department admin (docs/operations.md, Roles): a staff user who governs the memories,
    users, sources and audit entries of these departments and projects only. Staff without
    one govern their whole tenant; superusers everything."""

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="admin_scope", verbose_name=_("user")
    )
    departments = models.ManyToManyField(
        Department, blank=True, related_name="admins", verbose_name=_("departments")
    )
    projects = models.ManyToManyField(Project, blank=True, related_name="admins", verbose_name=_("projects"))

    class Meta:
        verbose_name = _("department admin")
        verbose_name_plural = _("department admins")

    def __str__(self) -> str:
        return str(self.user)
