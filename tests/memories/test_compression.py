"""Compression (docs/design.md, Memories): a crowded topic of one scope becomes one summary memory; the
originals are compressed, linked, restorable, and deleted after the keep period."""

import json
from datetime import timedelta
from io import StringIO

import pytest
from django.conf import settings
from django.core.management import call_command
from django.utils import timezone

from almanac.models import AuditEvent
from almanac.search.tokens import count_tokens
from almanac.text.facts import fact_signature
from almanac.text.summaries import summary_holds, summary_terms
from memories import selectors
from memories.models import Memory, MemoryLink
from memories.services import compression
from memories.services.compression import compressed_expire, memories_compress, memory_restore
from memories.services.memories import memory_create, memory_update
from memories.services.purge import memory_purge
from memories.tasks import memory_compress_task
from memories.topics import covers, structured_summary, tokens_of
from skills.models import SkillRun
from tests.memories.conftest import FILLER, at_cosine, on_topic, unit
from tests.skills.conftest import ChatServer

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("offline_llm")]

TOPIC = unit(40)


@pytest.fixture
def chat_llm(settings):
    """The local OpenAI-compatible test server as the LLM (its replies: `.script`)."""
    server = ChatServer()
    server.thread.start()
    settings.LLM_BASE_URL, settings.LLM_MODEL, settings.LLM_API_KEY = server.url, "test-model", "sk-test"
    settings.LLM_TIMEOUT, settings.LLM_MAX_RETRIES, settings.LLM_BACKOFF = 5.0, 1, 0.0
    yield server
    server.httpd.shutdown()
    server.httpd.server_close()


def _apollo(owner, n: int, **kw):
    # One topic: vectors at cosine 0.9 to a common direction (so ~0.8 to each other).
    return [
        memory_create(
            owner=owner,
            content=f"Apollo fact number {i}: the release checklist item {i} is owned by team {i % 3}",
            embedding=at_cosine(TOPIC, 0.9, seed=100 + i),
            **kw,
        )[0]
        for i in range(n)
    ]


def test_a_crowded_topic_becomes_one_summary(alice, bob, charlie, settings):
    settings.LLM_BASE_URL = ""
    originals = _apollo(alice, settings.MEMORY_COMPRESS_MIN + 3, scope="project", scope_key="Apollo")
    unrelated = [
        memory_create(
            owner=alice, content=f"tea note {i}", embedding=unit(200 + i), scope="project", scope_key="Apollo"
        )[0]
        for i in range(3)
    ]
    assert memory_compress_task() == {"summaries": 1, "expired": 0}

    [summary] = Memory.objects.filter(meta__source="compression")
    assert summary.status == "active" and summary.scope == "project" and summary.scope_key == "apollo"
    assert summary.acl == originals[0].acl  # visible to exactly the originals' readers
    # A heading for the subject they share, one short line per fact, fewer tokens.
    assert summary.content.startswith(
        "Apollo fact:\nnumber 0: the release checklist item 0 is owned by team 0"
    )
    audit = AuditEvent.objects.get(action="memory.compress").detail
    assert audit["method"] == "structured" and audit["tokens_after"] < audit["tokens_before"]
    assert set(Memory.objects.filter(pk__in=[m.pk for m in originals]).values_list("status", flat=True)) == {
        "compressed"
    }
    assert set(Memory.objects.filter(pk__in=[m.pk for m in unrelated]).values_list("status", flat=True)) == {
        "active"
    }
    assert MemoryLink.objects.filter(target=summary, kind="compressed_into").count() == len(originals)
    assert AuditEvent.objects.get(action="memory.compress").detail["originals"] == len(originals)
    # Recall finds the summary, never the compressed originals; charlie (not in Apollo) nothing.
    found = [
        h.memory.pk for h in selectors.memory_search(user=bob, query="Apollo release checklist", top_k=30)
    ]
    assert summary.pk in found and not set(found) & {m.pk for m in originals}
    assert selectors.memory_search(user=charlie, query="Apollo release checklist") == []
    assert memory_compress_task() == {"summaries": 0, "expired": 0}  # idempotent


def test_scopes_are_never_mixed_and_small_topics_stay(alice, settings):
    settings.LLM_BASE_URL = ""
    half = settings.MEMORY_COMPRESS_MIN // 2 + 1
    _apollo(alice, half)  # alice's private memories
    _apollo(alice, half, scope="project", scope_key="Apollo")
    assert memory_compress_task()["summaries"] == 0
    assert not Memory.objects.exclude(status="active").exists()


