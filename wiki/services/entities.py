"""Entities and their pages: resolution from tags and text."""

from __future__ import annotations

import logging
import threading

from django.contrib.auth import get_user_model
from django.db import IntegrityError, connection, transaction
from django.db.models import BooleanField, CharField, Func, Value
from django.db.models.expressions import RawSQL
from django.db.models.functions import Lower
from django.utils import timezone
from django.utils.text import slugify

from almanac.errors import ApplicationError
from almanac.models import Tenant
from almanac.search.text import add_words
from wiki import folding
from wiki.models import Entity, Page

log = logging.getLogger(__name__)

User = get_user_model()

TAG_KINDS = {"customer": Entity.Kind.CUSTOMER, "project": Entity.Kind.PROJECT}
# Kinds whose names link text to their page (a topic is a channel's page, a person's page
# collects what they wrote).
LINKED_KINDS = {Entity.Kind.CUSTOMER, Entity.Kind.PROJECT}

# Relinks noted in this thread's open transaction (see `relink_note`).
_relinks = threading.local()


def relink_note(*, entity: Entity, terms: list[str], containers: list[str] | None = None) -> None:
    """Threads compiled earlier may link differently now: `entity` was created, got a name or
    alias (`terms`), or its name became known in `containers` (an alias matches there now).

    Noted per thread; after the transaction commits, one `wiki.tasks.entity_relink_task`
    recompiles the threads whose text holds a term (`wiki.services.compiler.entity_relink`).
    A batch compile takes the notes itself before its commit (`relinks_take`) and runs them
    in the same process. Only customers and projects link text."""
    terms = [t for t in terms if t and t.strip()]
    if entity.kind not in LINKED_KINDS or not terms:
        return
    pending = getattr(_relinks, "pending", None)
    if pending is None:
        pending = _relinks.pending = []
    pending.append(
        [entity.tenant_id, entity.pk, sorted(set(terms)), sorted(containers) if containers else None]
    )
    transaction.on_commit(_relinks_enqueue)  # at once outside a transaction; a no-op once taken


def relinks_take() -> list[list]:
    """The relinks noted so far in this thread (and forgets them)."""
    pending = getattr(_relinks, "pending", None) or []
    _relinks.pending = []
    return pending


def _relinks_enqueue() -> None:
    from django_q.tasks import async_task

    by_tenant: dict[int, list] = {}
    for tenant_id, *note in relinks_take():
        by_tenant.setdefault(tenant_id, []).append(note)
    for tenant_id, notes in sorted(by_tenant.items()):
        async_task("wiki.tasks.entity_relink_task", tenant_id, notes)


def alias_keys_of(name: str, aliases: list[str]) -> list[str]:
    keys = [folding.fold(name)] + [folding.fold(a) for a in aliases]
    return sorted({k for k in keys if k})


def entity_ensure(
    *,
    tenant: Tenant,
    kind: str,
    name: str,
    aliases: list[str] | None = None,
    user=None,
    named_in: str | None = None,
    seen_at=None,
) -> Entity:
    """The entity of `kind` whose folded name is `name`'s, else the one entity of `kind` that
    has it as an alias ("Alibaba" for 阿里巴巴集团), created with its page if neither exists.

    `named_in`: where this name was seen (a private container's key; default `tenant:<slug>`,
    known to all: the directory, an admin, a public event), added to `Entity.named_in`.
    `seen_at`: the event time of the tag that spelled `name` (None: a person or the
    directory named it), see `entity_spelled`.

    Idempotent and safe under concurrent workers (the unique key decides the winner).
    """
    named_in = named_in or tenant.group_key
    name = (name or "").strip()[:300]
    key = folding.fold(name)[:300]
    entity = Entity.objects.filter(tenant=tenant, kind=kind, key=key).first()
    if entity is None:
        by_alias = list(Entity.objects.filter(tenant=tenant, kind=kind, alias_keys__contains=[key])[:2])
        entity = by_alias[0] if len(by_alias) == 1 else None
    if entity is None:
        try:
            with transaction.atomic():
                entity = Entity.objects.create(
                    tenant=tenant,
                    kind=kind,
                    name=name,
                    key=key,
                    aliases=[],
                    alias_keys=alias_keys_of(name, []),
                    user=user,
                    named_in=[named_in],
                    name_at=seen_at,
                    name_from=_name_from(seen_at=seen_at, public=named_in == tenant.group_key),
                )
                page_ensure(entity=entity)
            relink_note(entity=entity, terms=[name])
        except IntegrityError:
            entity = Entity.objects.get(tenant=tenant, kind=kind, key=key)
        add_words([name])
    new_aliases = [a.strip()[:300] for a in aliases or [] if a and a.strip() and a.strip() != entity.name]
    if any(a not in entity.aliases for a in new_aliases) or (user is not None and entity.user_id != user.pk):
        entity_update(entity=entity, aliases=entity.aliases + new_aliases, user=user or entity.user)
    entity_seen(entity=entity, named_in=named_in)
    entity_spelled(entity=entity, name=name, seen_at=seen_at, public=named_in == tenant.group_key)
    return entity


