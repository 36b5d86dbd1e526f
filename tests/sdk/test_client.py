"""Every method of the Python client against the live test server (docs/api.md)."""

from __future__ import annotations

import time

import pytest
from almanac_client import (
    AlmanacError,
    BadRequest,
    Client,
    Conflict,
    Forbidden,
    Invalid,
    NotFound,
    RateLimited,
    Unauthorized,
    Unavailable,
)

from almanac.services.keys import agentkey_create
from tests.context.conftest import SALES, payload_of, push

MAIL = {"key": "email:thread:renewal", "name": "Renewal", "members": ["alice@acme.com"], "public": False}


def test_context_pages_yields_every_pass_until_no_cursor(sdk, vercel):
    passes = list(sdk.context_pages("Vercel renewal seats", max_tokens=4000, lang="en"))
    assert len(passes) >= 2
    assert all(p["next_cursor"] for p in passes[:-1]) and passes[-1]["next_cursor"] is None
    assert "[Company knowledge]\n## Vercel" in passes[0]["prompt"]
    seen = [item["id"] for p in passes for block in p["blocks"] for item in block["items"]]
    assert len(seen) == len(set(seen)) and sum("renewal note" in p["prompt"] for p in passes) >= 2
    assert len(list(sdk.context_pages("Vercel renewal seats", max_tokens=4000, max_passes=1))) == 1


def test_memories_crud_search_and_feedback(sdk, alice):
    created = sdk.memory_create("I prefer one-page proposals.", importance=0.7)
    assert created["content"] == "I prefer one-page proposals." and created["kind"] == "preference"
    again = sdk.memory_create("I prefer one-page proposals.")
    assert again["duplicate_of"] == created["id"]
    assert sdk.memory(created["id"])["importance"] == 0.7
    assert [m["id"] for m in sdk.memories(kind="preference")["items"]] == [created["id"]]
    assert sdk.memory_update(created["id"], content="I prefer two-page proposals.")["content"].startswith(
        "I prefer two"
    )
    [hit] = sdk.memories_search("two-page proposals", top_k=3)
    assert hit["memory"]["id"] == created["id"] and "rrf" in hit["breakdown"]
    feedback = sdk.memory_feedback(created["id"], "adopted")
    assert feedback["quality"] > feedback["quality_before"]
    assert sdk.memory_delete(created["id"]) is None
    with pytest.raises(NotFound) as error:
        sdk.memory(created["id"])
    assert error.value.status == 404 and error.value.detail


def test_sessions_turns_window_and_end(sdk, alice):
    session = sdk.session_create()
    turn = sdk.session_turn(session["id"], "user", "Draft the Vercel renewal proposal")
    assert turn["role"] == "user" and turn["tokens"] > 0
    sdk.session_turn(session["id"], "assistant", "Here is a draft.", user=None)
    window = sdk.session_window(session["id"])
    assert [t["role"] for t in window["turns"]] == ["user", "assistant"]
    assert sdk.session_end(session["id"])["status"] != "open"
    with pytest.raises(Conflict) as error:
        sdk.session_turn(session["id"], "user", "one more")
    assert error.value.status == 409


def test_wiki_pages_search_and_confirm(sdk, tenant, alice):
    push(
        tenant,
        container=SALES,
        tags={"customer": "Vercel"},
        text="Vercel renewal is due 2026-12-15 at ¥120,000.",
    )
    assert "vercel" in {p["slug"] for p in sdk.wiki_pages(kind="customer")}
    assert "¥120,000" in str(sdk.wiki_page("vercel")["sections"])
    assert sdk.wiki_search("Vercel renewal")[0]["page"]["slug"] == "vercel"
    recalled = payload_of(
        container=MAIL,
        source="email",
        kind="email",
        text="Vercel list price is 40k.",
        tags={"customer": "Vercel"},
    )
    from connectors.services.ingest import event_ingest
    from wiki.services.backlog import compile_pending

    event_ingest(tenant=tenant, payload=recalled)
    event_ingest(
        tenant=tenant,
        payload=dict(recalled, version=2, kind="email_recalled", occurred_at="2026-11-30T11:00:00Z"),
    )
    compile_pending(tenant=tenant)
    page = sdk.wiki_page("vercel")
    assert page["stale_sections"] == 1
    assert (
        sdk.wiki_confirm("vercel", page["stale_section_ids"], reason="the quote stands")
        == page["stale_section_ids"]
    )
    with pytest.raises(NotFound):
        sdk.wiki_page("no-such-page")