def test_restore_brings_originals_back_and_retires_an_empty_summary(alice, settings):
    settings.LLM_BASE_URL = ""
    originals = _apollo(alice, settings.MEMORY_COMPRESS_MIN + 1)
    memory_compress_task()
    summary = Memory.objects.get(meta__source="compression")
    some = Memory.objects.filter(pk__in=[m.pk for m in originals[:5]])
    assert memory_restore(memories=some, user=alice) == 5
    summary.refresh_from_db()
    assert summary.status == "active"  # still stands for the other originals
    assert (
        memory_restore(memories=Memory.objects.filter(status="compressed"), user=alice) == len(originals) - 5
    )
    summary.refresh_from_db()
    assert summary.status == "archived" and not MemoryLink.objects.exists()
    assert set(Memory.objects.filter(pk__in=[m.pk for m in originals]).values_list("status", flat=True)) == {
        "active"
    }


def test_originals_are_deleted_after_the_keep_period(alice, settings):
    settings.LLM_BASE_URL = ""
    originals = _apollo(alice, settings.MEMORY_COMPRESS_MIN + 1)
    memory_compress_task()
    old = [m.pk for m in originals[:4]]
    Memory.objects.filter(pk__in=old).update(
        updated_at=timezone.now() - timedelta(days=settings.MEMORY_COMPRESSED_KEEP_DAYS + 1)
    )
    assert memory_compress_task() == {"summaries": 0, "expired": 4}
    assert not Memory.objects.filter(pk__in=old).exists()
    assert Memory.objects.filter(status="compressed").count() == len(originals) - 4
    assert Memory.objects.filter(meta__source="compression", status="active").count() == 1


def test_admin_restore_action(client, alice, tenant, settings):
    from almanac.services.users import user_create

    settings.LLM_BASE_URL = ""
    originals = _apollo(alice, settings.MEMORY_COMPRESS_MIN + 1)
    memory_compress_task()
    client.force_login(user_create(tenant=tenant, username="root", is_admin=True, password="pw-12345678"))
    response = client.post(
        "/admin/memories/memory/",
        {"action": "restore", "_selected_action": [m.pk for m in originals]},
        follow=True,
    )
    assert f"{len(originals)} memories restored" in response.content.decode()
    assert Memory.objects.get(meta__source="compression").status == "archived"


def _expire(memories) -> None:
    Memory.objects.filter(pk__in=[m.pk for m in memories]).update(
        updated_at=timezone.now() - timedelta(days=settings.MEMORY_COMPRESSED_KEEP_DAYS + 1)
    )
    assert compressed_expire() == len(memories)


def test_restoring_the_last_linked_original_keeps_the_expired_ones_facts(alice, settings):
    """A summary emptied by a restore that still holds expired originals is their only copy:
    it is rewritten from them, never archived out of recall."""
    settings.LLM_BASE_URL = ""
    originals = _apollo(alice, settings.MEMORY_COMPRESS_MIN + 1)
    memory_compress_task()
    summary = Memory.objects.get(meta__source="compression")
    kept, expired = originals[0], originals[1:]
    _expire(expired)
    assert memory_restore(memories=Memory.objects.filter(pk=kept.pk), user=alice) == 1
    summary.refresh_from_db()
    assert summary.status == "active"
    assert sorted(summary.meta["compressed_from"]) == sorted(m.pk for m in expired)
    assert "number 1:" in summary.content and "number 0:" not in summary.content
    hits = [h.memory.pk for h in selectors.memory_search(user=alice, query="Apollo fact number 7 checklist")]
    assert summary.pk in hits and kept.pk in hits