def _name_from(*, seen_at, public: bool) -> str:
    if seen_at is None:
        return Entity.NameFrom.PERSON
    return Entity.NameFrom.PUBLIC if public else Entity.NameFrom.PRIVATE


def entity_spelled(*, entity: Entity, name: str, seen_at, public: bool) -> None:
    """A tag spelled the entity's name `name` at `seen_at`, where the whole tenant reads it
    (`public`) or in a private container. Of the spellings of the same name ("Globex",
    "Globex Corp."), a public one replaces a private one, and of public ones the earliest
    (then the first in code point order) titles the entity, so the title does not depend on
    the order events arrive in. A private spelling never retitles (its extra words may be
    private: `fold` drops a bracketed note and legal suffixes); a person's name stays, as does
    the name when `name` is one of its aliases. The page takes the title when the compile
    locks it (`wiki.services.compiler`), not here: pages are locked in id order only there."""
    name = (name or "").strip()[:300]
    if seen_at is None or not public or name == entity.name or entity.name_from == Entity.NameFrom.PERSON:
        return
    if folding.fold(name)[:300] != entity.key:
        return
    if entity.name_from == Entity.NameFrom.PUBLIC and (seen_at, name) >= (entity.name_at, entity.name):
        return
    with connection.cursor() as cursor:  # the row's own spelling decides: another worker may have renamed it
        cursor.execute(
            f"""UPDATE {Entity._meta.db_table} SET name = %s, name_at = %s, name_from = 'public', updated_at = %s
                WHERE id = %s AND (name_from = 'private' OR (name_from = 'public' AND
                  (name_at > %s OR (name_at = %s AND name COLLATE "C" > %s))))""",
            [name, seen_at, timezone.now(), entity.pk, seen_at, seen_at, name],
        )
        if cursor.rowcount == 0:
            return
    entity.name, entity.name_at, entity.name_from = name, seen_at, Entity.NameFrom.PUBLIC
    add_words([name])
    relink_note(entity=entity, terms=[name])


def entity_seen(*, entity: Entity, named_in: str) -> None:
    """The entity's name was seen in `named_in` (a container key, or `tenant:<slug>`): added
    to `Entity.named_in`; its aliases may now link text there (relinked)."""
    if named_in in entity.named_in:
        return
    # Appended in SQL: two workers naming it in two containers both count. A statement of
    # its own (not the ORM's update): a backlog compile runs this for every new container.
    with connection.cursor() as cursor:
        cursor.execute(
            f"UPDATE {Entity._meta.db_table} SET named_in = array_append(named_in, %s), updated_at = %s "
            "WHERE id = %s AND NOT (%s = ANY(named_in))",
            [named_in, timezone.now(), entity.pk, named_in],
        )
    entity.named_in = [*entity.named_in, named_in]
    relink_note(entity=entity, terms=entity.aliases, containers=[named_in])


def aliases_cleaned(name: str, aliases) -> list[str]:
    cleaned = (a.strip()[:300] for a in aliases or [] if a and a.strip())
    return list(dict.fromkeys(a for a in cleaned if a != name))


def entity_key_taken(*, tenant_id: int, kind: str, name: str, exclude_pk: int | None = None) -> bool:
    """Does another entity of this kind already have `name`'s folded key?"""
    key = folding.fold((name or "").strip()[:300])[:300]
    return Entity.objects.filter(tenant_id=tenant_id, kind=kind, key=key).exclude(pk=exclude_pk).exists()


