"""Memories (episodic/semantic/working), their links and feedback, and conversation sessions."""

from __future__ import annotations

from django.conf import settings
from django.contrib.postgres.fields import ArrayField
from django.contrib.postgres.indexes import GinIndex
from django.contrib.postgres.search import SearchVectorField
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy as _
from pgvector.django import HnswIndex, VectorField
from simple_history.models import HistoricalRecords

from almanac.embedding_columns import EmbeddingField
from almanac.models import Tenant
from almanac.search import keyword
from memories.querysets import ACL_KEY_PREFIXES, MemoryQuerySet, SessionQuerySet

CORPUS = "memory"


def scope_constraints() -> list[models.CheckConstraint]:
    """The checks of a row kept in one scope (a memory, a document): a known scope, and an
    `acl` that is that scope's one key, of a kind the access filter sends a reader
    (ACL_KEY_PREFIXES)."""
    return [
        models.CheckConstraint(
            condition=Q(scope__in=["user", "dept", "project", "tenant"]),
            name="%(app_label)s_%(class)s_scope_valid",
        ),
        models.CheckConstraint(
            condition=Q(acl__len=1)
            & Q(acl__0__regex="^(" + "|".join(p.rstrip(":") for p in ACL_KEY_PREFIXES) + "):"),
            name="%(app_label)s_%(class)s_acl_is_scope_key",
        ),
    ]


