"""Entity names in text: a per-process cache of each tenant's matcher (one regex of all the
tenant's folded names and aliases), rebuilt when its entities change.

`entities_changed` (wired to Entity saves and deletes in `wiki.apps`) makes this process
look again at once; other processes' changes are seen within `WIKI_ENTITY_CHECK_SECONDS`
(requests) or at once (the compiler passes `max_age=0`).
"""

from __future__ import annotations

import re
import threading
import time
from dataclasses import dataclass, field

from django.conf import settings
from django.db.models import Count, Max

from almanac.models import Tenant
from almanac.search.text import add_words, is_cjk, word_spans
from almanac.selectors import snapshot_memo
from wiki import folding
from wiki.models import Entity

MIN_LATIN_KEY = 3
# An alias that is an e-mail domain ("@globex.com", "globex.com") links e-mail from and to
# that domain; one that is a ticket prefix ("GLX-") links text holding its tickets (GLX-123).
DOMAIN_ALIAS = re.compile(r"^@?((?:[a-z0-9](?:[a-z0-9-]*[a-z0-9])?\.)+[a-z]{2,})$")
PREFIX_ALIAS = re.compile(r"^([A-Za-z][A-Za-z0-9]{1,9})-$")
TICKET = re.compile(r"(?<![A-Za-z0-9])([A-Za-z][A-Za-z0-9]{1,9})-\d+(?![A-Za-z0-9])")
ADDRESS = re.compile(r"@((?:[A-Za-z0-9-]+\.)+[A-Za-z]{2,})")


def alias_domain(alias: str) -> str:
    """The e-mail domain an alias names ("@globex.com" → "globex.com"), else ""."""
    match = DOMAIN_ALIAS.match((alias or "").strip().lower())
    return match.group(1) if match else ""


def alias_prefix(alias: str) -> str:
    """The ticket prefix an alias names ("GLX-" → "GLX"), else ""."""
    match = PREFIX_ALIAS.match((alias or "").strip())
    return match.group(1).upper() if match else ""


@dataclass
class EntityMatcher:
    stamp: tuple
    pattern: re.Pattern | None
    by_key: dict[str, list[int]] = field(default_factory=dict)
    entities: dict[int, Entity] = field(default_factory=dict)
    by_domain: dict[str, list[int]] = field(default_factory=dict)
    by_prefix: dict[str, list[int]] = field(default_factory=dict)
    full_names: dict[int, re.Pattern] = field(default_factory=dict)

    def get(self, kind: str, key: str) -> Entity | None:
        """The entity of `kind` with this folded name, else the one with it as an alias."""
        candidates = [self.entities[pk] for pk in self.by_key.get(key, []) if self.entities[pk].kind == kind]
        named = [e for e in candidates if e.key == key]
        if named:
            return named[0]
        return candidates[0] if len(candidates) == 1 else None

    def find(self, text: str) -> list[Entity]:
        return list({e.pk: e for e, _ in self.find_matches(text)}.values())

    def find_matches(self, text: str) -> list[tuple[Entity, bool]]:
        """(entity, by its own name) for each entity named in `text`: `True` where the text
        holds the entity's name as its page is titled (case, width and script folded),
        `False` where only its folded key (a name without its legal suffix) or an alias."""
        if self.pattern is None or not text:
            return []
        found: dict[int, tuple[Entity, bool]] = {}
        folded = _fold_text(text)
        spans = None  # the segmenter's words, cut only when a Chinese name matched
        for match in self.pattern.finditer(folded):
            if is_cjk(match.group()):
                spans = word_spans(folded) if spans is None else spans
                end = spans.get(match.start())
                if end is None:
                    continue  # inside a longer word: 华为 in 新华为人民服务
                if end > match.end() and not folding.is_legal_form(folded[match.end() : end]):
                    continue  # the start of a longer word: 小米 in 小米粥, not in 小米集团
            for pk in self.by_key.get(match.group(), []):
                entity = self.entities[pk]
                by_name = entity.key == match.group() and self._names(entity, folded)
                if pk not in found or (by_name and not found[pk][1]):
                    found[pk] = (entity, by_name)
        return list(found.values())

    def _names(self, entity: Entity, folded: str) -> bool:
        """Does the folded text hold the entity's name as its page is titled, legal suffix
        and all ("Nightingale Holdings", not the bird)?"""
        pattern = self.full_names.get(entity.pk)
        if pattern is None:
            pattern = self.full_names[entity.pk] = folding.key_pattern(_fold_text(entity.name).strip())
        return pattern.search(folded) is not None

    def by_addresses(self, addresses) -> list[Entity]:
        """Entities with an alias that is the e-mail domain of one of `addresses`."""
        domains = {m.group(1).lower() for a in addresses for m in ADDRESS.finditer(a or "")}
        return [self.entities[pk] for d in sorted(domains) for pk in self.by_domain.get(d, [])]

    def by_tickets(self, text: str) -> list[Entity]:
        """Entities with an alias that is the prefix of a ticket id in `text` (GLX-123)."""
        prefixes = {m.group(1).upper() for m in TICKET.finditer(text or "")}
        return [self.entities[pk] for p in sorted(prefixes) for pk in self.by_prefix.get(p, [])]


