"""Who reads a recurring meeting: each occurrence keeps its own readers (its attendees), and
the series' line is read by whoever may read at least one of its occurrences, built from the
occurrences that reader may read (`wiki.series`, `connectors.calendar.normalize`). A
cancelled or moved occurrence changes only itself."""

from datetime import UTC, datetime, timedelta

import pytest
from django.core.management import call_command
from django.db import transaction
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from almanac.services.users import user_create
from connectors.calendar.normalize import ics_payloads
from connectors.services.importer import ingest_all
from wiki import selectors
from wiki.models import Page
from wiki.services.backlog import compile_pending

NOW = datetime.now(UTC)
# A Tuesday at 10:00 UTC three to four weeks ago: 4 meetings have happened, 4 are to come.
FIRST = (NOW - timedelta(days=21 + (NOW.weekday() - 1) % 7)).replace(
    hour=10, minute=0, second=0, microsecond=0
)
STARTS = [FIRST + timedelta(weeks=i) for i in range(8)]
PEOPLE = ("alice", "bob", "carol", "dave")


def _stamp(when: datetime) -> str:
    return when.strftime("%Y%m%dT%H%M%SZ")


def _vevent(*, attendees, start, original=None, cancelled=False, rrule=False, sequence=1) -> str:
    lines = ["BEGIN:VEVENT", "UID:globex-sync", f"DTSTART:{_stamp(start)}"]
    lines += [f"DTEND:{_stamp(start + timedelta(minutes=30))}", "SUMMARY:Globex weekly sync"]
    if rrule:
        lines.append(f"RRULE:FREQ=WEEKLY;COUNT={len(STARTS)}")
    if original is not None:
        lines += [f"RECURRENCE-ID:{_stamp(original)}", f"SEQUENCE:{sequence}"]
    if cancelled:
        lines.append("STATUS:CANCELLED")
    lines += ["ORGANIZER:mailto:alice@acme.com", *[f"ATTENDEE:mailto:{p}@acme.com" for p in attendees]]
    return "\n".join([*lines, "CATEGORIES:customer:Globex", "END:VEVENT"]) + "\n"


def _calendar(series: list[str], overrides: dict[int, tuple[list[str], bool, int]], newer=()) -> str:
    """The series (its attendees) and its overrides: occurrence index → (attendees,
    cancelled, hours moved); those in `newer` a later revision (SEQUENCE 2)."""
    events = [_vevent(attendees=series, start=FIRST, rrule=True)]
    for index, (attendees, cancelled, hours) in sorted(overrides.items()):
        original, sequence = STARTS[index], 2 if index in newer else 1
        start = original + timedelta(hours=hours)
        events.append(
            _vevent(
                attendees=attendees, start=start, original=original, cancelled=cancelled, sequence=sequence
            )
        )
    return "BEGIN:VCALENDAR\nVERSION:2.0\nPRODID:-//test//EN\n" + "".join(events) + "END:VCALENDAR\n"


@pytest.fixture
def people(tenant):
    return {name: user_create(tenant=tenant, username=name, email=f"{name}@acme.com") for name in PEOPLE}


def test_a_cancelled_occurrence_listing_only_its_organizer_keeps_the_invitee_on_the_series(
    api, tenant, people, tmp_path, django_capture_on_commit_callbacks
):
    """The reproduction: the .ics importer, then the customer page as the invitee."""
    path = tmp_path / "calendar.ics"
    path.write_text(_calendar(["alice", "bob"], {5: (["alice"], True, 0)}))
    with django_capture_on_commit_callbacks(execute=True):
        call_command("import_ics", str(path), "--no-progress")
    for reader in ("bob", "alice"):
        response = api.get("/wiki/pages/globex", user=reader)
        assert response.status_code == 200, response.content
        (section,) = response.json()["sections"]
        assert "Globex weekly sync — recurring meeting, weekly on Tuesdays" in section["content"]
    # The cancelled meeting is on nobody's line.
    assert f"{STARTS[5]:%Y-%m-%d}" not in section["content"]
    assert api.get("/wiki/pages/globex", user="carol").status_code == 404


def _occurrences_read(tenant, people) -> dict[str, set[datetime]]:
    """Per person: the occurrences (their starts) on the series line they are shown, in the
    page API's sections and the context's items alike."""
    page = Page.objects.filter(tenant=tenant, slug="globex").first()
    seen = {}
    for name, user in people.items():
        rendered = selectors.page_sections_rendered(user=user, page=page) if page else []
        assert len(rendered) <= 1  # the series is one line, or nothing
        sources = [s for section in rendered for s in section.sources if s.get("source") == "calendar"]
        if len(sources) > 1:
            assert "recurring meeting" in rendered[0].content
        seen[name] = {datetime.fromisoformat(s["occurred_at"]).astimezone(UTC) for s in sources}
        # The context's items read the same line.
        texts = selectors.page_texts_for_reader(user=user, page_ids=[page.pk], limit=20) if page else {}
        newest = texts[page.pk].newest if page else []
        assert [s.content for s in newest] == [s.content for s in rendered], name
    return seen