def test_purging_a_summary_purges_its_expired_originals_history(alice, settings):
    settings.LLM_BASE_URL = ""
    originals = _apollo(alice, settings.MEMORY_COMPRESS_MIN + 1)
    memory_compress_task()
    summary = Memory.objects.get(meta__source="compression")
    expired, live = originals[:4], originals[4:]
    _expire(expired)
    assert "Apollo fact number 2:" in "".join(
        Memory.history.filter(id=expired[2].pk).values_list("content", flat=True)
    )
    memory_purge(memory=summary, user=alice)
    for memory in expired:
        assert set(Memory.history.filter(id=memory.pk).values_list("content", flat=True)) == {"[purged]"}
    # The originals that still exist are theirs: back to active, their history untouched.
    assert set(Memory.objects.filter(pk__in=[m.pk for m in live]).values_list("status", flat=True)) == {
        "active"
    }
    assert "Apollo fact number 5:" in "".join(
        Memory.history.filter(id=live[1].pk).values_list("content", flat=True)
    )


def test_an_expiry_run_reads_a_summary_edited_while_it_runs(alice, settings, monkeypatch):
    """The run must not delete originals by a summary text it read before an edit: once the
    summary no longer says them, the rest go back to active."""
    settings.LLM_BASE_URL = ""
    originals = _apollo(alice, settings.MEMORY_COMPRESS_MIN + 1)
    memory_compress_task()
    summary = Memory.objects.get(meta__source="compression")
    Memory.objects.filter(pk__in=[m.pk for m in originals]).update(
        updated_at=timezone.now() - timedelta(days=settings.MEMORY_COMPRESSED_KEEP_DAYS + 1)
    )
    remove = compression.memory_row_delete

    def remove_then_edit(**kwargs):
        removed = remove(**kwargs)
        Memory.objects.filter(pk=summary.pk).update(content="Apollo has no open facts any more.")
        return removed

    monkeypatch.setattr(compression, "memory_row_delete", remove_then_edit)
    assert compressed_expire() == 1  # the first, deleted before the edit
    assert (
        Memory.objects.filter(pk__in=[m.pk for m in originals], status="active").count() == len(originals) - 1
    )


def test_rewriting_a_summary_gives_back_at_once_the_originals_it_no_longer_says(alice, settings):
    settings.LLM_BASE_URL = ""
    originals = _apollo(alice, settings.MEMORY_COMPRESS_MIN + 1)
    memory_compress_task()
    summary = Memory.objects.get(meta__source="compression")
    lines = summary.content.splitlines()
    kept = [lines[0]] + [line for line in lines if "number 1:" in line or "number 2:" in line]
    memory_update(memory=summary, user=alice, data={"content": "\n".join(kept)})
    status = dict(Memory.objects.filter(pk__in=[m.pk for m in originals]).values_list("pk", "status"))
    held = {m.pk for m in originals if "number 1:" in m.content or "number 2:" in m.content}
    assert held and all(status[pk] == ("compressed" if pk in held else "active") for pk in status)
    hits = [h.memory.pk for h in selectors.memory_search(user=alice, query="Apollo fact number 7 checklist")]
    assert originals[7].pk in hits  # found again at once, not after the expiry job


def test_an_llm_summary_that_inverts_or_trims_a_fact_is_replaced_by_the_structured_one(alice, chat_llm):
    flipped = {
        "Alice does not eat pork": "Alice eats pork.",
        "Alice is allergic to peanuts, shellfish and sesame": "Alice is allergic to peanuts.",
    }
    originals = on_topic(alice, [*flipped, *FILLER])
    # An LLM that inverts one fact and trims another (twice: the skill retries once).
    careless = "\n".join(flipped.get(t, t) for t in [*flipped, *FILLER])
    chat_llm.script = [json.dumps({"summary": careless})] * 2
    assert memory_compress_task()["summaries"] == 1
    summary = Memory.objects.get(meta__source="compression")
    assert summary.meta["method"] == "structured" and "Alice eats pork" not in summary.content
    assert "does not eat pork" in summary.content and "peanuts, shellfish and sesame" in summary.content
    assert set(Memory.objects.filter(pk__in=[m.pk for m in originals]).values_list("status", flat=True)) == {
        "compressed"
    }
    _age([m.pk for m in originals])
    assert memory_compress_task()["expired"] == len(originals)
    assert set(Memory.objects.filter(status="active").values_list("pk", flat=True)) == {summary.pk}


def test_the_offline_summary_still_holds_its_originals(alice):
    originals = on_topic(alice, ["Alice does not eat pork", "我们的预算是三万元", *FILLER])
    assert memories_compress() == 1
    assert set(Memory.objects.filter(pk__in=[m.pk for m in originals]).values_list("status", flat=True)) == {
        "compressed"
    }