_matchers: dict[int, EntityMatcher] = {}
_checked: dict[int, float] = {}  # tenant id → when its stamp was last compared (monotonic)
_matchers_lock = threading.Lock()


def entities_changed(tenant_id: int) -> None:
    """An entity of the tenant was saved or deleted in this process: look again next time."""
    with _matchers_lock:
        _checked.pop(tenant_id, None)


def matchers_forget() -> None:
    """Drop every cached matcher: after a rolled-back compile, whose in-memory changes to the
    cached entities (where a name was seen) the database never got."""
    with _matchers_lock:
        _matchers.clear()
        _checked.clear()


def entity_matcher(tenant_id: int, *, max_age: float | None = None) -> EntityMatcher:
    """One alternation regex of all folded names/aliases of a tenant, rebuilt when entities change.

    Whether they changed is a count and a max over the tenant's entities (O(entities)),
    looked at once per `max_age` seconds per process (WIKI_ENTITY_CHECK_SECONDS for
    requests; the compiler passes 0) and right after a change made in this process.
    """
    max_age = settings.WIKI_ENTITY_CHECK_SECONDS if max_age is None else max_age
    cached = _matchers.get(tenant_id)
    checked = _checked.get(tenant_id)
    if cached is not None and checked is not None and time.monotonic() - checked < max_age:
        return cached
    agg = snapshot_memo(  # checked once per request
        ("entity-stamp", tenant_id),
        lambda: Entity.objects.filter(tenant_id=tenant_id).aggregate(n=Count("id"), at=Max("updated_at")),
    )
    stamp = (agg["n"], agg["at"])
    if cached is not None and cached.stamp == stamp:
        with _matchers_lock:
            _checked[tenant_id] = time.monotonic()
        return cached
    entities = {e.pk: e for e in Entity.objects.filter(tenant_id=tenant_id)}
    by_key: dict[str, list[int]] = {}
    for entity in entities.values():
        for key in {entity.key, *entity.alias_keys}:
            by_key.setdefault(key, []).append(entity.pk)
    add_words([e.name for e in entities.values()] + [a for e in entities.values() for a in e.aliases])
    keys = [k for k in by_key if len(k) >= (2 if is_cjk(k) else MIN_LATIN_KEY)]
    latin = [k for k in keys if not is_cjk(k)]
    cjk = [k for k in keys if is_cjk(k)]
    parts = (
        [rf"{folding.LATIN_BEFORE}(?:{folding.alternation(latin)}){folding.LATIN_AFTER}"] if latin else []
    ) + ([f"(?:{folding.alternation(cjk)})"] if cjk else [])
    pattern = re.compile("|".join(parts)) if parts else None
    by_domain: dict[str, list[int]] = {}
    by_prefix: dict[str, list[int]] = {}
    for entity in entities.values():
        for alias in entity.aliases:
            if domain := alias_domain(alias):
                by_domain.setdefault(domain, []).append(entity.pk)
            if prefix := alias_prefix(alias):
                by_prefix.setdefault(prefix, []).append(entity.pk)
    matcher = EntityMatcher(
        stamp=stamp,
        pattern=pattern,
        by_key=by_key,
        entities=entities,
        by_domain=by_domain,
        by_prefix=by_prefix,
    )
    with _matchers_lock:
        _matchers[tenant_id] = matcher
        _checked[tenant_id] = time.monotonic()
    return matcher


def _fold_text(text: str) -> str:
    return re.sub(r"[\s\"'`.,;:!?()\[\]{}<>|/\\]+", " ", folding.normalize(text))


def entities_in_text(*, tenant: Tenant, text: str) -> list[Entity]:
    """Entities whose folded name or alias occurs in `text`, in order of first mention.

    Lexical (case, width, legal suffixes folded); a Chinese name where a word starts (the
    segmenter's: not 华为 in 新华为人民服务), Latin names on word boundaries.
    """
    return entity_matcher(tenant.pk).find(text)
