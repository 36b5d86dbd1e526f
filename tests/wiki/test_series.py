"""`wiki.series`: a recurring meeting is one line on a page (cadence, last and next
occurrence, the notes of its meetings under it), in the page API and in context items; a
moved meeting serves its new time (`connectors.calendar.normalize.moves`)."""

from datetime import UTC, datetime, timedelta

import pytest

from connectors.calendar.normalize import ics_payloads
from connectors.services.importer import ingest_all
from tests.wiki.conftest import slack
from wiki import selectors, series
from wiki.models import Page

NOW = datetime.now(UTC)
# A Tuesday at 10:00 UTC three to four weeks ago: 4 meetings have happened, 4 are to come.
FIRST = (NOW - timedelta(days=21 + (NOW.weekday() - 1) % 7)).replace(
    hour=10, minute=0, second=0, microsecond=0
)
STARTS = [FIRST + timedelta(weeks=i) for i in range(8)]
PAST = [s for s in STARTS if s <= NOW]
FUTURE = [s for s in STARTS if s > NOW]


def _stamp(when: datetime) -> str:
    return when.strftime("%Y%m%dT%H%M%SZ")


def weekly(
    *, uid="sync-1", title="Globex weekly sync", customer="Globex", overrides="", description="Renewal status"
):
    return f"""BEGIN:VCALENDAR
VERSION:2.0
PRODID:-//test//EN
BEGIN:VEVENT
UID:{uid}
DTSTART:{_stamp(FIRST)}
DTEND:{_stamp(FIRST + timedelta(minutes=30))}
RRULE:FREQ=WEEKLY;COUNT=8
SUMMARY:{title}
DESCRIPTION:{description}
ORGANIZER:mailto:alice@acme.com
ATTENDEE:mailto:alice@acme.com
ATTENDEE:mailto:bob@acme.com
CATEGORIES:customer:{customer}
END:VEVENT
{overrides}END:VCALENDAR
"""


def moved(*, uid="sync-1", title="Globex weekly sync", customer="Globex", original, start) -> str:
    return f"""BEGIN:VEVENT
UID:{uid}
RECURRENCE-ID:{_stamp(original)}
DTSTART:{_stamp(start)}
DTEND:{_stamp(start + timedelta(minutes=30))}
SEQUENCE:1
SUMMARY:{title}
DESCRIPTION:Renewal status
ORGANIZER:mailto:alice@acme.com
ATTENDEE:mailto:alice@acme.com
ATTENDEE:mailto:bob@acme.com
CATEGORIES:customer:{customer}
END:VEVENT
"""


@pytest.fixture
def load(tenant, django_capture_on_commit_callbacks):
    def _load(ics: str):
        with django_capture_on_commit_callbacks(execute=True):
            return ingest_all(tenant=tenant, payloads=ics_payloads(tenant=tenant, data=ics))

    return _load


def _page(api, slug="globex", user="alice"):
    response = api.get(f"/wiki/pages/{slug}", user=user)
    assert response.status_code == 200, response.content
    return response.json()


def test_weekly_series_is_one_line_with_cadence_last_and_next(api, alice, bob, load):
    load(weekly())
    (section,) = _page(api)["sections"]
    lines = section["content"].splitlines()
    assert "recurring meeting, weekly on Tuesdays at 10:00 UTC" in lines[0]
    assert f"last: Tue {PAST[-1]:%Y-%m-%d} 10:00" in lines[0]
    assert f"next: Tue {FUTURE[0]:%Y-%m-%d} 10:00" in lines[0]
    assert lines[0].index("last:") < lines[0].index("next:")  # past before future
    assert lines[1].strip() == "Renewal status"
    assert len(lines) == 2 and "When:" not in section["content"]
    for start in [*PAST[:-1], *FUTURE[1:]]:  # no other occurrence, the next only once
        assert f"{start:%Y-%m-%d}" not in section["content"]
    # The content time is the last meeting, not the furthest one ahead.
    assert section["occurred_at"].startswith(f"{PAST[-1]:%Y-%m-%d}")


def test_chinese_series_reads_in_chinese(api, alice, bob, load):
    load(weekly(uid="zh-1", title="华为周会", customer="华为"))
    (section,) = _page(api, slug="华为")["sections"]
    line = section["content"].splitlines()[0]
    assert "华为周会 — 系列会议，每周二 10:00（UTC）" in line
    assert f"上次：{PAST[-1]:%Y-%m-%d} 10:00（周二）" in line
    assert f"下次：{FUTURE[0]:%Y-%m-%d} 10:00（周二）" in line