# A topic of 24 vendors, each with its own id, date and amount: what a summary must keep.
VENDOR_TOPIC = unit(42)


def _vendors(owner, n=24):
    return [
        memory_create(
            owner=owner,
            content=f"Vendor V0{i:02d} signed the supply contract on 2026-03-{i + 1:02d} for {1000 + 37 * i} USD",
            embedding=at_cosine(VENDOR_TOPIC, 0.9, seed=500 + i),
        )[0]
        for i in range(n)
    ]


def _said_somewhere(ids: list[str]) -> set[str]:
    texts = " ".join(Memory.objects.filter(status="active").values_list("content", flat=True))
    return {i for i in ids if i in texts}


def _age(pks):
    Memory.objects.filter(pk__in=pks).update(
        updated_at=timezone.now() - timedelta(days=settings.MEMORY_COMPRESSED_KEEP_DAYS + 1)
    )


def test_compressing_a_large_topic_keeps_every_fact_after_the_keep_period(alice):
    originals = _vendors(alice)
    ids = [f"V0{i:02d}" for i in range(24)]
    assert memory_compress_task()["summaries"] >= 1
    summaries = " ".join(Memory.objects.filter(meta__source="compression").values_list("content", flat=True))
    assert all(i in summaries for i in ids)
    _age([m.pk for m in originals])
    memory_compress_task()
    assert _said_somewhere(ids) == set(ids)
    assert all(f"{1000 + 37 * i} USD" in summaries for i in range(24))


def test_a_topic_larger_than_one_summary_is_split(alice, settings):
    settings.MEMORY_COMPRESS_MAX_TOKENS = 250
    originals = _vendors(alice)
    assert memory_compress_task()["summaries"] >= 2
    summaries = Memory.objects.filter(meta__source="compression")
    assert all(len(s.meta["compressed_from"]) > 1 for s in summaries)
    assert not Memory.objects.filter(pk__in=[m.pk for m in originals], status="active").exists()
    assert _said_somewhere([f"V0{i:02d}" for i in range(24)]) == {f"V0{i:02d}" for i in range(24)}


def test_an_llm_summary_that_leaves_memories_out_is_not_written(alice, chat_llm):
    originals = _vendors(alice)
    forgetful = "\n".join(m.content for m in originals[:10])  # an LLM that keeps only the first ten
    chat_llm.script = [json.dumps({"summary": forgetful})] * 2
    assert memory_compress_task()["summaries"] == 1
    summary = Memory.objects.get(meta__source="compression")
    assert summary.meta["method"] == "structured"
    assert not Memory.objects.filter(pk__in=[m.pk for m in originals], status="active").exists()
    assert MemoryLink.objects.filter(target=summary).count() == 24
    assert all(f"V0{i:02d}" in summary.content for i in range(24))


def test_expiry_keeps_originals_a_rewritten_summary_no_longer_says(alice):
    originals = _vendors(alice)
    memory_compress_task()
    summary = Memory.objects.get(meta__source="compression")
    # The summary no longer names V020-V023 (an LLM rewrite, an admin edit).
    lines = [line for line in summary.content.splitlines() if not any(f"V02{i}" in line for i in range(4))]
    Memory.objects.filter(pk=summary.pk).update(content="\n".join(lines))
    _age([m.pk for m in originals])
    assert memory_compress_task()["expired"] == 20
    kept = Memory.objects.filter(pk__in=[m.pk for m in originals])
    assert sorted(kept.values_list("status", flat=True)) == ["active"] * 4
    assert not MemoryLink.objects.filter(source__in=kept).exists()
    assert _said_somewhere([f"V0{i:02d}" for i in range(24)]) == {f"V0{i:02d}" for i in range(24)}


def test_an_unlinked_compressed_memory_is_not_deleted(alice, remember):
    memory = remember(alice, "Apollo ships on Fridays")
    Memory.objects.filter(pk=memory.pk).update(
        status="compressed",
        updated_at=timezone.now() - timedelta(days=settings.MEMORY_COMPRESSED_KEEP_DAYS + 1),
    )
    assert memory_compress_task()["expired"] == 0
    assert Memory.objects.get(pk=memory.pk).status == "active"


