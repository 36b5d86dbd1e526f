"""bench/quality/company_exports.py: the generated company is the same for a seed, every
question's facts are in the exports it writes, and the exports import with the documented
commands without a rejected item."""

import io
from collections import Counter

from django.core.management import call_command

from almanac.services.users import user_create
from bench.quality import company_exports as gen
from connectors.calendar.normalize import ics_payloads
from connectors.models import Event
from connectors.services.importer import ingest_all


def test_generator_is_deterministic_per_seed(tmp_path):
    first, again, other = gen.company(0), gen.company(0), gen.company(1)
    assert first.questions == again.questions
    assert [c.name for c in first.customers] == [c.name for c in again.customers]
    assert first.questions != other.questions
    gen.write_exports(first, tmp_path / "a")
    gen.write_exports(again, tmp_path / "b")
    assert gen.export_text(tmp_path / "a") == gen.export_text(tmp_path / "b")


def test_every_question_fact_is_in_the_exports(tmp_path):
    co = gen.company()
    gen.write_exports(co, tmp_path)
    text = gen.export_text(tmp_path)
    assert 60 <= len([q for q in co.questions if q["kind"] in ("fact", "update")]) <= 80
    missing = [(q["id"], s) for q in co.questions for s in q["needs"] + q["must_not"] if s not in text]
    assert missing == []
    # a replaced value (a recalled total, a moved meeting's old time) is nobody's needed fact;
    # a private one is needed by some askers and forbidden to others, never both in one question
    needed = {s for q in co.questions for s in q["needs"]}
    assert not needed & {s for q in co.questions for s in q["stale"]}
    assert all(not set(q["needs"]) & set(q["must_not"]) for q in co.questions)


def test_questions_cover_sources_languages_and_leaks():
    co = gen.company()
    qs = co.questions
    assert set(Counter(q["source"] for q in qs)) == set(gen.SOURCES)
    assert {q["lang"] for q in qs} == {"en", "zh"}
    langs = {c.name: c.lang for c in co.customers}
    assert {(langs[q["customer"]], q["lang"]) for q in qs if q["customer"]} == {
        ("en", "en"), ("en", "zh"), ("zh", "zh"), ("zh", "en")
    }  # fmt: skip
    assert any(q["must_not"] for q in qs) and any(q["stale"] for q in qs)
    deal_desk = set(co.channels["deal-desk"][2])
    floors = {c.facts["floor"][1] for c in co.customers if "floor" in c.facts}
    for q in qs:  # a floor price is needed only by members of the private channel
        assert not (set(q["needs"]) & floors) or q["user"] in deal_desk
        assert not (set(q["must_not"]) & floors) or q["user"] not in deal_desk


def test_exports_import_with_the_documented_commands(tenant, tmp_path):
    co = gen.company()
    for p in co.people:
        user_create(tenant=tenant, username=p.login, email=p.email, departments=[p.dept])
    files = gen.write_exports(co, tmp_path)
    out = io.StringIO()
    for kind, command in (("slack", "import_slack"), ("email", "import_mbox"), ("notes", "import_notes")):
        call_command(
            command, str(files[kind][0]), tenant=tenant.slug, no_progress=True, stdout=out, stderr=out
        )
    for path in files["github"]:
        call_command("import_github", str(path), tenant=tenant.slug, no_progress=True, stdout=out, stderr=out)
    summaries = [line for line in out.getvalue().splitlines() if "new events" in line]
    assert len(summaries) == 5 and all(" 0 rejected" in line for line in summaries), out.getvalue()
    for index, path in enumerate(files["calendar"]):
        payloads = ics_payloads(tenant=tenant, data=path.read_bytes(), now=gen.CALENDAR_EXPORTS[index])
        assert "rejected" not in ingest_all(tenant=tenant, payloads=payloads)
    kinds = Counter(Event.objects.filter(tenant=tenant).values_list("kind", flat=True))
    assert kinds["email_recalled"] == 3
    assert kinds["pull_request"] >= 8 and kinds["issue"] >= 8 and kinds["meeting_note"] == len(co.notes)
    # the later calendar snapshot moved meetings: a second version of those occurrences
    moved = Event.objects.filter(tenant=tenant, source__name="calendar", version=2).count()
    assert moved == sum(1 for c in co.customers if "meeting_new" in c.facts)
