"""POST /api/v1/context end to end: selection, labels, ACL, warnings, cursor, bad input."""

from __future__ import annotations

import json

from almanac.search.tokens import count_tokens
from tests.context.conftest import RENEWAL_DUE


def context(api, **body):
    body.setdefault("user", "alice")
    response = api.post("/context", body)
    assert response.status_code == 200, response.content
    return response.json()


def everything(data) -> str:
    return data["prompt"] + json.dumps(data["blocks"], ensure_ascii=False)


def test_context_for_a_customer_task_in_english(api, company):
    data = context(api, task="Draft the Vercel renewal proposal", max_tokens=3000)
    assert data["lang"] == "en"
    assert data["prompt"].startswith("[Company knowledge]\n## Vercel")
    assert "[Long-term memory]\n- Alice prefers renewal proposals" in data["prompt"]
    assert "[Related past events]\n- 2025-03-12 Met the Vercel CTO" in data["prompt"]
    assert "sources: slack #sales 2026-11-30" in data["prompt"]
    assert data["budget"]["used"] == count_tokens(data["prompt"]) <= 3000
    wiki = next(b for b in data["blocks"] if b["kind"] == "wiki")
    assert wiki["items"][0]["title"] == "Vercel"
    assert wiki["items"][0]["sources"][0]["url"] == "https://acme.slack.com/archives/CSALES/p1"
    assert "¥120,000" in wiki["items"][0]["text"]


def test_chinese_task_gets_chinese_labels(api, company):
    data = context(api, task="为 Vercel 起草续约提案")
    assert data["lang"] == "zh"
    # A customer's open items are the page's (docs/wiki.md, Status), not the prompt's: its
    # sections say them.
    assert data["prompt"].startswith("[公司知识]\n## Vercel（最新：2026-11-30）（来源：")
    assert f"renewal due {RENEWAL_DUE}" in data["prompt"]
    assert "[长期记忆]" in data["prompt"] and "[相关历史事件]\n- 2025-03-12 " in data["prompt"]
    assert context(api, task="为 Vercel 起草续约提案", lang="en")["prompt"].startswith("[Company knowledge]")


def test_private_sections_and_memories_stay_private(api, company):
    for user in ("alice", "charlie"):
        data = context(api, user=user, task="Vercel discount and unpaid invoice")
        assert "FINANCE-ONLY-MARKER" not in everything(data)
        assert "BOB-PRIVATE-MEMORY" not in everything(data)
    bob = context(api, user="bob", task="Vercel discount and unpaid invoice")
    assert "FINANCE-ONLY-MARKER" in everything(bob)
    assert "BOB-PRIVATE-MEMORY" in everything(bob)


def test_private_section_disappears_right_after_revocation(api, company, bob):
    from almanac.selectors import group_get
    from almanac.services.tenancy import membership_remove

    task = "Vercel discount ceiling"
    assert "FINANCE-ONLY-MARKER" in everything(context(api, user="bob", task=task))
    membership_remove(user=bob, group=group_get(tenant=company, key="slack:channel:CFIN"))
    assert "FINANCE-ONLY-MARKER" not in everything(context(api, user="bob", task=task))


def test_project_memory_disappears_when_the_user_leaves_the_project(api, company, alice):
    from almanac.services.users import user_set_projects
    from memories.services.memories import memory_create

    memory_create(
        owner=alice,
        content="APOLLO-TEAM-NOTE: the Apollo launch moves to Q2.",
        scope="project",
        scope_key="Apollo",
    )
    assert "APOLLO-TEAM-NOTE" in everything(context(api, task="When is the Apollo launch?"))
    user_set_projects(user=alice, names=[])
    assert "APOLLO-TEAM-NOTE" not in everything(context(api, task="When is the Apollo launch?"))


def test_entity_named_page_ranks_first(api, company):
    from tests.context.conftest import SALES, push

    # Many sections about renewals that never name Zephyr; the task names Zephyr.
    for i in range(4):
        push(
            company,
            container=SALES,
            tags={"customer": f"Customer{i}"},
            text=f"Customer{i} renewal pricing and renewal terms, renewal call {i}.",
        )
    data = context(api, task="renewal pricing renewal terms for Zephyr")
    wiki = next(b for b in data["blocks"] if b["kind"] == "wiki")
    assert wiki["items"][0]["title"] == "Zephyr"
    assert "Zephyr" in data["entities"]