def test_patching_a_compressed_original_active_unlinks_it(api, alice):
    originals = _vendors(alice)
    memory_compress_task()
    response = api.patch(f"/memories/{originals[0].pk}", {"user": "alice", "status": "active"})
    assert response.status_code == 200 and response.json()["status"] == "active"
    assert not MemoryLink.objects.filter(source_id=originals[0].pk).exists()


# --- Topics by what memories are about, summaries that are shorter and keep every fact ----

# 24 distinct reimbursement rules (their embeddings are not close enough to make a topic).
RULES_ZH = [
    "报销单须在每月5日前提交。",
    "单笔报销超过5000元需部门经理审批。",
    "出差住宿报销标准为每晚500元。",
    "出租车费用报销需要附行程单。",
    "报销发票抬头必须是公司全称。",
    "招待费报销需注明客户名称和人数。",
    "报销款每月15日统一发放到工资卡。",
    "电子发票报销需打印并签字。",
    "国际差旅报销需财务总监张伟审批。",
    "报销时餐费每人每天不超过150元。",
    "报销需在费用发生后60天内提交。",
    "高铁二等座以上的报销需VP批准。",
    "报销系统每季度最后一周关闭。",
    "培训费报销需附结业证书。",
    "报销超过3万元需CFO李娜签字。",
    "手机话费报销上限每月200元。",
    "报销发票不能有涂改。",
    "团建费用报销标准为每人300元。",
    "报销单需要附上付款截图。",
    "海外报销按当天汇率折算人民币。",
    "报销的审批人是直属上级王强。",
    "丢失发票的报销需填写情况说明。",
    "报销的加班餐费须在晚上8点以后。",
    "报销问题请联系财务部赵敏。",
]
RULES_EN = [
    "Expense reports are due by the 5th of each month.",
    "Expense claims over $5,000 need approval from a department manager.",
    "Expense claims for hotels are capped at $200 per night.",
    "Expense claims for taxis need a trip receipt.",
    "Expense claims must show the full company name on the invoice.",
    "Expense claims for client dinners must name the client and the number of guests.",
    "Expense refunds are paid on the 15th with the salary.",
    "Expense claims for international travel need approval from CFO Maria Lopez.",
    "Expense claims for meals are capped at $50 per person per day.",
    "Expense claims must be filed within 60 days of the purchase.",
    "Expense claims for business class flights need VP approval.",
    "Expense claims over $30,000 need sign-off from CEO Tom Baker.",
    "Expense claims for phone bills are capped at $80 a month.",
    "Expense claims for training need the completion certificate.",
    "Expense claims in foreign currency use the exchange rate of the purchase day.",
    "Expense claims for lost receipts need a signed explanation form.",
    "Expense questions go to Dana Reyes in Finance.",
    "Expense claims for team events are capped at $40 per person.",
    "Expense claims need the payment screenshot attached.",
    "Expense claims for overtime meals apply only after 8 pm.",
    "Expense system closes in the last week of each quarter.",
    "Expense claims for parking need the parking ticket.",
    "Expense claims for software need IT approval from Raj Patel.",
    "Expense claims for conferences are capped at $1,500 per year.",
]
# 22 near-identical ones: three rules said again and again, with reminders around them.
NEAR_ZH = [
    *("报销发票须在30天内提交。", "提醒：报销发票须在30天内提交。", "记得报销发票须在30天内提交哦。"),
    *("再说一次，报销发票须在30天内提交。", "报销发票须在30天内提交！", "注意：报销发票须在30天内提交。"),
    *("报销发票须在30天内提交，", "请注意：报销发票须在30天内提交。", "报销需附发票原件。"),
    *("提醒一下，报销需附发票原件。", "报销需附发票原件哦。", "记得：报销需附发票原件。"),
    *(
        "再强调一下，报销需附发票原件。",
        "报销需附发票原件！",
        "报销审批人是王强。",
        "提醒：报销审批人是王强。",
    ),
    *(
        "注意，报销审批人是王强。",
        "报销审批人是王强哦。",
        "记住：报销审批人是王强。",
        "重申一下，报销审批人是王强。",
    ),
    *("报销审批人是王强！", "再提醒一下：报销审批人是王强。"),
]
NEAR_EN = [
    *("Receipts must be submitted within 30 days.", "Reminder: receipts must be submitted within 30 days."),
    *("Remember, receipts must be submitted within 30 days.", "Receipts must be submitted within 30 days!"),
    *(
        "Note: receipts must be submitted within 30 days.",
        "Again, receipts must be submitted within 30 days.",
    ),
    *("Just a reminder: receipts must be submitted within 30 days.", "Wang Qiang approves expense claims."),
    *("Reminder: Wang Qiang approves expense claims.", "Note: Wang Qiang approves expense claims."),
    *("Wang Qiang approves expense claims!", "Remember: Wang Qiang approves expense claims."),
    *("FYI, Wang Qiang approves expense claims.", "Please note: Wang Qiang approves expense claims."),
    *("Expense claims need the original invoice.", "Reminder: expense claims need the original invoice."),
    *("Note: expense claims need the original invoice.", "Expense claims need the original invoice!"),
    *(
        "Remember: expense claims need the original invoice.",
        "Again: expense claims need the original invoice.",
    ),
    *(
        "Just a reminder, expense claims need the original invoice.",
        "FYI: expense claims need the original invoice.",
    ),
]