@transaction.atomic
def entity_create(
    *, tenant: Tenant, kind: str, name: str, aliases: list[str] | None = None, user=None
) -> Entity:
    """An entity made by a person (the admin): its name is known tenant-wide, it gets its page.

    Raises `ApplicationError` when an entity of the kind already has the folded name.
    """
    name = (name or "").strip()[:300]
    key = folding.fold(name)[:300]
    if not key:
        raise ApplicationError("the name is empty once folded", status_code=422)
    if entity_key_taken(tenant_id=tenant.pk, kind=kind, name=name):
        raise ApplicationError(f"a {kind} with this name already exists", status_code=409)
    aliases = aliases_cleaned(name, aliases)
    entity = Entity.objects.create(
        tenant=tenant,
        kind=kind,
        name=name,
        key=key,
        aliases=aliases,
        alias_keys=alias_keys_of(name, aliases),
        user=user,
        named_in=[tenant.group_key],
    )
    page_ensure(entity=entity)
    add_words([name, *aliases])
    relink_note(entity=entity, terms=[name, *aliases])
    return entity


def entity_update(*, entity: Entity, aliases: list[str], user=None, name: str | None = None) -> Entity:
    """Set aliases and user (and, from the admin, the name: the key is folded again and the
    page takes the new title; its slug stays, so links keep working)."""
    fields = ["aliases", "alias_keys", "user", "updated_at"]
    before = {entity.name, *entity.aliases}
    if name is not None and name.strip():
        if name.strip()[:300] != entity.name:  # a person's name: events keep it
            entity.name_at, entity.name_from = None, Entity.NameFrom.PERSON
        entity.name = name.strip()[:300]
        entity.key = folding.fold(entity.name)[:300]
        fields += ["name", "key", "name_at", "name_from"]
        page = Page.objects.filter(entity=entity).first()
        if page is not None and page.title != entity.name:
            page.title = entity.name
            page._change_reason = "entity renamed"
            page.save(update_fields=["title", "updated_at"])
    entity.aliases = aliases_cleaned(entity.name, aliases)
    entity.alias_keys = alias_keys_of(entity.name, entity.aliases)
    entity.user = user
    entity.save(update_fields=fields)
    add_words([entity.name, *entity.aliases])
    # A new name or alias may link older threads; one dropped may unlink them.
    relink_note(entity=entity, terms=sorted(before ^ {entity.name, *entity.aliases}))
    return entity


def _slug_for(entity: Entity) -> str:
    base = slugify(entity.key or entity.name, allow_unicode=True)[:150] or f"{entity.kind}-{entity.pk}"
    taken = Page.objects.filter(tenant_id=entity.tenant_id)
    for candidate in (base, f"{entity.kind}-{base}", f"{entity.kind}-{base}-{entity.pk}"):
        if not taken.filter(slug=candidate).exists():
            return candidate
    return f"{entity.kind}-{entity.pk}"


def page_ensure(*, entity: Entity) -> Page:
    page = Page.objects.filter(entity=entity).first()
    if page is not None:
        return page
    status = Page.Status.OPEN if entity.kind == Entity.Kind.PROJECT else Page.Status.ACTIVE
    return Page.objects.create(
        tenant_id=entity.tenant_id,
        entity=entity,
        slug=_slug_for(entity),
        kind=entity.kind,
        title=entity.name,
        status=status,
    )


def entities_from_tags(
    *, tenant: Tenant, tags: dict, matcher=None, named_in: str | None = None, seen_at=None
) -> list[Entity]:
    """Entities named by an event's tags ({"customer": "...", "project": "..."}); created if new.

    `matcher` (`wiki.matching.entity_matcher`) answers known names without a query. `named_in`:
    the event's container key when it is private; `seen_at`, the event's time (see
    `entity_ensure`).
    """
    named_in = named_in or tenant.group_key
    found = []
    for tag, kind in TAG_KINDS.items():
        values = (tags or {}).get(tag)
        for value in values if isinstance(values, list) else [values]:
            if not isinstance(value, str) or not folding.fold(value):
                continue
            known = matcher.get(kind, folding.fold(value.strip()[:300])[:300]) if matcher else None
            if known is None:
                known = entity_ensure(
                    tenant=tenant, kind=kind, name=value, named_in=named_in, seen_at=seen_at
                )
            else:  # the matcher's copy learns it too
                entity_seen(entity=known, named_in=named_in)
                entity_spelled(entity=known, name=value, seen_at=seen_at, public=named_in == tenant.group_key)
            found.append(known)
    return found