class Memory(models.Model):
    class Scope(models.TextChoices):
        USER = "user"
        DEPT = "dept"
        PROJECT = "project"
        TENANT = "tenant"

    class Type(models.TextChoices):
        WORKING = "working"
        EPISODIC = "episodic"
        SEMANTIC = "semantic"

    class Status(models.TextChoices):
        ACTIVE = "active"
        COMPRESSED = "compressed"
        ARCHIVED = "archived"
        # A newer memory of the same scope states another value for the same thing
        # (`superseded_by`); left out of recall and context, restorable.
        SUPERSEDED = "superseded"

    class Kind(models.TextChoices):
        FACT = "fact"
        PREFERENCE = "preference"
        DECISION = "decision"
        EVENT = "event"
        CLAUSE = "clause"
        SUMMARY = "summary"

    # 2: `kind` and `fact_key` are filled (memories.versions upgrades older rows on read,
    # and `memory_upgrade_task` rewrites them).
    SCHEMA_VERSION = 2

    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="memories")
    # NULL once its author is deleted: what they shared stays for their colleagues (their
    # private scope is deleted with them: memories.services.users).
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="memories"
    )
    scope = models.CharField(max_length=16, choices=Scope.choices, default=Scope.USER)
    scope_key = models.CharField(max_length=200, help_text="username, department/project key or tenant slug")
    memory_type = models.CharField(max_length=16, choices=Type.choices, default=Type.SEMANTIC)
    content = models.TextField()
    embedding = EmbeddingField()
    # The second encoder's vector (almanac.search.second; SEARCH_SECOND_ENCODER): NULL until
    # a task after the write, or `reembed --second`, fills it.
    embedding_e5 = VectorField(dimensions=384, null=True, blank=True, editable=False)
    # Keyword index (almanac.search.keyword, corpus "memory").
    tokens = models.TextField(blank=True, default="")
    tf = models.JSONField(default=dict, blank=True)
    doc_len = models.IntegerField(default=0)
    search_vector = models.GeneratedField(
        expression=keyword.tsvector_expression(), output_field=SearchVectorField(), db_persist=True
    )
    importance = models.FloatField(default=0.5)
    access_count = models.PositiveIntegerField(default=0)
    last_access = models.DateTimeField(null=True, blank=True)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.ACTIVE)
    kind = models.CharField(max_length=16, choices=Kind.choices, default=Kind.FACT)
    # What it states a value of: subject + attribute, normalized (almanac.text.claims); "" when
    # it states no one value. A newer memory of the scope with the same key and another
    # value supersedes it.
    fact_key = models.CharField(max_length=200, blank=True, default="")
    superseded_by = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.SET_NULL, related_name="supersedes"
    )
    quality = models.FloatField(default=1.0)
    # Kept private because it names a unit or the company its speaker may not write for
    # (memories.services.attribution; the reason in meta["review"]): for a governor to look at.
    needs_review = models.BooleanField(default=False)
    schema_version = models.PositiveSmallIntegerField(default=SCHEMA_VERSION)
    occurred_at = models.DateField(null=True, blank=True, help_text="for episodic memories: when it happened")
    meta = models.JSONField(default=dict, blank=True, help_text="source session, document, tags")
    acl = ArrayField(models.CharField(max_length=300), help_text="access-group keys, derived from the scope")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    history = HistoricalRecords(
        excluded_fields=["embedding", "embedding_e5", "search_vector", "tokens", "tf", "doc_len"]
    )
    objects = MemoryQuerySet.as_manager()

    class Meta:
        verbose_name = _("memory")
        verbose_name_plural = _("memories")
        indexes = [
            HnswIndex(
                name="memories_memory_embedding_hnsw",
                fields=["embedding"],
                m=16,
                ef_construction=64,
                opclasses=["vector_cosine_ops"],
            ),
            HnswIndex(
                name="memories_memory_e5_hnsw",
                fields=["embedding_e5"],
                m=16,
                ef_construction=64,
                opclasses=["vector_cosine_ops"],
            ),
            # One GIN over both: a keyword lane (`acl && keys AND search_vector @@ query`)
            # intersects the two inside one index scan and bitmaps only the rows that pass
            # both, instead of building a bitmap of every row with the term and one of every
            # row the reader may see (measured: a lane for a term in 9% of the memories
            # 8.6 -> 1.9 ms). Either condition alone uses it as well as its own index would.
            # fastupdate off: with a pending list, every keyword lane scans all entries not yet
            # merged (measured: 4,000 new memories took a lane from 6.0 to 10.4-11.5 ms of
            # database CPU); inserting into the index at once costs a write ~7% more.
            GinIndex(
                fields=["acl", "search_vector"], name="memories_memory_acl_search_gin", fastupdate=False
            ),
            models.Index(fields=["tenant", "status", "memory_type"], name="memories_memory_tenant_status"),
            models.Index(fields=["owner", "-created_at"], name="memories_memory_owner_created"),
            # The supersede lookup on every write: active rows of a tenant with this key.
            models.Index(
                fields=["tenant", "fact_key"],
                condition=Q(status="active") & ~Q(fact_key=""),
                name="memories_memory_active_key",
            ),
            # The review queue (admin filter "needs review").
            models.Index(
                fields=["tenant", "created_at"],
                condition=Q(needs_review=True),
                name="memories_memory_needs_review",
            ),
            # The upgrade job's batches.
            models.Index(fields=["schema_version", "id"], name="memories_memory_schema_version"),
            # No index on access_count/last_access: recall bumps them, and an update that
            # touches no indexed column can be HOT (no new HNSW/GIN entries per hit) when its
            # heap page has room: the table's fillfactor is 80 (migration 0006).
        ]
        constraints = [
            models.CheckConstraint(
                condition=Q(importance__gte=0) & Q(importance__lte=1),
                name="%(app_label)s_%(class)s_importance_range",
            ),
            models.CheckConstraint(
                condition=Q(quality__gte=0.2) & Q(quality__lte=2.0),
                name="%(app_label)s_%(class)s_quality_range",
            ),
            models.CheckConstraint(
                condition=Q(memory_type__in=["working", "episodic", "semantic"]),
                name="%(app_label)s_%(class)s_type_valid",
            ),
            models.CheckConstraint(
                condition=Q(status__in=["active", "compressed", "archived", "superseded"]),
                name="%(app_label)s_%(class)s_status_valid",
            ),
            models.CheckConstraint(
                condition=Q(kind__in=["fact", "preference", "decision", "event", "clause", "summary"]),
                name="%(app_label)s_%(class)s_kind_valid",
            ),
            # Only a superseded memory points to its successor.
            models.CheckConstraint(
                condition=Q(superseded_by__isnull=True) | Q(status="superseded"),
                name="%(app_label)s_%(class)s_superseded_by_status",
            ),
            models.CheckConstraint(condition=~Q(acl=[]), name="%(app_label)s_%(class)s_acl_not_empty"),
            *scope_constraints(),
        ]

    def __str__(self) -> str:
        return f"#{self.pk} {self.content[:60]}"

    @classmethod
    def from_db(cls, db, field_names, values):
        """Every read serves the current schema: an older row is upgraded in memory
        (`memories.versions.upgrade`; the row itself is rewritten by `memory_upgrade_task`)."""
        memory = super().from_db(db, field_names, values)
        if memory.__dict__.get("schema_version", cls.SCHEMA_VERSION) < cls.SCHEMA_VERSION:
            from memories.versions import upgrade

            upgrade(memory)
        return memory

    @staticmethod
    def acl_key(scope: str, scope_key: str) -> str:
        return {"user": "user", "dept": "dept", "project": "project", "tenant": "tenant"}[
            scope
        ] + f":{scope_key}"