def _remember_all(owner, texts, **kw):
    """Written as the API writes them: embedded by the configured encoder, not placed by hand."""
    return [memory_create(owner=owner, content=text, **kw)[0] for text in texts]


def _compressed_once(originals):
    [summary] = Memory.objects.filter(meta__source="compression")
    audit = AuditEvent.objects.get(action="memory.compress").detail
    statuses = set(Memory.objects.filter(pk__in=[m.pk for m in originals]).values_list("status", flat=True))
    return summary, audit, statuses


@pytest.mark.parametrize("rules", [RULES_ZH, RULES_EN], ids=["zh", "en"])
def test_distinct_rules_on_one_subject_are_one_topic_and_every_fact_is_kept(alice, rules):
    originals = _remember_all(alice, rules)
    assert memories_compress() == 1
    summary, audit, statuses = _compressed_once(originals)
    assert statuses == {"compressed"} and audit["originals"] == 24
    assert audit["method"] == "structured" and audit["tokens_after"] < audit["tokens_before"]
    assert count_tokens(summary.content) == audit["tokens_after"]
    terms = summary_terms(summary.content)
    for rule in rules:  # every amount, date, owner and rule, as a reader can find it
        assert summary_holds(rule, terms), rule
        assert fact_signature(rule)[0] <= fact_signature(summary.content)[0], rule
    for name in ("张伟", "李娜", "王强", "赵敏", "Maria Lopez", "Tom Baker", "Dana Reyes", "Raj Patel"):
        assert name in summary.content or not any(name in r for r in rules)


@pytest.mark.parametrize("texts", [NEAR_ZH, NEAR_EN], ids=["zh", "en"])
def test_near_identical_memories_become_one_line_per_fact(alice, texts):
    # Placed apart enough to pass the write's duplicate check (as they were found: all active).
    originals = on_topic(alice, texts)
    assert memories_compress() == 1
    summary, audit, statuses = _compressed_once(originals)
    assert statuses == {"compressed"}
    assert len(summary.content.splitlines()) <= 4  # a heading at most, and three facts
    assert audit["tokens_after"] * 4 < audit["tokens_before"]
    for fact in (
        "30",
        "王强" if texts is NEAR_ZH else "Wang Qiang",
        "发票原件" if texts is NEAR_ZH else "original invoice",
    ):
        assert fact in summary.content


def test_an_llm_summary_that_says_every_fact_is_written(alice, chat_llm):
    originals = on_topic(alice, NEAR_ZH)
    chat_llm.script = [
        json.dumps({"summary": "报销规定：发票须在30天内提交，需附发票原件；报销审批人是王强。"})
    ]
    assert memories_compress() == 1
    summary, audit, statuses = _compressed_once(originals)
    assert summary.content == "报销规定：发票须在30天内提交，需附发票原件；报销审批人是王强。"
    assert audit["method"] == "llm" and statuses == {"compressed"}
    assert audit["tokens_before"] == tokens_of(NEAR_ZH) and audit["tokens_after"] == count_tokens(
        summary.content
    )


def test_a_failing_llm_is_not_recorded_as_the_method(alice, chat_llm):
    originals = on_topic(alice, NEAR_ZH)
    chat_llm.script = [{"status": 500, "body": "down"}] * 4  # the offline extractive path stands in
    assert memories_compress() == 1
    summary, audit, statuses = _compressed_once(originals)
    assert len(chat_llm.requests) >= 1 and statuses == {"compressed"}
    assert audit["method"] == summary.meta["method"] != "llm"