def domain_learnable(*, tenant: Tenant, domain: str) -> bool:
    """May `domain` still be learned as a customer's alias: none of the tenant's users has it
    and no entity has it as an alias yet?"""
    if domain in internal_domains(tenant):
        return False
    return not Entity.objects.filter(tenant=tenant, aliases__contains=[f"@{domain}"]).exists()


def internal_domains(tenant: Tenant) -> set[str]:
    """The tenant's own e-mail domains: those of its users."""
    domain = Func(Lower("email"), Value("@"), Value(2), function="split_part", output_field=CharField())
    rows = User.objects.filter(profile__tenant=tenant).exclude(email="").annotate(domain=domain)
    return {d for d in rows.values_list("domain", flat=True).distinct() if d}


def _domain_evidence(*, tenant: Tenant, domains: list[str] | None) -> dict[str, dict[str, set[int]]]:
    """{outside domain: {e-mail thread its senders wrote: customers the thread names by name}},
    from the customer pages' e-mail sections (of `domains`' senders only, if given)."""
    from wiki.matching import entity_matcher
    from wiki.models import PageSection

    internal = internal_domains(tenant)
    matcher = entity_matcher(tenant.pk, max_age=0)
    seen: dict[str, dict[str, set[int]]] = {}
    rows = PageSection.objects.filter(
        tenant=tenant, container_key__startswith="email:", page__kind=Entity.Kind.CUSTOMER
    ).filter(
        RawSQL(  # only sections with an author from outside (most mail is internal)
            "EXISTS (SELECT 1 FROM unnest(authors) a WHERE a LIKE '%%@%%' AND split_part(a, '@', 2) <> ALL(%s))",
            [sorted(internal)],
            output_field=BooleanField(),
        )
    )
    if domains is not None:
        rows = rows.filter(
            RawSQL(
                "EXISTS (SELECT 1 FROM unnest(authors) a WHERE split_part(a, '@', 2) = ANY(%s))",
                [sorted(domains)],
                output_field=BooleanField(),
            )
        )
    for thread_key, content, authors in rows.values_list("thread_key", "content", "authors").iterator():
        senders = {a.rsplit("@", 1)[1] for a in authors if "@" in a} - internal
        if domains is not None:
            senders &= set(domains)
        if not senders:
            continue
        named = {
            e.pk for e, by_name in matcher.find_matches(content) if by_name and e.kind == Entity.Kind.CUSTOMER
        }
        for domain in senders:
            seen.setdefault(domain, {}).setdefault(thread_key, set()).update(named)
    return seen


def domains_learn(
    *, tenant: Tenant, min_threads: int = 2, domains: list[str] | None = None
) -> list[tuple[str, str]]:
    """E-mail domains learned as customers' aliases, where it is safe: an outside domain
    (none of the tenant's users has it) whose senders wrote at least `min_threads` e-mail
    threads that name a customer by its name, all the same customer, and none naming
    another. The evidence is the text, never a link made by a domain, so a learned alias
    does not feed itself; computed from the compiled wiki as it is, so it depends on the set
    of events, not their order. Each alias added relinks that domain's other mail (threads
    that never name the customer). Returns the (customer, "@domain") pairs added.

    `domains`: only these (a live e-mail's sender's), reading only their senders' sections."""
    seen = _domain_evidence(tenant=tenant, domains=domains)
    added = []
    for domain, threads in sorted(seen.items()):
        customers = set().union(*threads.values())
        if len(customers) != 1 or sum(1 for named in threads.values() if named) < min_threads:
            continue
        # Aliases read, then written. None: merged away since the evidence was read (a
        # matcher read before the merge); its survivor's threads are relinked by the merge.
        entity = Entity.objects.select_for_update().filter(pk=customers.pop()).first()
        if entity is None:
            log.info("domain %s: its customer was merged away meanwhile, nothing to learn", domain)
            continue
        alias = f"@{domain}"
        if (
            alias in entity.aliases
            or Entity.objects.filter(tenant=tenant, aliases__contains=[alias]).exists()
        ):
            continue
        entity_update(entity=entity, aliases=[*entity.aliases, alias], user=entity.user)
        added.append((entity.name, alias))
    return added
