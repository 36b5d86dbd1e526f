"""Writes of the wiki: the compiler, entities, people pages, sections, summaries."""

from wiki.services.backlog import compile_batch, compile_pending, domains_learn_relink
from wiki.services.compiler import compile_event, entity_relink
from wiki.services.entities import entity_create, entity_ensure, entity_key_taken, entity_update, page_ensure
from wiki.services.merge import entity_merge
from wiki.services.people import directory_sync, person_page_sync
from wiki.services.rebuild import rebuild_run, rebuild_start
from wiki.services.sections import section_confirm, section_delete, section_write
from wiki.services.status import page_status_mark
from wiki.services.summary import page_summarize

__all__ = [
    "compile_batch",
    "domains_learn_relink",
    "entity_relink",
    "rebuild_run",
    "rebuild_start",
    "compile_event",
    "compile_pending",
    "directory_sync",
    "entity_create",
    "entity_ensure",
    "entity_key_taken",
    "entity_merge",
    "entity_update",
    "page_ensure",
    "page_status_mark",
    "page_summarize",
    "person_page_sync",
    "section_confirm",
    "section_delete",
    "section_write",
]