def test_an_abstractive_llm_summary_without_the_facts_is_rejected(alice, chat_llm):
    originals = _remember_all(alice, RULES_ZH)
    chat_llm.script = [json.dumps({"summary": "关于报销的全部流程要求：按规定提交并审批。"})] * 2
    assert memories_compress() == 1
    summary, audit, statuses = _compressed_once(originals)
    assert audit["method"] == "structured" and "关于报销的全部流程要求" not in summary.content
    assert statuses == {"compressed"} and "5000" in summary.content and "赵敏" in summary.content


def test_private_memories_of_two_users_are_never_one_topic(alice, bob):
    _remember_all(alice, RULES_EN[:12])
    _remember_all(bob, RULES_EN[12:])
    assert memories_compress() == 0  # 12 + 12: a topic of neither is crowded
    assert not Memory.objects.exclude(status="active").exists()


def _state():
    return (
        sorted(Memory.objects.values_list("pk", "status", "content")),
        AuditEvent.objects.count(),
        SkillRun.objects.count(),
        MemoryLink.objects.count(),
    )


def test_compress_command_dry_run_writes_nothing_then_compresses(alice, tenant):
    _remember_all(alice, RULES_ZH)
    before = _state()
    out = StringIO()
    call_command("memories_compress", "--dry-run", "--tenant", tenant.slug, stdout=out)
    assert _state() == before
    text = out.getvalue()
    assert (
        "user:alice topic 报销: 24 memories" in text and "(structured)" in text and "nothing written" in text
    )
    out = StringIO()
    call_command("memories_compress", "--user", "alice", stdout=out)
    assert "1 summary(ies) written" in out.getvalue()
    summary = Memory.objects.get(meta__source="compression")
    audit = AuditEvent.objects.get(action="memory.compress").detail
    assert (
        f"{audit['tokens_before']} tokens → {audit['tokens_after']} tokens (structured) → memory #{summary.pk}"
        in (out.getvalue())
    )


def test_decay_command_dry_run_lists_and_writes_nothing(alice, remember):
    stale = remember(alice, "Old note about the Q1 offsite venue", importance=0.1)
    fresh = remember(alice, "Note about the Q3 offsite venue", importance=0.1)
    Memory.objects.filter(pk=stale.pk).update(created_at=timezone.now() - timedelta(days=200))
    before = _state()
    out = StringIO()
    call_command("memories_decay", "--dry-run", stdout=out)
    assert _state() == before
    assert f"#{stale.pk} user:alice" in out.getvalue() and f"#{fresh.pk}" not in out.getvalue()
    call_command("memories_decay", stdout=StringIO())
    assert Memory.objects.get(pk=stale.pk).status == "archived"
    assert Memory.objects.get(pk=fresh.pk).status == "active"


CLIENT_C = [
    *(
        "客户C的合同金额是30万元。",
        "客户C的对接人是王伟。",
        "客户C要求每月5日前开票。",
        "客户C的付款周期是60天。",
    ),
    *(
        "客户C总部在深圳南山区。",
        "客户C的采购负责人是李娜。",
        "客户C明年预算增加20%。",
        "客户C偏好邮件沟通。",
    ),
    *(
        "客户C的续约日期是2027年3月1日。",
        "客户C使用我们的Apollo系统。",
        "客户C的发票抬头是深圳某某科技有限公司。",
    ),
    *("客户C有200名员工。", "客户C的技术对接人是赵敏。", "客户C要求7x24小时支持。", "客户C上季度投诉过2次。"),
    *("客户C的合同编号是HT-2026-031。", "客户C的CEO是陈刚。", "客户C计划在6月扩容到500个账号。"),
    *(
        "客户C的结算币种是人民币。",
        "客户C的税号是91440300MA5F。",
        "客户C每季度做一次业务回顾。",
        "客户C要求数据存储在境内。",
    ),
]


def test_memories_naming_one_client_are_one_topic_under_its_name(alice):
    originals = _remember_all(alice, CLIENT_C)
    assert memories_compress() == 1
    summary, audit, statuses = _compressed_once(originals)
    assert statuses == {"compressed"} and audit["topic"] == "客户c"
    assert "\n客户C：\n合同金额是30万元\n" in summary.content and "\n税号是91440300MA5F" in summary.content
    assert audit["tokens_after"] < audit["tokens_before"]
    assert not covers(summary.content, CLIENT_C)


