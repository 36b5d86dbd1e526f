"""A status a person sets on a page: it wins over the facts until a later fact changes them."""

from __future__ import annotations

from django.db import transaction
from django.utils import timezone

from almanac.errors import ApplicationError
from almanac.services.audit import audit_record
from wiki.models import Page


@transaction.atomic
def page_status_mark(*, page: Page, status: str, user) -> Page:
    """Mark the page `open`, `closed` or `active` ("" clears the mark: the facts decide again).

    Every reader of the page sees the mark (it is a person's statement, not a container's
    fact); the compiler drops it when an issue or PR of the page opens, closes or reopens at
    an event time after it was set (`wiki.services.compiler.page_status_apply`). Audited.
    """
    if status and status not in Page.Status.values:
        raise ApplicationError(f"unknown status {status!r}", status_code=422)
    page = Page.objects.select_for_update().get(pk=page.pk)
    page.status_manual = status
    page.status_manual_at = timezone.now() if status else None
    page.status_manual_by = user.username if status else ""
    page._change_reason = f"status marked {status or 'from the facts'} by {user.username}"
    page._history_user = user
    page.save(update_fields=["status_manual", "status_manual_at", "status_manual_by", "updated_at"])
    audit_record(
        action="wiki.page_status_marked",
        tenant_id=page.tenant_id,
        actor=user.username,
        object_type="wiki_page",
        object_id=page.pk,
        detail={"page": page.slug, "status": status},
    )
    return page
