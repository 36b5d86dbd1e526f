"""A container's visibility reaching its sections: a channel that turned private (or public)
changes the ACL of every section from it, not only the thread being compiled."""

from __future__ import annotations

from django.db import connection

from connectors.models import Event
from wiki.models import PageSection
from wiki.services.summary import summaries_enqueue
from wiki.services.threads import NO_CONTENT, container_acl, container_visibility


def container_acl_apply(*, tenant, container_key: str, public: bool, reason: str) -> set[int]:
    """Every section of the container gets the ACL its visibility says; the pages changed."""
    return containers_acl_apply(tenant=tenant, containers={container_key: (public, reason)})


def containers_acl_apply(*, tenant, containers: dict[str, tuple[bool, str]]) -> set[int]:
    """`container_acl_apply` for many containers ({key: (public, reason)}): the sections whose
    ACL is not what their container's visibility says are found in one query."""
    if not containers:
        return set()
    keys = sorted(containers)
    with connection.cursor() as cursor:
        cursor.execute(
            f"""SELECT s.id FROM {PageSection._meta.db_table} s
                JOIN unnest(%s::text[], %s::bool[]) AS c(key, public) ON s.container_key = c.key
                CROSS JOIN LATERAL (SELECT CASE WHEN c.public THEN ARRAY[c.key, %s] ELSE ARRAY[c.key] END AS acl) e
                WHERE s.tenant_id = %s AND NOT (s.acl @> e.acl::varchar[] AND s.acl <@ e.acl::varchar[])""",
            [keys, [containers[k][0] for k in keys], tenant.group_key, tenant.pk],
        )
        ids = [row[0] for row in cursor.fetchall()]
    changed = set()
    sections = PageSection.objects.filter(id__in=ids).defer("embedding", "search_vector")
    for section in sections.select_for_update(of=("self",)).order_by("id"):
        public, reason = containers[section.container_key]
        section.acl = container_acl(tenant=tenant, container_key=section.container_key, public=public)
        section._change_reason = reason
        section.save(update_fields=["acl", "updated_at"])
        changed.add(section.page_id)
    return changed


def container_acl_sync(*, event: Event, thread_key: str) -> set[int]:
    """A container that turned private (or public) changes every section from it, not only
    this thread's: otherwise old threads of a now-private channel stay readable tenant-wide.

    The container's observed visibility decides. A container not observed since that was
    recorded (events stored before the upgrade) falls back to its newest other section: an
    older event than that changes nothing.
    """
    if not event.container_key or event.kind in NO_CONTENT:
        return set()
    reason = f"container visibility changed (event {event.id})"
    known = container_visibility(tenant_id=event.tenant_id, keys=[event.container_key])
    if event.container_key in known:
        return container_acl_apply(
            tenant=event.tenant,
            container_key=event.container_key,
            public=known[event.container_key],
            reason=reason,
        )
    acl = container_acl(tenant=event.tenant, container_key=event.container_key, public=event.container_public)
    sections = PageSection.objects.filter(tenant_id=event.tenant_id, container_key=event.container_key)
    newest = (
        sections.exclude(thread_key=thread_key).order_by("-occurred_at").values_list("acl", "occurred_at")
    )
    newest = newest.first()
    if newest is None or newest[0] == acl or event.occurred_at < newest[1]:
        return set()  # unchanged, or an older event: the container's newest event decides
    return container_acl_apply(
        tenant=event.tenant, container_key=event.container_key, public=event.container_public, reason=reason
    )


def container_visibility_at_ingest(*, tenant, container_key: str, public: bool) -> None:
    """A container observed to have turned private (or public) at ingest: all its sections,
    this event's thread too, follow when the event is stored, not when a worker compiles it."""
    summaries_enqueue(
        container_acl_apply(
            tenant=tenant, container_key=container_key, public=public, reason="container visibility observed"
        )
    )