def test_a_summary_folded_into_a_newer_one_is_merged_line_by_line():
    first = structured_summary(RULES_EN[:20])
    second = structured_summary([first, *RULES_EN[20:], "Expense claims for gifts are capped at $100."])
    assert not covers(second, RULES_EN) and second.count("Expense claims:") == 1
    assert "for gifts are capped at $100" in second.splitlines()
    assert max(len(line) for line in second.splitlines()) < 80  # no line holding a whole summary


# --- One subject in several words: word groups merged by meaning ----------------------

# Expense rules in three words that no rule shares with the others (报销 / 发票 / 差旅),
# none crowded alone.
EXPENSES_ZH = [
    *("报销单须在每月5日前提交。", "单笔报销超过5000元需部门经理审批。", "报销款每月15日统一发放到工资卡。"),
    *("报销系统每季度最后一周关闭。", "报销的审批人是直属上级王强。", "报销需在费用发生后60天内提交。"),
    *("团建费用报销标准为每人300元。", "报销问题请联系财务部赵敏。", "发票抬头必须是公司全称。"),
    *("电子发票需打印并签字。", "发票不能有涂改。", "丢失发票需填写情况说明。"),
    *("增值税专用发票要在开票后180天内认证。", "发票上的税号要核对清楚。", "餐饮发票每月最多两张。"),
    *("纸质发票要贴在粘贴单上。", "差旅住宿标准为每晚500元。", "国际差旅需财务总监张伟审批。"),
    *("差旅期间的餐补每天100元。", "差旅出行优先乘坐高铁二等座。", "差旅申请要提前三天提交。"),
    *("差旅机票须通过公司平台预订。", "差旅超过两周需要VP批准。", "差旅中的出租车费用需附行程单。"),
]
# Unrelated memories of one user in as many small word groups: no topic.
UNRELATED_ZH = [
    *("我喜欢喝美式咖啡，不加糖。", "下午三点以后我不喝咖啡。", "公司楼下的咖啡店周一休息。"),
    *("我每天最多喝两杯咖啡。", "咖啡豆我只买埃塞俄比亚的。", "我办公室有一台咖啡机。"),
    *("喝拿铁咖啡要换燕麦奶。", "星巴克的咖啡我觉得太苦。", "我每天早上跑步五公里。"),
    *("下雨天我在跑步机上跑步。", "我的跑步鞋是亚瑟士的。", "我计划明年跑一次全程马拉松。"),
    *("跑步后我会拉伸十分钟。", "我在世纪公园跑步。", "跑步时我听播客。"),
    *("膝盖疼的时候我暂停跑步。", "我女儿在读小学三年级。", "女儿每周三下午上钢琴课。"),
    *("女儿对芒果过敏。", "女儿的班主任姓刘。", "女儿最喜欢的动物是熊猫。"),
    *("周末我陪女儿去图书馆。", "女儿的生日是5月20日。", "女儿放学由奶奶接。"),
    *("生产服务器每周日凌晨重启。", "服务器的磁盘使用率超过80%要报警。", "服务器登录必须用跳板机。"),
    *("测试服务器在北京机房。", "服务器密码每90天更换一次。", "数据库服务器有两台备机。"),
]


def test_a_mixed_chinese_expense_set_is_one_topic_and_unrelated_memories_stay_apart(alice):
    expenses = _remember_all(alice, EXPENSES_ZH)
    unrelated = _remember_all(alice, UNRELATED_ZH)
    assert memories_compress() == 1
    summary, audit, statuses = _compressed_once(expenses)
    assert statuses == {"compressed"} and audit["originals"] == len(EXPENSES_ZH)
    assert set(audit["topic"].split(" / ")) == {"报销", "发票", "差旅"}
    assert not covers(summary.content, EXPENSES_ZH)
    assert set(Memory.objects.filter(pk__in=[m.pk for m in unrelated]).values_list("status", flat=True)) == {
        "active"
    }


def test_unrelated_chinese_memories_are_no_topic(alice):
    _remember_all(alice, UNRELATED_ZH)
    assert memories_compress() == 0
    assert not Memory.objects.filter(meta__source="compression").exists()