def test_events_push_and_connectors(live_server, tenant, alice, connector_key):
    event = payload_of(container=SALES, text="Apollo ships on Friday.", tags={"project": "Apollo"})
    with Client(live_server.url, connector_key) as connector:
        assert connector.events_push([event]) == {"accepted": 1, "duplicates": 0}
        assert connector.events_push([event]) == {"accepted": 0, "duplicates": 1}
        assert "slack" in {row["name"] for row in connector.connectors()}
        with pytest.raises(Invalid) as error:
            connector.events_push([event, dict(event, external_id="x2", occurred_at="3999-01-01T00:00:00Z")])
        assert error.value.body.get("index") == 1


def test_skills_list_and_run(sdk, alice, settings):
    settings.LLM_BASE_URL = ""
    assert "summarize" in {s["name"] for s in sdk.skills()}
    run = sdk.skill_run("weekly_report", {"days": 7, "lang": "en"})
    assert run["run_id"] and run["used_llm"] is False and "highlights" in run["output"]
    with pytest.raises(Invalid) as error:
        sdk.skill_run("weekly_report", {"days": 99})
    assert error.value.body["field"] == "days"


def test_documents_upload_get_delete(sdk, alice, tmp_path):
    path = tmp_path / "terms.md"
    path.write_text("# Terms\n\nPayment is due within 30 days.\n")
    document = sdk.document_upload(path)
    assert document["filename"] == "terms.md" and document["format"] == "markdown"
    assert sdk.document_upload(path.read_bytes(), filename="again.md")["id"] == document["id"]
    assert sdk.document(document["id"])["sha256"] == document["sha256"]
    sdk.document_delete(document["id"])
    with pytest.raises(NotFound):
        sdk.document(document["id"])
    with pytest.raises(AlmanacError) as error:
        sdk.document_upload(b"\x89PNG\r\n\x1a\n" + bytes(32), filename="x.png")
    assert error.value.status == 415 and "PNG" in error.value.detail


def test_me_and_health(sdk, alice):
    me = sdk.me()
    assert (me["username"], me["tenant"]) == ("alice", "acme") and "project:apollo" in str(
        me["groups"]
    ).lower()
    assert sdk.health()["status"] == "ok"


def test_errors_carry_status_and_detail(sdk, live_server, tenant, alice, mallory):
    with Client(live_server.url, "not-a-key", user="alice") as stranger, pytest.raises(Unauthorized) as error:
        stranger.me()
    assert error.value.status == 401 and error.value.detail
    with pytest.raises(NotFound):
        sdk.me(user="mallory")
    _, connector_only = agentkey_create(
        tenant=tenant, name="push-only", can_push_events=True, can_act_for_users=False
    )
    with Client(live_server.url, connector_only, user="alice") as pusher, pytest.raises(Forbidden) as error:
        pusher.session_create()
    assert "act for users" in error.value.detail
    with pytest.raises(BadRequest):
        sdk.context("Vercel renewal", cursor="tampered")
    with pytest.raises(Invalid) as error:
        sdk.context("x", max_tokens=0)
    assert isinstance(error.value.detail, list) and error.value.detail[0]["loc"]


def test_a_429_is_retried_after_retry_after(live_server, tenant, alice):
    _, key = agentkey_create(tenant=tenant, name="slow", rate_limit="1/s")
    waits: list[float] = []

    def sleep(seconds):
        waits.append(seconds)
        time.sleep(seconds)

    with Client(live_server.url, key, user="alice", sleep=sleep) as client:
        started = time.monotonic()
        assert [client.me()["username"] for _ in range(3)] == ["alice"] * 3
    assert waits and all(0 < w <= 1 for w in waits)
    assert time.monotonic() - started >= 1.0


def test_a_429_beyond_the_retries_raises_rate_limited(live_server, tenant, alice):
    _, key = agentkey_create(tenant=tenant, name="tight", rate_limit="1/m")
    slept: list[float] = []
    with Client(live_server.url, key, user="alice", sleep=slept.append, max_retries=2) as client:
        client.me()
        with pytest.raises(RateLimited) as error:
            client.me()
    assert error.value.status == 429 and 0 < error.value.retry_after <= 60
    assert len(slept) == 2 and all(0 < s <= 60 for s in slept)


def test_a_503_is_retried_then_raised_with_its_body(sdk, alice, settings):
    from skills.models import Skill, SkillRun

    settings.LLM_BASE_URL = ""
    Skill.objects.create(name="tone", prompt="Rate {text}.", input_schema={"type": "object"})
    with pytest.raises(Unavailable) as error:
        sdk.skill_run("tone", {"text": "hello"})
    assert error.value.status == 503 and error.value.body["run_id"]
    assert SkillRun.objects.filter(skill_name="tone").count() == sdk.max_retries + 1
    assert sdk.slept == [0.5, 1.0, 2.0]  # no Retry-After: backoff doubling
