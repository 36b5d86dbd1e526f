"""The weekly_report skill over a generated week: what the user may see of their memories and
the wiki pages that changed, read for them (never another user's private memory or section);
the opt-in schedule keeps the report as an episodic memory of the user."""

import json
from datetime import timedelta

import pytest
from django.utils import timezone

from connectors.services.ingest import event_ingest
from memories.models import Memory
from memories.services.memories import memory_create
from skills.models import SkillOptIn, SkillRun
from skills.tasks import skill_optins_task

pytestmark = pytest.mark.django_db


def _slack(text, *, channel, public, members=None, author="alice@acme.com", n=1):
    container = {"key": f"slack:channel:{channel}", "name": f"#{channel}", "public": public}
    if members is not None:
        container["members"] = members
    return {
        "source": "slack",
        "external_id": f"{channel}/{n}",
        "version": 1,
        "kind": "message",
        "occurred_at": (timezone.now() - timedelta(days=1)).isoformat(),
        "container": container,
        "thread_key": f"slack:thread:{channel}/{n}",
        "author": author,
        "title": "",
        "text": text,
        "tags": {"customer": "Globex"},
        "url": "",
    }


@pytest.fixture
def week(tenant, alice, bob, settings, django_capture_on_commit_callbacks):
    """A week of alice's: her memories, a shared project memory of bob's, bob's private
    memory, an old memory, a public Globex thread and a private one of bob's."""
    settings.LLM_BASE_URL = ""
    settings.WIKI_SUMMARY_ENABLED = False
    soon = timezone.localdate() + timedelta(days=10)
    today = timezone.localdate()
    mine = {
        "meeting": memory_create(
            owner=alice,
            content="Met Globex to review the Apollo rollout.",
            memory_type="episodic",
            occurred_at=today - timedelta(days=2),
        )[0],
        "decision": memory_create(
            owner=alice, content="We decided to use Postgres for Apollo.", kind="decision"
        )[0],
        "open": memory_create(owner=alice, content="Still waiting on legal to confirm the Globex contract.")[
            0
        ],
        "launch": memory_create(owner=alice, content=f"The Apollo launch is on {soon.isoformat()}.")[0],
        "shared": memory_create(
            owner=bob,
            content="Bob demoed the Apollo dashboard to the board.",
            memory_type="episodic",
            scope="project",
            scope_key="Apollo",
            occurred_at=today - timedelta(days=1),
        )[0],
    }
    secret = memory_create(owner=bob, content="Bob is negotiating a raise to 200k.", memory_type="episodic")[
        0
    ]
    old = memory_create(owner=alice, content="Met Initech about the pilot.", memory_type="episodic")[0]
    Memory.objects.filter(pk=old.pk).update(created_at=timezone.now() - timedelta(days=20))
    with django_capture_on_commit_callbacks(execute=True):
        event_ingest(
            tenant=tenant,
            payload=_slack("Globex renewal: we agreed on a 2-year term.", channel="sales", public=True),
        )
    with django_capture_on_commit_callbacks(execute=True):
        event_ingest(
            tenant=tenant,
            payload=_slack(
                "Globex margin floor is 22%, keep it quiet",
                channel="finance",
                public=False,
                members=["bob@acme.com"],
                author="bob@acme.com",
                n=2,
            ),
        )
    return mine, secret, old, soon


def _sources(output, name):
    return {item["source"] for item in output[name]}