class MemoryLink(models.Model):
    """Provenance between memories: a duplicate merged into another, originals of a summary."""

    class Kind(models.TextChoices):
        DUPLICATE_OF = "duplicate_of"
        COMPRESSED_INTO = "compressed_into"
        DERIVED_FROM = "derived_from"

    source = models.ForeignKey(Memory, on_delete=models.CASCADE, related_name="links_out")
    target = models.ForeignKey(Memory, on_delete=models.CASCADE, related_name="links_in")
    kind = models.CharField(max_length=32, choices=Kind.choices)
    meta = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name = _("memory link")
        verbose_name_plural = _("memory links")
        constraints = [
            models.UniqueConstraint(
                fields=["source", "target", "kind"], name="%(app_label)s_%(class)s_unique_link"
            ),
            models.CheckConstraint(
                condition=~Q(source=models.F("target")), name="%(app_label)s_%(class)s_not_self"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.source_id} {self.kind} {self.target_id}"


class Feedback(models.Model):
    class Signal(models.TextChoices):
        ADOPTED = "adopted"
        IGNORED = "ignored"
        CORRECTED = "corrected"

    memory = models.ForeignKey(Memory, on_delete=models.CASCADE, related_name="feedback")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memory_feedback"
    )
    signal = models.CharField(max_length=16, choices=Signal.choices)
    quality_before = models.FloatField()
    quality_after = models.FloatField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name = _("feedback")
        verbose_name_plural = _("feedback")
        indexes = [models.Index(fields=["memory", "-created_at"], name="memories_feedback_memory")]
        constraints = [
            models.CheckConstraint(
                condition=Q(signal__in=["adopted", "ignored", "corrected"]),
                name="%(app_label)s_%(class)s_signal_valid",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.signal} on {self.memory_id}"


class ConversationSession(models.Model):
    class Status(models.TextChoices):
        OPEN = "open"
        ENDED = "ended"

    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="conversation_sessions")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="conversation_sessions"
    )
    title = models.CharField(max_length=300, blank=True)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.OPEN)
    turn_count = models.PositiveIntegerField(default=0, help_text="turns added (summaries not counted)")
    started_at = models.DateTimeField(auto_now_add=True)
    ended_at = models.DateTimeField(null=True, blank=True)
    extracted_at = models.DateTimeField(null=True, blank=True, help_text="when memory extraction finished")
    meta = models.JSONField(default=dict, blank=True)

    objects = SessionQuerySet.as_manager()

    class Meta:
        verbose_name = _("conversation session")
        verbose_name_plural = _("conversation sessions")
        indexes = [models.Index(fields=["user", "-started_at"], name="memories_session_user_started")]
        constraints = [
            models.CheckConstraint(
                condition=Q(status__in=["open", "ended"]), name="%(app_label)s_%(class)s_status_valid"
            ),
        ]

    def __str__(self) -> str:
        return f"session {self.pk} of {self.user_id}"