def test_an_entity_whose_page_the_user_cannot_see_is_not_named(api, company, bob):
    from almanac.selectors import group_get
    from almanac.services.tenancy import membership_remove
    from tests.context.conftest import FINANCE, push

    # The only section about Nightingale is in the finance channel (bob is a member).
    push(
        company, container=FINANCE, tags={"customer": "Nightingale Holdings"}, text="Nightingale LOI signed."
    )
    task = "Prepare a briefing on nightingale"
    assert "Nightingale Holdings" in context(api, user="bob", task=task)["entities"]
    for user in ("alice", "charlie"):
        data = context(api, user=user, task=task)
        assert data["entities"] == []
        assert "Nightingale Holdings" not in json.dumps(data, ensure_ascii=False)
    membership_remove(user=bob, group=group_get(tenant=company, key="slack:channel:CFIN"))
    assert context(api, user="bob", task=task)["entities"] == []
    # Ids written in the task are the task's own words: still reported.
    assert context(api, user="alice", task="nightingale PRD-2024-013")["entities"] == ["PRD-2024-013"]


def test_second_pass_returns_the_next_items_without_repeats(api, company):
    from memories.services.memories import memory_create
    from tests.context.conftest import SALES, push

    alice = company.profiles.get(user__username="alice").user
    for i in range(6):
        push(
            company,
            container=SALES,
            tags={"customer": f"Renewal Co {i}"},
            text=f"Renewal Co {i}: renewal of the contract is due, renewal amount ${i},000.",
        )
    for i in range(12):
        memory_create(
            owner=alice, content=f"Renewal fact number {i}: customer {i} renews every {i + 1} years."
        )
    seen: set[tuple[str, str]] = set()
    cursor, passes = None, 0
    while True:
        data = context(api, task="contract renewal", max_tokens=400, cursor=cursor)
        returned = {(b["kind"], i["id"]) for b in data["blocks"] for i in b["items"]}
        assert returned, "a pass with a cursor returned nothing"
        assert not returned & seen, f"repeated: {returned & seen}"
        assert data["budget"]["used"] <= 400
        seen |= returned
        passes += 1
        cursor = data["next_cursor"]
        if cursor is None or passes > 10:
            break
    assert passes >= 2 and cursor is None
    assert sum(1 for kind, _ in seen if kind == "wiki") >= 6


def test_only_the_memories_returned_count_as_accessed(api, company, django_capture_on_commit_callbacks):
    from memories.models import Memory
    from memories.services import touches
    from memories.services.memories import memory_create

    alice = company.profiles.get(user__username="alice").user
    for i in range(12):
        memory_create(
            owner=alice, content=f"Renewal fact number {i}: customer {i} renews every {i + 1} years."
        )
    touches.flush()
    Memory.objects.update(access_count=0, last_access=None)
    with django_capture_on_commit_callbacks(execute=True):
        data = context(api, task="contract renewal facts", max_tokens=300)
    touches.flush()
    returned = {
        int(item["id"]) for block in data["blocks"] if block["kind"] != "wiki" for item in block["items"]
    }
    # Recall finds all of alice's memories; only 8 semantic ones are candidates, and the
    # budget may leave some out. Only those the agent got count as accessed.
    assert 0 < len(returned) < Memory.objects.filter(owner=alice).count()
    accessed = set(Memory.objects.filter(access_count__gt=0).values_list("id", flat=True))
    assert accessed == returned
    assert set(Memory.objects.filter(id__in=returned).values_list("access_count", flat=True)) == {1}


def test_cursor_of_another_user_or_task_is_refused(api, company):
    from memories.services.memories import memory_create

    alice = company.profiles.get(user__username="alice").user
    for i in range(12):
        memory_create(owner=alice, content=f"Vercel fact {i}: the account has {i} seats in region {i}.")
    cursor = context(api, task="Vercel account seats", max_tokens=200)["next_cursor"]
    assert cursor
    assert (
        api.post("/context", {"user": "bob", "task": "Vercel account seats", "cursor": cursor}).status_code
        == 400
    )
    assert (
        api.post("/context", {"user": "alice", "task": "something else", "cursor": cursor}).status_code == 400
    )
    assert (
        api.post(
            "/context", {"user": "alice", "task": "Vercel account seats", "cursor": cursor[:-3] + "abc"}
        ).status_code
        == 400
    )
    assert (
        api.post(
            "/context", {"user": "alice", "task": "Vercel account seats", "cursor": "garbage"}
        ).status_code
        == 400
    )