def test_moved_occurrence_serves_its_new_time(api, alice, bob, load):
    load(weekly())
    # The next meeting is moved a day earlier, to 09:00: earlier than the version it replaces.
    new = FUTURE[0] - timedelta(days=1, hours=1)
    load(weekly(overrides=moved(original=FUTURE[0], start=new)))
    (section,) = _page(api)["sections"]
    assert f"next: Mon {new:%Y-%m-%d} 09:00 (moved)" in section["content"]
    assert f"{FUTURE[0]:%Y-%m-%d}" not in section["content"]
    # Re-reading the same feed changes nothing.
    assert load(weekly(overrides=moved(original=FUTURE[0], start=new)))["accepted"] == 0


def test_moved_past_meeting_is_last_at_its_new_time(api, alice, bob, load):
    load(weekly())
    new = PAST[-1] - timedelta(hours=2)
    load(weekly(overrides=moved(original=PAST[-1], start=new)))
    line = _page(api)["sections"][0]["content"].splitlines()[0]
    assert f"last: Tue {new:%Y-%m-%d} 08:00 (moved)" in line


def test_updated_single_event_moved_earlier_serves_the_new_time(api, alice, bob, load):
    def single(start, sequence):
        return f"""BEGIN:VCALENDAR
BEGIN:VEVENT
UID:kickoff-1
DTSTART:{_stamp(start)}
SEQUENCE:{sequence}
SUMMARY:Globex kickoff
ORGANIZER:mailto:alice@acme.com
ATTENDEE:mailto:bob@acme.com
CATEGORIES:customer:Globex
END:VEVENT
END:VCALENDAR
"""

    old, new = NOW + timedelta(days=5), NOW + timedelta(days=3)
    load(single(old, 0))
    load(single(new, 1))
    (section,) = _page(api)["sections"]
    assert f"When: {new:%Y-%m-%d}" in section["content"]
    assert f"{old:%Y-%m-%d}" not in section["content"]


def _note(minutes_day: datetime, title: str, text: str, customer="Globex") -> dict:
    return {
        "source": "notes",
        "external_id": f"{title}.md",
        "kind": "meeting_note",
        "occurred_at": minutes_day.replace(hour=0, minute=0).isoformat(),
        "container": {"key": f"notes:meeting:{title}", "name": title, "members": ["alice@acme.com"]},
        "thread_key": f"notes:meeting:{title}",
        "author": "alice@acme.com",
        "title": title,
        "text": text,
        "tags": {"customer": customer},
    }


def test_notes_of_a_meeting_attach_under_its_series(api, alice, bob, load, push):
    load(weekly())
    push(_note(PAST[-1], "Globex weekly sync notes", "Globex agreed to $172,000 per year"))
    push(_note(PAST[-1], "Globex security review", "SOC 2 report sent"))  # another meeting that day
    push(slack("Globex wants SSO", tags={"customer": "Globex"}))
    sections = _page(api)["sections"]
    series_section = next(s for s in sections if "recurring meeting" in s["content"])
    assert "$172,000 per year" in series_section["content"]
    assert any(s["source"] == "notes" for s in series_section["sources"])
    assert not any("$172,000" in s["content"] for s in sections if s is not series_section)
    assert any("SOC 2 report sent" in s["content"] for s in sections if s is not series_section)


def test_summary_dates_a_note_under_a_series_by_its_meeting(api, alice, bob, load, push):
    """A note of an earlier meeting of the series is dated by that meeting (and its author),
    not by the series' line (its last meeting, its organizer)."""
    load(weekly())
    note = _note(PAST[1], "Globex weekly sync notes", "Globex agreed to $172,000 per year")
    push(
        {**note, "author": "bob@acme.com", "container": {**note["container"], "members": ["alice@acme.com"]}}
    )
    series_section = next(s for s in _page(api)["sections"] if "recurring meeting" in s["content"])
    assert f"\n[{PAST[1]:%Y-%m-%d}] bob@acme.com: Globex weekly sync notes:" in series_section["content"]
    summary = _page(api)["summary"]
    (fact,) = [line for line in summary.splitlines() if "$172,000" in line]
    assert f"({PAST[1]:%Y-%m-%d}, bob)" in fact, summary
    assert f"{PAST[-1]:%Y-%m-%d}" not in fact


