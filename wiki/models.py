"""The company wiki: entities, their pages, and page sections with provenance and ACL.

A page is the set of its sections. Each section comes from one thread of one source
container and carries that container's ACL, so a reader sees only the sections they may
see (section-level security) — `PageSection.objects.visible_to(user)` is the one filter
every read path uses.
"""

from __future__ import annotations

import hashlib

from django.conf import settings
from django.contrib.postgres.fields import ArrayField
from django.contrib.postgres.indexes import GinIndex
from django.contrib.postgres.search import SearchVectorField
from django.db import models
from django.utils.translation import gettext_lazy as _
from pgvector.django import HnswIndex
from simple_history.models import HistoricalRecords

from almanac.embedding_columns import EmbeddingField
from almanac.models import Tenant
from almanac.search import keyword


class Entity(models.Model):
    class Kind(models.TextChoices):
        CUSTOMER = "customer"
        PROJECT = "project"
        PERSON = "person"
        TOPIC = "topic"

    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="wiki_entities")
    kind = models.CharField(max_length=16, choices=Kind.choices)
    name = models.CharField(max_length=300)
    key = models.CharField(max_length=300, help_text="folded name (case, width, legal suffixes)")
    aliases = ArrayField(models.CharField(max_length=300), default=list, blank=True)
    alias_keys = ArrayField(
        models.CharField(max_length=300), default=list, blank=True, help_text="folded name and aliases"
    )
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="wiki_entities",
    )
    # Where its name is known: `tenant:<slug>` once a public event, the directory or an admin
    # named it, else the private containers whose events' tags named it. Text elsewhere
    # matches it only where every reader may know the name (`name_known_to`).
    named_in = ArrayField(models.CharField(max_length=300), default=list, blank=True)

    class NameFrom(models.TextChoices):
        PERSON = "", "a person or the directory"
        PUBLIC = "public", "a tag where the whole tenant reads"
        PRIVATE = "private", "a tag in a private container"

    # Who spelled `name`, and for a tag its event time. A spelling from a public tag replaces
    # one from a private tag, and of public spellings of the same name the earliest wins (then
    # the first in code point order), whatever order the events arrive in
    # (`wiki.services.entities.entity_spelled`). A person's name is kept.
    name_from = models.CharField(max_length=8, choices=NameFrom.choices, blank=True, default="")
    name_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        verbose_name = _("entity")
        verbose_name_plural = _("entities")
        constraints = [
            models.UniqueConstraint(
                fields=["tenant", "kind", "key"], name="%(app_label)s_%(class)s_unique_key"
            ),
        ]
        indexes = [GinIndex(fields=["alias_keys"], name="wiki_entity_alias_keys_gin")]

    def __str__(self) -> str:
        return f"{self.kind}:{self.name}"

    def name_known_to(self, acl: list[str]) -> bool:
        """May every reader of a section with this `acl` know this entity's name? A public
        section's readers are the whole tenant; a private one's, its container's members."""
        tenant_keys = [key for key in acl if key.startswith("tenant:")]
        if tenant_keys:
            return any(key in self.named_in for key in tenant_keys)
        return any(key in self.named_in for key in acl) or any(k.startswith("tenant:") for k in self.named_in)


