"""Which compiled threads a new or renamed entity may now link: found through the sections'
keyword index (names and aliases) or the inbox's participants (e-mail domains). The
compiler rebuilds them (`wiki.services.compiler.entity_relink`)."""

from __future__ import annotations

from django.db.models import BooleanField, Q
from django.db.models.expressions import RawSQL

from connectors.models import Event
from wiki.matching import alias_domain, alias_prefix
from wiki.models import PageSection
from wiki.services.threads import NO_CONTENT, PARTICIPANT_KINDS, K, thread_of


def relink_threads(*, tenant_id: int, terms: list[str], containers: list[str] | None = None) -> list[str]:
    """The compiled threads that may name one of `terms` (an entity's name or aliases), found
    through the sections' keyword index (every token of a term; a ticket prefix as a token
    prefix), within `containers` (section ACL keys) if given. E-mail domains are looked up
    in the inbox's e-mail and meeting participants (a scan of those, for an alias change)."""
    clauses, domains = [], []
    for term in terms:
        if domain := alias_domain(term):
            domains.append(domain)
        elif prefix := alias_prefix(term):
            clauses.append(f"'{prefix.lower()}-':*")
        else:
            clauses += _term_clauses(term)
    keys: set[str] = set()
    sections = PageSection.objects.filter(tenant_id=tenant_id)
    if containers:
        sections = sections.filter(acl__overlap=containers)
    if clauses:
        match = RawSQL("search_vector @@ %s::tsquery", [" | ".join(clauses)], output_field=BooleanField())
        keys |= set(sections.filter(match).values_list("thread_key", flat=True).distinct())
    for domain in domains:
        keys |= _threads_with_domain(tenant_id=tenant_id, domain=domain, containers=containers)
    return sorted(keys)


def _quoted(token: str) -> str:
    return "'" + token.replace("\\", "\\\\").replace("'", "''") + "'"


def _term_clauses(term: str) -> list[str]:
    """tsquery clauses that find a term in sections indexed before it was a known word: its
    tokens now (a Chinese name is one word once the segmenter knows it, its parts too), its
    parts alone, or its characters (how it may have been cut before)."""
    from almanac.search.text import is_cjk, segment

    tokens = [t for t in segment(term) if t]
    if not tokens:
        return []
    clauses = ["(" + " & ".join(_quoted(t) for t in tokens) + ")"]
    if is_cjk(term):
        longest = max(tokens, key=len)
        parts = [t for t in tokens if t != longest]
        clauses.append(_quoted(longest))
        if parts:
            clauses.append("(" + " & ".join(_quoted(t) for t in parts) + ")")
        chars = sorted({c for t in tokens for c in t if is_cjk(c)})
        clauses.append("(" + " & ".join(_quoted(c) for c in chars) + ")")
    return clauses


def _threads_with_domain(*, tenant_id: int, domain: str, containers) -> set[str]:
    events = Event.objects.filter(tenant_id=tenant_id, kind__in=PARTICIPANT_KINDS | {K.MESSAGE})
    if containers:
        events = events.filter(container_key__in=containers)
    pattern = "%@" + domain.replace("%", "").replace("_", "\\_")
    members = RawSQL(
        "EXISTS (SELECT 1 FROM unnest(container_members) m WHERE lower(m) LIKE %s)",
        [pattern],
        output_field=BooleanField(),
    )
    hits = events.filter(Q(author__iendswith="@" + domain) | Q(members))
    return {thread_of(e) for e in hits.select_related("source")}


def thread_event(*, tenant_id: int, thread_key: str) -> Event | None:
    """An inbox event of the thread (its newest), to rebuild the thread from."""
    events = Event.objects.filter(tenant_id=tenant_id).exclude(kind__in=NO_CONTENT)
    event = events.filter(thread_key=thread_key).order_by("-occurred_at", "-id").first()
    if event is None and thread_key.startswith("item:"):
        _, source, external_id = thread_key.split(":", 2)
        event = events.filter(source__name=source, external_id=external_id).order_by("-id").first()
    return event