def test_context_items_read_the_series_folded(alice, bob, load, push):
    load(weekly(uid="zh-2", title="华为周会", customer="华为"))
    push(_note(PAST[-1], "华为周会纪要", "华为确认续约三年", customer="华为"))
    page = Page.objects.get(slug="华为")
    text = selectors.page_texts_for_reader(user=alice, page_ids=[page.pk], limit=5)[page.pk]
    assert len(text.newest) == 1
    (section,) = text.newest
    assert "每周二" in section.content and "华为确认续约三年" in section.content
    assert section.content.count("下次：") == 1


def test_cadence_from_starts_in_both_languages():
    tuesday = datetime(2026, 11, 3, 10, tzinfo=UTC)
    weekly_starts = [tuesday + timedelta(weeks=i) for i in range(4)]
    assert series.cadence(weekly_starts, zh=False) == "weekly on Tuesdays at 10:00 UTC"
    assert series.cadence(weekly_starts, zh=True) == "每周二 10:00（UTC）"
    fortnightly = [tuesday + timedelta(weeks=2 * i) for i in range(3)]
    assert series.cadence(fortnightly, zh=False) == "every 2 weeks on Tuesdays at 10:00 UTC"
    workdays = [tuesday + timedelta(days=i) for i in range(4)]  # Tue–Fri
    assert series.cadence(workdays, zh=True) == "每个工作日 10:00（UTC）"
    monthly = [datetime(2026, m, 5, 9, tzinfo=UTC) for m in (1, 2, 3, 4)]
    assert series.cadence(monthly, zh=False) == "monthly on day 5 at 09:00 UTC"
    # One moved meeting does not change what the series is.
    moved_one = [*weekly_starts[:2], weekly_starts[2] - timedelta(days=1), weekly_starts[3]]
    assert series.cadence(moved_one, zh=False) == "weekly on Tuesdays at 10:00 UTC"


def test_search_hits_show_a_series_as_one_line(api, alice, bob, load):
    load(weekly())
    response = api.post("/wiki/search", {"user": "alice", "query": "Globex weekly sync"})
    assert response.status_code == 200, response.content
    (hit,) = [h for r in response.json()["results"] for h in r["sections"]]
    assert "recurring meeting, weekly on Tuesdays" in hit["section"]["content"]
    assert "When:" not in hit["section"]["content"]


def test_summary_reads_a_series_as_one_line(tenant, alice, bob, load, settings):
    from wiki.services.summary import page_summary_for_reader

    load(weekly())
    page = Page.objects.get(slug="globex")
    assert page_summary_for_reader(user=alice, page=page).count("Globex weekly sync") == 1


def test_pushed_occurrences_of_one_calendar_thread_fold_too(api, alice, bob, push):
    for start in STARTS:
        push(
            {
                "source": "calendar",
                "external_id": f"g-7_{start:%Y%m%d}",
                "kind": "calendar_event",
                "occurred_at": start.isoformat(),
                "container": {
                    "key": "calendar:event:g-7",
                    "name": "Globex weekly sync",
                    "members": ["alice@acme.com"],
                },
                "thread_key": "calendar:event:g-7",
                "author": "alice@acme.com",
                "title": "Globex weekly sync",
                "text": f"When: {start:%Y-%m-%d %H:%M}",
                "tags": {"customer": "Globex"},
            }
        )
    (section,) = _page(api)["sections"]
    assert section["content"].count("\n") == 0 and "weekly on Tuesdays at 10:00 UTC" in section["content"]


def test_a_moved_meeting_beyond_the_next_keeps_its_new_time_on_the_line(api, alice, bob, load):
    load(weekly())
    new = FUTURE[2] - timedelta(days=1, hours=1)  # the third meeting to come, a day earlier
    load(weekly(overrides=moved(original=FUTURE[2], start=new)))
    line = _page(api)["sections"][0]["content"].splitlines()[0]
    assert f"next: Tue {FUTURE[0]:%Y-%m-%d} 10:00" in line
    assert f"also Mon {new:%Y-%m-%d} 09:00 (moved)" in line


def test_a_moved_meeting_beyond_the_next_in_chinese(api, alice, bob, load):
    load(weekly(uid="zh-2", title="华为周会", customer="华为"))
    new = FUTURE[1] + timedelta(days=2)
    load(
        weekly(
            uid="zh-2",
            title="华为周会",
            customer="华为",
            overrides=moved(uid="zh-2", title="华为周会", customer="华为", original=FUTURE[1], start=new),
        )
    )
    line = _page(api, slug="华为")["sections"][0]["content"].splitlines()[0]
    assert f"另有改期：{new:%Y-%m-%d} 10:00（周四，已改期）" in line
