"""Merging two entities that are one thing ("Globex" and "Globex Corp" as two customers)."""

from __future__ import annotations

from django.conf import settings
from django.db import transaction

from almanac.errors import ApplicationError
from almanac.queue import enqueue_once
from almanac.search import keyword
from almanac.services.audit import audit_record
from wiki.constants import CORPUS
from wiki.models import Entity, Page, PageSection
from wiki.services.entities import alias_keys_of, aliases_cleaned, page_ensure, relink_note
from wiki.services.sections import section_delete


def _reindex(section: PageSection, page: Page) -> None:
    """A section's keyword text starts with its page title: moved, it is indexed under the new one."""
    new = keyword.index_fields(f"{page.title}\n{section.title}\n{section.content}")
    old = {"tokens": section.tokens, "tf": section.tf, "doc_len": section.doc_len}
    keyword.stats_apply(tenant_id=section.tenant_id, corpus=CORPUS, old=old, new=new)
    section.tokens, section.tf, section.doc_len = new["tokens"], new["tf"], new["doc_len"]


def _move_sections(*, source_page: Page, target_page: Page, reason: str) -> tuple[int, int]:
    """Move the sections of `source_page` onto `target_page`; a thread both pages hold (same
    thread and container: the same items, the same readers) is kept once, the target's copy,
    with the recall confirmations of both. Returns (moved, dropped)."""
    held = {
        (s.thread_key, s.container_key): s for s in target_page.sections.select_for_update().order_by("id")
    }
    moved = dropped = 0
    for section in source_page.sections.select_for_update().order_by("id"):
        twin = held.get((section.thread_key, section.container_key))
        if twin is not None:
            confirmed = sorted(set(twin.confirmed_recall_ids) | set(section.confirmed_recall_ids))
            if confirmed != sorted(twin.confirmed_recall_ids):
                twin.confirmed_recall_ids = confirmed
                twin.stale = bool(set(twin.recall_event_ids) - set(confirmed))
                twin.stale_reason = twin.stale_reason if twin.stale else ""
                twin._change_reason = reason
                twin.save(update_fields=["confirmed_recall_ids", "stale", "stale_reason", "updated_at"])
            section_delete(section=section, reason=reason)
            dropped += 1
            continue
        section.page = target_page
        _reindex(section, target_page)
        section._change_reason = reason
        section.save(update_fields=["page", "tokens", "tf", "doc_len", "updated_at"])
        moved += 1
    return moved, dropped


def _take_status(*, source_page: Page, target_page: Page) -> list[str]:
    """The survivor's stored status counted again from its sections' open work (the moved ones
    included), and the other's mark when it has none. Returns the fields changed."""
    fields = []
    work = list(
        target_page.sections.filter(stale=False)
        .exclude(work_kind="")
        .order_by("-occurred_at", "-id")
        .values_list("work_open", "occurred_at", "container_key")
    )
    if work:  # the moved issues and PRs count now: the status from the facts, as the compiler says it
        status = Page.Status.OPEN if any(w[0] for w in work) else Page.Status.CLOSED
        target_page.status, target_page.status_at, target_page.status_container = (
            status,
            work[0][1],
            work[0][2],
        )
        fields += ["status", "status_at", "status_container"]
    if source_page.status_manual and not target_page.status_manual:
        for name in ("status_manual", "status_manual_at", "status_manual_by"):
            setattr(target_page, name, getattr(source_page, name))
        fields += ["status_manual", "status_manual_at", "status_manual_by"]
    return fields


@transaction.atomic
def entity_merge(*, survivor: Entity, merged: Entity, actor) -> Entity:
    """Merge `merged` into `survivor` (same tenant and kind); `merged` and its page are deleted.

    1. lock both entities and pages (id order, as the compiler locks pages);
    2. move the sections to the survivor's page (history rows say "merged from …");
    3. the survivor takes the other's name and aliases as aliases, its `named_in`, its user
       if it has none; its page's status is counted again from its open work;
    4. delete the merged entity (its page's history keeps a deletion row) and audit;
    5. after the commit, threads naming the merged name or aliases are relinked.
    Later events naming the merged name resolve to the survivor through its aliases.
    """
    if survivor.pk == merged.pk:
        raise ApplicationError("cannot merge an entity with itself", status_code=422)
    if survivor.tenant_id != merged.tenant_id:
        raise ApplicationError("entities of different tenants cannot be merged", status_code=422)
    if survivor.kind != merged.kind:
        raise ApplicationError("entities of different kinds cannot be merged", status_code=422)
    if survivor.user_id and merged.user_id and survivor.user_id != merged.user_id:
        raise ApplicationError("both are person entities of different users", status_code=422)
    # 1.
    entities = Entity.objects.select_for_update().filter(pk__in=[survivor.pk, merged.pk]).in_bulk()
    survivor, merged = entities[survivor.pk], entities[merged.pk]
    pages = {
        p.entity_id: p
        for p in Page.objects.select_for_update().filter(entity__in=[survivor, merged]).order_by("id")
    }
    if survivor.pk not in pages:
        pages[survivor.pk] = page_ensure(entity=survivor)
    target_page, source_page = pages[survivor.pk], pages.get(merged.pk)
    if source_page is not None and any(
        not survivor.name_known_to(acl) for acl in source_page.sections.values_list("acl", flat=True)
    ):
        # The moved sections' readers would see the survivor's title, a name they were never
        # shown (the compiler's own rule for linking a thread to an entity).
        raise ApplicationError(
            f"{merged.name!r} has sections whose readers were never shown the name {survivor.name!r}: "
            "merge them the other way round, or name it where they can read it first",
            status_code=422,
        )
    reason = f"merged from {merged.kind}:{merged.name}"
    # 2.
    moved = dropped = 0
    if source_page is not None:
        moved, dropped = _move_sections(source_page=source_page, target_page=target_page, reason=reason)
        page_fields = _take_status(source_page=source_page, target_page=target_page)
        if page_fields:
            target_page._change_reason = reason
            target_page.save(update_fields=[*page_fields, "updated_at"])
    # 3.
    survivor.aliases = aliases_cleaned(survivor.name, [*survivor.aliases, merged.name, *merged.aliases])
    survivor.alias_keys = alias_keys_of(survivor.name, survivor.aliases)
    survivor.named_in = list(dict.fromkeys([*survivor.named_in, *merged.named_in]))
    survivor.user_id = survivor.user_id or merged.user_id
    merged_detail = {"id": merged.pk, "name": merged.name, "slug": source_page.slug if source_page else ""}
    # 4. (the merged entity goes first: its user must be free before the survivor takes it)
    merged.delete()
    survivor.save(update_fields=["aliases", "alias_keys", "named_in", "user", "updated_at"])
    # Threads naming the merged name link to the survivor now, where its name may be known.
    relink_note(entity=survivor, terms=[merged_detail["name"], *merged.aliases])
    audit_record(
        action="wiki.entity_merged",
        tenant_id=survivor.tenant_id,
        actor=getattr(actor, "username", str(actor or "")),
        object_type="wiki_entity",
        object_id=survivor.pk,
        detail={"merged": merged_detail, "into": survivor.name, "moved": moved, "dropped": dropped},
    )
    if settings.WIKI_SUMMARY_ENABLED and moved:
        transaction.on_commit(lambda: enqueue_once("wiki.tasks.page_summarize_task", target_page.pk))
    return survivor