def test_weekly_report_over_a_generated_week(api, alice, week):
    mine, secret, old, soon = week
    response = api.post("/skills/weekly_report/run", {"user": "alice", "input": {}})
    assert response.status_code == 200, response.json()
    output = response.json()["output"]
    today = timezone.localdate()
    assert output["period"] == {"start": (today - timedelta(days=6)).isoformat(), "end": today.isoformat()}
    assert {f"memory:{mine['meeting'].pk}", f"memory:{mine['shared'].pk}"} <= _sources(output, "highlights")
    assert any(s.startswith("page:") for s in _sources(output, "highlights"))  # the Globex page changed
    assert f"memory:{mine['decision'].pk}" in _sources(output, "decisions")
    assert any("agreed on a 2-year term" in item["text"] for item in output["decisions"])
    assert f"memory:{mine['open'].pk}" in _sources(output, "open_items")
    assert {
        "date": soon.isoformat(),
        "text": mine["launch"].content,
        "source": f"memory:{mine['launch'].pk}",
    } in (output["upcoming"])
    said = json.dumps(output, ensure_ascii=False)
    assert "raise to 200k" not in said and "margin floor" not in said  # bob's private memory and thread
    assert f"memory:{secret.pk}" not in said and f"memory:{old.pk}" not in said
    run = SkillRun.objects.get(pk=response.json()["run_id"])
    assert run.trigger == "api" and "raise to 200k" not in json.dumps(run.input)
    # Bob's own report has what alice may not see.
    bobs = api.post("/skills/weekly_report/run", {"user": "bob", "input": {}}).json()["output"]
    assert f"memory:{secret.pk}" in json.dumps(bobs)


def test_the_period_is_the_callers(api, alice, week):
    mine, *_ = week
    until = (timezone.localdate() - timedelta(days=30)).isoformat()
    output = api.post(
        "/skills/weekly_report/run", {"user": "alice", "input": {"until": until, "days": 3}}
    ).json()
    assert output["output"]["period"]["end"] == until
    assert all(not output["output"][name] for name in ("highlights", "decisions", "open_items"))
    bad = api.post("/skills/weekly_report/run", {"user": "alice", "input": {"days": 90}})
    assert bad.status_code == 422 and bad.json()["field"] == "days"


def test_an_llm_report_cites_given_items_and_falls_back_truthfully(api, alice, week, chat_server):
    mine, *_ = week
    invented = {
        "highlights": [{"text": "Made up", "source": "memory:999999"}],
        "decisions": [],
        "open_items": [],
        "upcoming": [],
    }
    chat_server.script = [json.dumps(invented)] * 3
    response = api.post("/skills/weekly_report/run", {"user": "alice", "input": {"lang": "en"}})
    body = response.json()
    assert response.status_code == 200 and body["used_llm"] is False  # the offline report stood in
    assert f"memory:{mine['decision'].pk}" in _sources(body["output"], "decisions")
    assert SkillRun.objects.get(pk=body["run_id"]).status == "fallback"
    good = {
        "highlights": [{"text": "Globex review", "source": f"memory:{mine['meeting'].pk}"}],
        "decisions": [{"text": "Postgres for Apollo", "source": f"memory:{mine['decision'].pk}"}],
        "open_items": [],
        "upcoming": [],
    }
    chat_server.script = [json.dumps(good)]
    body = api.post("/skills/weekly_report/run", {"user": "alice", "input": {}}).json()
    assert body["used_llm"] is True and body["output"]["decisions"] == good["decisions"]
    sent = chat_server.requests[-1]["messages"][1]["content"]
    assert "Postgres for Apollo" in sent and "raise to 200k" not in sent


def test_the_schedule_keeps_a_report_for_who_opted_in(alice, bob, week):
    mine, secret, *_ = week
    SkillOptIn.objects.create(user=alice, skill_name="weekly_report")
    assert skill_optins_task() == 1
    assert skill_optins_task() == 0  # not due again for a week
    report = Memory.objects.get(owner=alice, kind="summary")
    assert report.memory_type == "episodic" and report.scope == "user"
    assert report.content.startswith("Weekly report") and "Postgres for Apollo" in report.content
    assert "raise to 200k" not in report.content
    assert report.meta["skill"] == "weekly_report" and report.meta["method"] == "offline"
    assert SkillRun.objects.get(pk=report.meta["run_id"]).trigger == "schedule"
    assert not Memory.objects.filter(owner=bob, kind="summary").exists()  # bob did not opt in
    SkillOptIn.objects.filter(user=alice).update(last_run_at=timezone.now() - timedelta(days=7, minutes=1))
    assert skill_optins_task() == 1


def test_the_schedule_is_set_up():
    from django_q.models import Schedule

    from almanac.schedules import setup_schedules

    assert "skills-opted-in" in setup_schedules()
    schedule = Schedule.objects.get(name="skills-opted-in")
    assert (schedule.func, schedule.minutes) == ("skills.tasks.skill_optins_task", 60)
