"""Demo wiki: compile the demo tenant's inbox (imported by connectors' demo) and its people."""

from __future__ import annotations

from connectors.models import Event
from wiki.models import Page, PageSection
from wiki.services.backlog import compile_pending
from wiki.services.people import directory_sync


def load(company) -> str:
    tenant = company.tenant
    people = directory_sync(tenant=tenant)
    compiled = compile_pending(tenant=tenant)
    failed = Event.objects.filter(tenant=tenant, state=Event.State.FAILED).count()
    pages = Page.objects.filter(tenant=tenant).count()
    sections = PageSection.objects.filter(tenant=tenant).count()
    summary = f"{compiled} events compiled into {pages} pages / {sections} sections ({people} people)"
    return summary + (f"; {failed} events failed (see admin)" if failed else "")