def _import(tenant, calendar: str, capture) -> None:
    """An import, then the wiki compiled in one batch (`wiki_compile`)."""
    ingest_all(tenant=tenant, payloads=ics_payloads(tenant=tenant, data=calendar))
    with capture(execute=True):
        compile_pending(tenant=tenant)


attendees = st.lists(st.sampled_from(PEOPLE[1:]), unique=True, max_size=3)
override = st.tuples(attendees, st.booleans(), st.sampled_from([0, -2, 3]))


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    series=attendees,
    before=st.dictionaries(st.integers(0, len(STARTS) - 1), override, max_size=3),
    changed=st.integers(0, len(STARTS) - 1),
    change=override,
)
# An override moved and listing others, then put back at its time with fewer people.
@example(series=["bob", "carol"], before={2: (["bob"], False, 3)}, changed=2, change=([], False, 0))
# A cancelled occurrence, then held after all, two hours earlier.
@example(series=[], before={1: ([], True, 0)}, changed=1, change=([], False, -2))
def test_changing_one_occurrence_changes_access_to_that_occurrence_only(
    tenant, people, django_capture_on_commit_callbacks, series, before, changed, change
):
    """Random attendee lists, cancellations and moves: after one occurrence changes, every
    person reads the same occurrences as before, except that one, which the people it now
    lists (and no one else) read, unless it was cancelled."""
    capture = django_capture_on_commit_callbacks
    series = ["alice", *series]
    with transaction.atomic():
        _import(tenant, _calendar(series, before), capture)
        first = _occurrences_read(tenant, people)
        _import(tenant, _calendar(series, {**before, changed: change}, newer={changed}), capture)
        second = _occurrences_read(tenant, people)
        transaction.set_rollback(True)
    old = STARTS[changed] + timedelta(hours=before.get(changed, ([], False, 0))[2])
    attendees_now, cancelled, hours = change
    new = STARTS[changed] + timedelta(hours=hours)
    readers_now = set() if cancelled else {"alice", *attendees_now}
    for name in PEOPLE:
        assert first[name] - {old} == second[name] - {new}, name
        assert (new in second[name]) == (name in readers_now), name


def test_notes_of_an_occurrence_keep_their_own_readers(
    tenant, people, push, django_capture_on_commit_callbacks
):
    """The notes of a meeting are read by the note's attendees: under the series line for
    those who read the series too, on their own for the others; never by a series reader
    who is not on the note."""
    _import(tenant, _calendar(["alice", "bob"], {}), django_capture_on_commit_callbacks)
    push(
        {
            "source": "notes",
            "external_id": "sync-notes.md",
            "kind": "meeting_note",
            "occurred_at": STARTS[1].replace(hour=0).isoformat(),
            "container": {
                "key": "notes:meeting:sync",
                "name": "Globex weekly sync notes",
                "members": ["bob@acme.com", "carol@acme.com"],
            },
            "thread_key": "notes:meeting:sync",
            "author": "bob@acme.com",
            "title": "Globex weekly sync notes",
            "text": "Globex asks for SSO",
            "tags": {"customer": "Globex"},
        }
    )
    page = Page.objects.get(tenant=tenant, slug="globex")

    def shown(name):
        return [s.content for s in selectors.page_sections_rendered(user=people[name], page=page)]

    (bob,) = shown("bob")
    assert "recurring meeting" in bob and "Globex asks for SSO" in bob
    (carol,) = shown("carol")
    assert "Globex asks for SSO" in carol and "recurring meeting" not in carol
    (alice,) = shown("alice")
    assert "recurring meeting" in alice and "SSO" not in alice
    assert shown("dave") == []


def test_search_shows_a_series_with_occurrences_of_their_own_as_one_hit(
    api, tenant, people, django_capture_on_commit_callbacks
):
    """An occurrence with readers of its own is a section of its own: a reader of both reads
    one line, in search hits too; a reader of that occurrence only, that occurrence."""
    _import(
        tenant,
        _calendar(["alice", "bob"], {5: (["alice", "carol"], False, 0)}),
        django_capture_on_commit_callbacks,
    )
    for reader, occurrences in (("alice", len(STARTS)), ("bob", len(STARTS) - 1), ("carol", 1)):
        response = api.post("/wiki/search", {"user": reader, "query": "Globex weekly sync"})
        assert response.status_code == 200, response.content
        (hit,) = [h for r in response.json()["results"] for h in r["sections"]]
        assert len([s for s in hit["section"]["sources"] if s["source"] == "calendar"]) == occurrences
        assert ("recurring meeting" in hit["section"]["content"]) == (occurrences > 1)
