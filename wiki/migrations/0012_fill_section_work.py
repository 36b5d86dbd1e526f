"""Fill `PageSection.work_kind/work_open` from the inbox: a section's thread's issue or pull
request (its earliest item of that kind) and whether its newest version closed it; then a
project page's stored status from them (open work → open, all closed → closed)."""

from django.db import migrations

WORK = {"issue", "pull_request"}
NOT_BASE = {"message_deleted", "email_recalled", "issue_closed", "membership_added", "membership_removed"}


def _work(events):
    items = {}
    for e in events:
        items.setdefault((e.source_id, e.external_id), []).append(e)
    found = []
    for versions in items.values():
        versions.sort(key=lambda e: (e.occurred_at, e.version, e.id))
        current = versions[-1]
        bases = [e for e in versions if e.kind not in NOT_BASE]
        if current.kind == "message_deleted" or not bases or bases[-1].kind not in WORK:
            continue
        found.append((bases[-1].occurred_at, bases[-1].kind, current.kind != "issue_closed"))
    return min(found)[1:] if found else ("", None)


def fill_section_work(apps, schema_editor):
    Event = apps.get_model("connectors", "Event")
    PageSection = apps.get_model("wiki", "PageSection")
    Page = apps.get_model("wiki", "Page")
    work_ids = set(Event.objects.filter(kind__in=WORK).values_list("id", flat=True).iterator())
    if not work_ids:
        return
    pages = set()
    for section in PageSection.objects.only("id", "page_id", "event_ids").iterator(chunk_size=2000):
        if not work_ids.intersection(section.event_ids or []):
            continue
        events = Event.objects.filter(id__in=section.event_ids).only(
            "id", "source_id", "external_id", "kind", "version", "occurred_at"
        )
        kind, is_open = _work(list(events))
        PageSection.objects.filter(pk=section.pk).update(work_kind=kind, work_open=is_open)
        pages.add(section.page_id)
    for page in Page.objects.filter(id__in=pages, kind="project"):
        work = PageSection.objects.filter(page=page, stale=False).exclude(work_kind="")
        if work.filter(work_open=True).exists():
            page.status = "open"
        elif work.exists():
            page.status = "closed"
        page.save(update_fields=["status"])


class Migration(migrations.Migration):
    dependencies = [
        ("connectors", "0003_event_digest_without_author"),
        ("wiki", "0011_section_work_page_status_manual"),
    ]

    operations = [migrations.RunPython(fill_section_work, migrations.RunPython.noop)]