def test_lagging_source_is_warned_about(api, company, no_freshness_cache):
    from connectors.models import Source
    from connectors.services.sources import sync_failure

    assert not [w for w in context(api, task="Vercel renewal")["warnings"] if w["code"] == "source_lagging"]
    sync_failure(
        source=Source.objects.get(tenant=company, name="slack"),
        error="HTTP 429 Too Many Requests",
        retry_after=600,
    )
    data = context(api, task="Vercel renewal")
    assert data["freshness"]["slack"]["state"] == "backoff"
    (warning,) = [w for w in data["warnings"] if w["code"] == "source_lagging"]
    assert "slack" in warning["detail"] and "rate limited" in warning["detail"]
    assert "429" not in warning["detail"] and "last_error" not in data["freshness"]["slack"]


def test_source_lag_beyond_threshold_is_warned_about(api, company, settings, no_freshness_cache):
    from datetime import timedelta

    from django.utils import timezone

    from connectors.models import Source, SyncCursor

    settings.SOURCE_LAG_WARNING_SECONDS = 600
    assert not [w for w in context(api, task="Vercel renewal")["warnings"] if w["code"] == "source_lagging"]
    slack = Source.objects.get(tenant=company, name="slack")  # a poller now, late by an hour
    Source.objects.filter(pk=slack.pk).update(credentials="env:SLACK_TOKEN", poll_minutes=5)
    SyncCursor.objects.update_or_create(
        source=slack, defaults={"last_success_at": timezone.now() - timedelta(hours=1)}
    )
    (warning,) = [w for w in context(api, task="Vercel renewal")["warnings"] if w["code"] == "source_lagging"]
    assert warning["items"] == ["slack"] and "behind its polling schedule" in warning["detail"]


def test_recalled_email_is_excluded_and_counted(api, company):
    from tests.context.conftest import push

    mail = {"key": "email:thread:T1", "name": "Vercel renewal thread", "public": True}
    push(
        company,
        source="email",
        kind="email",
        container=mail,
        external_id="m1",
        thread_key="email:thread:T1",
        tags={"customer": "Vercel"},
        title="Pricing",
        text="RECALLED-PRICE: Vercel gets 40% off.",
    )
    assert "RECALLED-PRICE" in everything(context(api, task="Vercel pricing"))
    push(
        company,
        source="email",
        kind="email_recalled",
        container=mail,
        external_id="m1",
        version=2,
        thread_key="email:thread:T1",
        tags={"customer": "Vercel"},
        text="",
    )
    data = context(api, task="Vercel pricing")
    assert "RECALLED-PRICE" not in everything(data)
    (warning,) = [w for w in data["warnings"] if w["code"] == "stale_excluded"]
    assert warning["detail"].startswith("1 stale section")


def test_working_window_is_the_current_session(api, company, alice):
    from memories.services.sessions import session_create, turn_add

    session = session_create(user=alice)
    turn_add(session=session, role="user", content="Please draft the Vercel renewal email.")
    turn_add(session=session, role="assistant", content="Sure — which discount should I mention?")
    data = context(api, task="Vercel renewal email", session_id=session.pk)
    assert data["prompt"].endswith(
        "[Current session]\nuser: Please draft the Vercel renewal email.\nassistant: Sure — which discount should I mention?"
    )
    zh = context(api, task="Vercel 续约邮件", session_id=session.pk)
    assert "[当前会话]\n用户: Please draft" in zh["prompt"]


def test_query_count_is_bounded_and_independent_of_corpus_size(api, company, django_assert_max_num_queries):
    from memories.services.memories import memory_create
    from tests.context.conftest import SALES, push

    alice = company.profiles.get(user__username="alice").user
    with django_assert_max_num_queries(25) as small:
        context(api, task="Vercel renewal pricing", max_tokens=2000)
    for i in range(15):
        push(
            company,
            container=SALES,
            tags={"customer": f"Other {i}"},
            text=f"Other {i} renewal pricing note {i}.",
            compile=False,
        )
        memory_create(owner=alice, content=f"Renewal pricing memory {i} for customer {i}.")
    from wiki.services.backlog import compile_pending

    compile_pending(tenant=company)
    with django_assert_max_num_queries(25) as large:
        context(api, task="Vercel renewal pricing", max_tokens=2000)
    # A bigger corpus may cost a separate recall per memory type (4 queries each), nothing per row.
    assert len(large.captured_queries) <= len(small.captured_queries) + 8


def test_response_is_exactly_the_documented_schema(api, company, alice, no_freshness_cache):
    """The endpoint returns the service's dict as is: it must already be ContextOut's shape."""
    from connectors.models import Source
    from connectors.services.sources import sync_failure
    from context.schemas import ContextOut
    from memories.services.sessions import session_create, turn_add

    sync_failure(source=Source.objects.get(tenant=company, name="slack"), error="HTTP 429", retry_after=600)
    session = session_create(user=alice)
    turn_add(session=session, role="user", content="Please draft the Vercel renewal email.")
    data = context(api, task="Vercel renewal pricing", max_tokens=140, session_id=session.pk)
    assert {b["kind"] for b in data["blocks"]} >= {"wiki"}
    assert {w["code"] for w in data["warnings"]} >= {"budget_exceeded", "source_lagging"}
    assert data["freshness"]
    assert ContextOut.model_validate(data).model_dump(mode="json") == data