class Turn(models.Model):
    class Role(models.TextChoices):
        USER = "user"
        ASSISTANT = "assistant"
        TOOL = "tool"
        SUMMARY = "summary"

    session = models.ForeignKey(ConversationSession, on_delete=models.CASCADE, related_name="turns")
    order = models.PositiveIntegerField()
    role = models.CharField(max_length=16, choices=Role.choices)
    content = models.TextField()
    tokens = models.PositiveIntegerField(default=0)
    folded = models.BooleanField(default=False, help_text="folded into a (later) summary turn")
    meta = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name = _("turn")
        verbose_name_plural = _("turns")
        ordering = ["session", "order"]
        indexes = [
            models.Index(
                fields=["session", "order"], condition=Q(folded=False), name="memories_turn_unfolded"
            ),
        ]
        constraints = [
            models.UniqueConstraint(fields=["session", "order"], name="%(app_label)s_%(class)s_unique_order"),
            models.CheckConstraint(
                condition=Q(role__in=["user", "assistant", "tool", "summary"]),
                name="%(app_label)s_%(class)s_role_valid",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.session_id}#{self.order} {self.role}"


class SessionChunk(models.Model):
    """One chunk of an ended session that the extraction task has handled (its idempotency record)."""

    class Outcome(models.TextChoices):
        EXTRACTED = "extracted"
        COVERED = "covered"  # already known: cosine > threshold to an existing memory

    session = models.ForeignKey(ConversationSession, on_delete=models.CASCADE, related_name="chunks")
    digest = models.CharField(max_length=64)
    position = models.PositiveIntegerField()
    outcome = models.CharField(max_length=16, choices=Outcome.choices)
    facts = models.PositiveIntegerField(default=0)
    memories_written = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name = _("session chunk")
        verbose_name_plural = _("session chunks")
        constraints = [
            models.UniqueConstraint(
                fields=["session", "digest"], name="%(app_label)s_%(class)s_unique_digest"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.session_id}:{self.position} {self.outcome}"


class MemoryAuditText(models.Model):
    """The before/after text of one memory audit event.

    The event (`almanac.AuditEvent`, append-only: a trigger refuses UPDATE) carries only
    their sha256 digests; the text lives here so that a purge can take it back out
    (`memory_purge` sets it to "[purged]"), while the digests keep proving what changed.
    """

    event = models.OneToOneField(
        "almanac.AuditEvent", on_delete=models.DO_NOTHING, db_constraint=False, related_name="+"
    )
    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="+")
    # Not a foreign key: the text outlives the memory (a delete is audited too).
    memory_id = models.BigIntegerField()
    before = models.TextField(blank=True, default="")
    after = models.TextField(blank=True, default="")

    class Meta:
        verbose_name = _("memory audit text")
        verbose_name_plural = _("memory audit texts")
        indexes = [models.Index(fields=["tenant", "memory_id"], name="memories_audittext_memory")]

    def __str__(self) -> str:
        return f"audit {self.event_id} of memory {self.memory_id}"


class RecallWindow(models.Model):
    """A memory's recall hits in its current window (`memory.hot`): counted with the hits,
    off the request path (`memories.services.touches`). Windows are MEMORY_HOT_WINDOW_SECONDS
    long, back to back; a new one starts the count again."""

    memory = models.OneToOneField(Memory, primary_key=True, on_delete=models.CASCADE, related_name="+")
    window_start = models.DateTimeField()
    recalls = models.PositiveIntegerField(default=0)

    class Meta:
        verbose_name = _("recall window")
        verbose_name_plural = _("recall windows")

    def __str__(self) -> str:
        return f"memory {self.memory_id}: {self.recalls} since {self.window_start}"


class LifecycleSettings(models.Model):
    """A tenant's decay and compression thresholds (docs/operations.md, Memory lifecycle);
    an empty field takes the environment's value (`memories.services.lifecycle`)."""

    tenant = models.OneToOneField(
        Tenant, on_delete=models.CASCADE, related_name="memory_lifecycle", verbose_name=_("tenant")
    )
    decay_after_days = models.PositiveIntegerField(
        _("decay after days"),
        null=True,
        blank=True,
        validators=[MinValueValidator(1)],
        help_text=_("archive memories not recalled for this many days (empty: MEMORY_DECAY_AFTER_DAYS)"),
    )
    decay_below_importance = models.FloatField(
        _("decay below importance"),
        null=True,
        blank=True,
        validators=[MinValueValidator(0.0), MaxValueValidator(1.0)],
        help_text=_("…whose importance is below this (empty: MEMORY_DECAY_BELOW_IMPORTANCE)"),
    )
    compress_min = models.PositiveIntegerField(
        _("compress topics above"),
        null=True,
        blank=True,
        validators=[MinValueValidator(1)],
        help_text=_("compress a topic of more memories than this (empty: MEMORY_COMPRESS_MIN)"),
    )
    compressed_keep_days = models.PositiveIntegerField(
        _("keep compressed originals days"),
        null=True,
        blank=True,
        help_text=_("compressed originals stay restorable this long (empty: MEMORY_COMPRESSED_KEEP_DAYS)"),
    )
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        verbose_name = _("memory lifecycle")
        verbose_name_plural = _("memory lifecycle")

    def __str__(self) -> str:
        return str(self.tenant)