class Page(models.Model):
    class Status(models.TextChoices):
        ACTIVE = "active"
        OPEN = "open"
        CLOSED = "closed"

    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="wiki_pages")
    entity = models.OneToOneField(Entity, on_delete=models.CASCADE, related_name="page")
    slug = models.CharField(max_length=200)
    kind = models.CharField(max_length=16, choices=Entity.Kind.choices)
    title = models.CharField(max_length=300)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.ACTIVE)
    status_at = models.DateTimeField(null=True, blank=True, help_text="event time of the last status change")
    # The container whose issue set `status`: a reader sees the status only while they may
    # read a section of this page from that container (`wiki.status.page_status_for`).
    status_container = models.CharField(max_length=300, blank=True)
    # A status a person set (admin action "Mark status"): it wins over the facts until a later
    # fact changes the page's open work (an issue or PR opened, closed or reopened after it).
    status_manual = models.CharField(max_length=16, choices=Status.choices, blank=True)
    status_manual_at = models.DateTimeField(null=True, blank=True)
    status_manual_by = models.CharField(max_length=150, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    history = HistoricalRecords()

    class Meta:
        verbose_name = _("page")
        verbose_name_plural = _("pages")
        constraints = [
            models.UniqueConstraint(fields=["tenant", "slug"], name="%(app_label)s_%(class)s_unique_slug"),
        ]
        indexes = [models.Index(fields=["tenant", "kind"], name="wiki_page_kind_idx")]

    def __str__(self) -> str:
        return self.slug


class PageSectionQuerySet(models.QuerySet):
    def visible_to(self, user, *, include_stale: bool = False):
        """The shared access filter (`almanac.selectors.acl_visible`), minus stale sections.

        Keys are resolved on every call, so a membership removed a moment ago hides the
        section on the very next read. Fails closed.
        """
        from almanac.selectors import acl_visible

        qs = acl_visible(self, user)
        return qs if include_stale else qs.filter(stale=False)


def visible_sections_sql(user, *, table: str) -> tuple[str, list] | None:
    """`visible_to` as SQL over `table` (an alias of wiki_pagesection) for raw reads, or
    None when the user may see nothing: the shared predicate, minus stale sections."""
    from almanac.selectors import acl_sql

    predicate = acl_sql(user, table=table)
    if predicate is None:
        return None
    return f'({predicate[0]} AND NOT "{table}"."stale")', predicate[1]


class WorkKind(models.TextChoices):
    NONE = "", "none"
    ISSUE = "issue"
    PULL_REQUEST = "pull_request"


class PageSection(models.Model):
    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="+")
    page = models.ForeignKey(Page, on_delete=models.CASCADE, related_name="sections")
    thread_key = models.CharField(max_length=500)
    container_key = models.CharField(max_length=300)
    container_name = models.CharField(max_length=300, blank=True)
    title = models.CharField(max_length=500, blank=True)
    content = models.TextField()
    content_digest = models.CharField(max_length=64, blank=True)
    occurred_at = models.DateTimeField()
    acl = ArrayField(models.CharField(max_length=300), default=list)
    authors = ArrayField(models.CharField(max_length=300), default=list, blank=True)
    event_ids = ArrayField(models.BigIntegerField(), default=list, blank=True, help_text="provenance")
    source_list = models.JSONField(default=list, blank=True, help_text="[{source, url, occurred_at}]")
    stale = models.BooleanField(default=False)
    stale_reason = models.CharField(max_length=300, blank=True)
    recall_event_ids = ArrayField(models.BigIntegerField(), default=list, blank=True)
    confirmed_recall_ids = ArrayField(models.BigIntegerField(), default=list, blank=True)
    # Open work this section is about: its thread's issue or pull request ("" for none),
    # and whether that is open; a project's status is counted from these, per reader.
    work_kind = models.CharField(max_length=16, choices=WorkKind.choices, blank=True, default="")
    work_open = models.BooleanField(null=True, blank=True)
    embedding = EmbeddingField(null=True, blank=True)
    tokens = models.TextField(blank=True)
    tf = models.JSONField(default=dict, blank=True)
    doc_len = models.IntegerField(default=0)
    search_vector = models.GeneratedField(
        expression=keyword.tsvector_expression(), output_field=SearchVectorField(), db_persist=True
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    history = HistoricalRecords(excluded_fields=["embedding", "search_vector", "tokens", "tf", "doc_len"])

    objects = PageSectionQuerySet.as_manager()

    class Meta:
        verbose_name = _("page section")
        verbose_name_plural = _("page sections")
        constraints = [
            models.UniqueConstraint(
                fields=["page", "thread_key", "container_key"], name="%(app_label)s_%(class)s_unique_thread"
            ),
        ]
        indexes = [
            # One GIN over both, as for memories: a reader with few keys gets the keyword
            # lane's `acl && keys AND search_vector @@ query` from one index scan (a
            # reader with many keys is checked per row, almanac.selectors.GIN_MAX_KEYS).
            # fastupdate off, as for memories: no pending list for every keyword lane to scan
            # (3,000 new sections cost a lane ~1.2 ms of database CPU until merged).
            GinIndex(fields=["acl", "search_vector"], name="wiki_section_acl_search_gin", fastupdate=False),
            GinIndex(fields=["authors"], name="wiki_section_authors_gin"),
            HnswIndex(
                name="wiki_section_embedding_hnsw",
                fields=["embedding"],
                m=16,
                ef_construction=64,
                opclasses=["vector_cosine_ops"],
            ),
            models.Index(fields=["tenant", "thread_key"], name="wiki_section_thread_idx"),
            models.Index(
                fields=["tenant", "container_key", "occurred_at"], name="wiki_section_container_idx"
            ),
            models.Index(fields=["page", "occurred_at"], name="wiki_section_page_time_idx"),
            # "does any candidate page have a stale section?" on the context hot path
            models.Index(fields=["page"], condition=models.Q(stale=True), name="wiki_section_stale_idx"),
            # a page's open work, counted per reader (`wiki.status.page_work_counts`)
            models.Index(fields=["page"], condition=~models.Q(work_kind=""), name="wiki_section_work_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.page_id}/{self.thread_key}"

    @property
    def sources(self) -> list[dict]:
        """Where this section comes from: [{"source", "url", "occurred_at"}] (ISO times)."""
        return section_sources(self.source_list)


def section_sources(source_list) -> list[dict]:
    """A section's stored `source_list` as [{"source", "url", "occurred_at", "ref"}] (ISO times;
    `ref`: the item's id in its source — an e-mail's Message-ID, a Slack `channel/ts`, a
    calendar UID, a note's path, `owner/repo#n` — "" for sections compiled before it was kept)."""
    return [
        {
            "source": s.get("source", ""),
            "url": s.get("url", ""),
            "occurred_at": s.get("occurred_at"),
            "ref": s.get("ref", ""),
        }
        for s in source_list or []
    ]


def summary_key(sections) -> str:
    """What a page summary is made of, as one key: the ids of the sections, each with its
    version (text digest, last change) and its readers (ACL). Equal iff the same sections in
    the same versions with the same readers: two readers who see the same sections share it,
    a reader who sees one more or one fewer never does."""
    parts = [
        f"{s.id}:{s.content_digest}:{s.updated_at.timestamp():.6f}:{','.join(sorted(s.acl))}"
        for s in sorted(sections, key=lambda s: s.id)
    ]
    return hashlib.sha256("|".join(parts).encode()).hexdigest()


class PageSummary(models.Model):
    """The summary of one set of a page's sections: the set one or more readers see
    (`summary_key`). Made from those sections only, so it says nothing its readers cannot
    read; served only to a reader who sees exactly that set (`wiki.services.summary`)."""

    class Method(models.TextChoices):
        OFFLINE = "offline"
        LLM = "llm"

    page = models.ForeignKey(Page, on_delete=models.CASCADE, related_name="summaries")
    sections_key = models.CharField(max_length=64)
    section_ids = ArrayField(models.BigIntegerField(), default=list)
    summary = models.TextField(blank=True)
    method = models.CharField(max_length=16, choices=Method.choices, default=Method.OFFLINE)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name = _("page summary")
        verbose_name_plural = _("page summaries")
        constraints = [
            models.UniqueConstraint(
                fields=["page", "sections_key"], name="%(app_label)s_%(class)s_unique_key"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.page_id}/{self.sections_key[:12]}"


class Steward(models.Model):
    """A person an admin made responsible for a container's facts: they may confirm its
    recalled (stale) sections, as its sender or an admin may (`wiki.services.sections`).

    `container_key` is one container (`email:thread:…`, `slack:channel:C123`) or a prefix
    ending in `*` (`email:*`: every e-mail thread of the tenant). Managed in the admin."""

    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="wiki_stewards")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="wiki_stewardships"
    )
    container_key = models.CharField(max_length=300, help_text="a container key, or a prefix ending in *")
    note = models.CharField(max_length=300, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name = _("steward")
        verbose_name_plural = _("stewards")
        constraints = [
            models.UniqueConstraint(
                fields=["tenant", "user", "container_key"], name="%(app_label)s_%(class)s_unique_steward"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.user} → {self.container_key}"

    def covers(self, container_key: str) -> bool:
        if self.container_key.endswith("*"):
            return container_key.startswith(self.container_key[:-1])
        return container_key == self.container_key


class Rebuild(models.Model):
    """One run of `manage.py wiki_rebuild`: which threads it recompiles from the inbox and how
    far it got (events of those threads done / total), for the command and the operator."""

    class State(models.TextChoices):
        QUEUED = "queued"
        RUNNING = "running"
        DONE = "done"
        FAILED = "failed"

    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="wiki_rebuilds")
    page_slug = models.CharField(max_length=200, blank=True, help_text="empty: the whole tenant")
    state = models.CharField(max_length=16, choices=State.choices, default=State.QUEUED)
    events_total = models.IntegerField(default=0)
    events_done = models.IntegerField(default=0)
    threads_total = models.IntegerField(default=0)
    threads_done = models.IntegerField(default=0)
    error = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        verbose_name = _("rebuild")
        verbose_name_plural = _("rebuilds")
        indexes = [models.Index(fields=["tenant", "created_at"], name="wiki_rebuild_tenant_idx")]

    def __str__(self) -> str:
        scope = self.page_slug or "all pages"
        return f"rebuild {self.pk} of {self.tenant_id}/{scope}: {self.state} {self.events_done}/{self.events_total}"