def test_warning_texts_follow_the_request_language(api, company, alice, no_freshness_cache):
    from connectors.models import Source
    from connectors.services.sources import sync_failure

    sync_failure(source=Source.objects.get(tenant=company, name="slack"), error="HTTP 429", retry_after=600)
    mail = Source.objects.create(tenant=company, kind="email", name="email")
    sync_failure(source=mail, error="login\nfailed", retry_after=600)
    body = {"user": "alice", "task": "Vercel renewal pricing", "max_tokens": 30}
    english = context(api, **body)
    headers = {**api.headers, "Accept-Language": "zh-hans"}
    response = api.client.post("/api/v1/context", body, content_type="application/json", headers=headers)
    chinese = response.json()
    detail = {w["code"]: w["detail"] for w in english["warnings"]}
    assert detail["budget_exceeded"].startswith("left out to stay within max_tokens — ")
    assert "these sources may be behind" in detail["source_lagging"]
    zh = {w["code"]: w["detail"] for w in chinese["warnings"]}
    assert zh["budget_exceeded"].startswith("为不超过 max_tokens 而略去：")
    assert zh["source_lagging"].startswith("以下来源可能滞后") and "slack（backoff" in zh["source_lagging"]
    assert (
        "）；" in zh["source_lagging"] and "authentication failed" in zh["source_lagging"]
    )  # one line, 中文 separator; a short reason, never the error's own text
    assert "login" not in zh["source_lagging"] and "login" not in detail["source_lagging"]
    assert "); " in detail["source_lagging"] and "\n" not in detail["source_lagging"]
    # Codes and items are the contract: the same whatever the language.
    assert [(w["code"], w["items"]) for w in chinese["warnings"]] == [
        (w["code"], w["items"]) for w in english["warnings"]
    ]


def test_a_section_is_returned_once_across_pages_and_passes(api, company, tenant, alice):
    """alice's person page shows what she wrote on the Vercel and Zephyr pages: the best-ranked
    page keeps each section, and a later pass does not bring it back on another page."""
    import re

    from wiki.services.people import directory_sync

    directory_sync(tenant=tenant)
    lines: list[str] = []
    pages: list[str] = []
    body = {"user": "alice", "task": "alice Vercel renewal Zephyr", "max_tokens": 3000}
    for _ in range(6):
        data = context(api, **body)
        for item in (i for b in data["blocks"] if b["kind"] == "wiki" for i in b["items"]):
            pages.append(item["id"])
            # a page with several containers tags each line with its container: not part of the line
            lines += [re.sub(r"^\[[^\]]*\] (?=\[)", "", ln) for ln in item["text"].splitlines() if ln.strip()]
        if not data["next_cursor"]:
            break
        body["cursor"] = data["next_cursor"]
    assert "alice" in pages  # the person page, which shares sections with the Vercel and Zephyr pages
    assert len(lines) == len(set(lines)), lines


def test_a_thread_on_two_pages_is_not_said_again_once_a_pass_returned_it_whole(api, company, settings):
    """The compiler writes one thread's section on every page it names: once a pass returned
    it whole, its copies on other pages do not come again in later passes."""
    from tests.context.conftest import SALES, push

    line = "Orca wants the Apollo pilot in eu-central-1 by 2026-12-10."
    push(company, container=SALES, tags={"customer": "Orca Corp", "project": "Apollo"}, text=line)
    push(company, container=SALES, tags={"customer": "Orca Corp"}, text="Orca budget is $40,000.")
    push(company, container=SALES, tags={"project": "Apollo"}, text="Apollo beta ships Friday.")
    task = "Orca Corp and the Apollo pilot"
    settings.CONTEXT_TOP_PAGES = 1  # one page a pass: the other copy's page comes in a later one
    whole_at, cursor, pages = None, None, []
    for n in range(10):
        data = context(api, task=task, max_tokens=600, cursor=cursor)
        pages += [
            item["id"] for block in data["blocks"] if block["kind"] == "wiki" for item in block["items"]
        ]
        wiki = [item for block in data["blocks"] if block["kind"] == "wiki" for item in block["items"]]
        if whole_at is not None:
            assert all("Orca wants the Apollo pilot" not in item["text"] for item in wiki), n
        if any("Orca wants the Apollo pilot" in item["text"] and not item["summarized"] for item in wiki):
            whole_at = n
        cursor = data["next_cursor"]
        if cursor is None:
            break
    assert whole_at is not None  # the walk said it, whole, once
    assert {"orca", "apollo"} <= set(pages)  # both pages came, the second without the copy


def test_a_pass_that_fitted_only_the_session_still_offers_the_rest(api, company, alice):
    from memories.services.memories import memory_create
    from memories.services.sessions import session_create, turn_add

    memory_create(owner=alice, content="Wifi rotates monthly.")
    session = session_create(user=alice)
    turn_add(session=session, role="user", content="ok")
    offered = []
    for budget in range(10, 80, 2):
        first = context(api, task="office wifi", max_tokens=budget, session_id=session.pk)
        if [b["kind"] for b in first["blocks"]] != ["working"]:
            continue
        assert first["next_cursor"], budget  # the next pass has no session window to pay for
        second = context(api, task="office wifi", max_tokens=budget, cursor=first["next_cursor"])
        offered += [b["kind"] for b in second["blocks"]]
    assert offered and "working" not in offered  # some budget fitted only the session, then the rest


def test_a_thread_a_summary_left_out_still_shows_on_its_other_page(api, company):
    """Which copy of a thread the fitter keeps whole is only known after fitting: in one call,
    the copy on another page is not left out because the first page also showed it."""
    from tests.context.conftest import SALES, push

    line = "Apollo kickoff: the team agreed the rollout plan and the owners for each workstream"
    push(company, container=SALES, tags={"customer": "Orca Corp", "project": "Apollo"}, text=line,
         occurred_at="2026-11-01T10:00:00Z")  # fmt: skip
    for i in range(12):
        push(company, container=SALES, tags={"customer": "Orca Corp"}, occurred_at=f"2026-11-{10 + i}T10:00:00Z",
             text=f"Orca Corp invoice INV-2026-{i:03d} for ${(i + 1) * 1000},000 is due 2026-12-{10 + i}.")  # fmt: skip
    push(company, container=SALES, tags={"project": "Apollo"}, text="Apollo beta ships Friday.",
         occurred_at="2026-11-02T10:00:00Z")  # fmt: skip
    for budget in (250, 350):
        said, cursor = 0, None
        for _ in range(10):
            data = context(api, task="Orca Corp and Apollo", max_tokens=budget, cursor=cursor)
            said += data["prompt"].count("Apollo kickoff")
            cursor = data["next_cursor"]
            if cursor is None:
                break
        assert said >= 1, budget


def test_a_task_nothing_is_relevant_to_gets_an_empty_context_and_says_so(api, company):
    for task in ("ZZQX-nothing-qqq xylophone quasar", "齉龘靐 量子木琴 类星体"):
        data = context(api, task=task, max_tokens=1500)
        assert data["prompt"] == "" and all(not b["items"] for b in data["blocks"])
        assert [w["code"] for w in data["warnings"]] == ["nothing_relevant"]


def test_a_chinese_task_finds_english_facts(api, company):
    data = context(api, task="为 Vercel 起草续约提案", max_tokens=3000)
    assert "Alice prefers renewal proposals" in data["prompt"]
    assert "Met the Vercel CTO" in data["prompt"]
    assert "nothing_relevant" not in {w["code"] for w in data["warnings"]}


def test_an_unrelated_page_is_left_out_even_with_room_for_three(api, company):
    data = context(api, task="Draft the Vercel renewal proposal", max_tokens=3000)
    titles = [item["title"] for b in data["blocks"] if b["kind"] == "wiki" for item in b["items"]]
    assert titles == ["Vercel"]  # Zephyr shares no word or meaning with the task


def test_a_thread_two_pages_name_is_printed_once(api, company):
    from tests.context.conftest import SALES, push

    line = "Orca wants the Apollo pilot in eu-central-1 by 2026-12-10."
    push(company, container=SALES, tags={"customer": "Orca Corp", "project": "Apollo"}, text=line)
    push(company, container=SALES, tags={"customer": "Orca Corp"}, text="Orca budget is $40,000.")
    push(company, container=SALES, tags={"project": "Apollo"}, text="Apollo beta ships Friday.")
    data = context(api, task="Orca Corp and the Apollo pilot", max_tokens=4000)
    wiki = [item for block in data["blocks"] if block["kind"] == "wiki" for item in block["items"]]
    assert {"orca", "apollo"} <= {item["id"] for item in wiki} and not any(i["summarized"] for i in wiki)
    assert data["prompt"].count("Orca wants the Apollo pilot") == 1
