"""Fixes, round 2: a purge finds a memory's earlier texts; compression accepts no lossy or
inverted summary; restatements with numbers written another way are duplicates; a deeply
nested JSON tool output is no 500."""

import json
from datetime import timedelta

import pytest
from django.utils import timezone

from almanac.errors import ApplicationError
from memories import conf, services
from memories.models import Memory
from memories.services import compression
from memories.services.compression import summary_holds
from memories.services.memories import fact_signature, summary_terms
from memories.tasks import memory_compress_task
from skills.models import SkillRun
from tests.memories.conftest import at_cosine, unit

pytestmark = pytest.mark.django_db

TOPIC = unit(43)


@pytest.fixture(autouse=True)
def _offline_llm(settings):
    settings.LLM_BASE_URL = ""  # the compress skill's extractive fallback: it quotes the items


def _topic(owner, texts: list[str], seed: int = 700, **kw) -> list[Memory]:
    return [
        services.memory_create(
            owner=owner, content=text, embedding=at_cosine(TOPIC, 0.9, seed=seed + i), **kw
        )[0]
        for i, text in enumerate(texts)
    ]


def _quoting(needle: str) -> list[SkillRun]:
    return [
        r
        for r in SkillRun.objects.all()
        if needle in json.dumps([r.input, r.output, r.error], ensure_ascii=False)
    ]


# --- 1. a purge removes the texts the memory had before an edit --------------------------

FILLER = [f"Apollo release checklist item {i}: verify build {i} before stage {i % 4 + 1}" for i in range(21)]


def test_purge_after_an_edit_removes_the_old_text_everywhere(api, alice):
    secret, *_ = _topic(alice, ["Vendor vault PIN is 4411", *FILLER], scope="project", scope_key="Apollo")
    assert services.memories_compress() == 1
    summary = Memory.objects.get(meta__source="compression")
    assert "4411" in summary.content and _quoting("4411")  # the premise: the run and summary quote it
    edited = api.patch(f"/memories/{secret.pk}", {"user": "alice", "content": "Vendor vault PIN was rotated"})
    assert edited.status_code == 200
    assert api.delete(f"/memories/{secret.pk}", user="alice", purge="true").status_code == 204
    assert _quoting("4411") == []
    assert not Memory.history.filter(content__contains="4411").exists()
    assert not Memory.objects.filter(content__contains="4411").exists()


def test_purge_keeps_the_history_of_summaries_that_never_held_it(alice):
    _topic(alice, FILLER, scope="project", scope_key="Apollo")
    assert services.memories_compress() == 1
    summary = Memory.objects.get(meta__source="compression")
    lone = services.memory_create(owner=alice, content="Vendor vault PIN is 4411")[0]
    services.memory_update(memory=lone, user=alice, data={"content": "Vendor vault PIN was rotated"})
    services.memory_purge(memory=Memory.objects.get(pk=lone.pk), user=alice)
    assert "[purged]" not in Memory.history.filter(id=summary.pk).values_list("content", flat=True)
    assert set(Memory.history.filter(id=lone.pk).values_list("content", flat=True)) == {"[purged]"}


def test_purging_words_another_summary_quotes_leaves_that_summary_alone(alice, bob):
    # alice's summary says "verify build"; bob's own memories say it too, and he purges them.
    _topic(alice, FILLER, scope="project", scope_key="Apollo")
    assert services.memories_compress() == 1
    summary = Memory.objects.get(meta__source="compression")
    runs = {r.pk: r.output for r in _quoting("verify build 2")}
    assert runs
    short = services.memory_create(owner=bob, content="build")[0]
    services.memory_purge(memory=short, user=bob)  # too common a text to look for anywhere
    assert {r.pk: r.output for r in _quoting("verify build 2")} == runs
    mine = services.memory_create(owner=bob, content="verify build 3 before stage 4")[0]
    services.memory_purge(memory=mine, user=bob)
    # The summary's history is alice's (a skill run quoting the text itself is redacted: a log).
    assert "[purged]" not in Memory.history.filter(id=summary.pk).values_list("content", flat=True)


# --- 2. compression holds no lossy or inverted summary ------------------------------------

HELD = [
    ("Alice does not eat pork", "Alice eats pork."),
    ("Alice eats pork", "Alice does not eat pork."),
    ("我不喜欢喝绿茶", "我喜欢喝绿茶。"),
    ("Alice is allergic to peanuts, shellfish and sesame", "Alice is allergic to peanuts."),
    (
        "Carol prefers aisle seats on long flights, vegetarian meals and extra water bottles",
        "prefers aisle seats on long flights, vegetarian meals and extra water bottles.",
    ),
]


@pytest.mark.parametrize(("original", "summary"), HELD)
def test_a_lossy_or_inverted_summary_does_not_hold(original, summary):
    assert not summary_holds(original, summary_terms(summary))
    assert summary_holds(original, summary_terms(f"{original}."))  # quoted, it does


def test_a_summary_quoting_other_items_holds_each_as_it_was_said():
    items = ["Alice does not eat pork.", "Bob eats pork on Fridays.", "Alice eats beef but not lamb."]
    terms = summary_terms("\n".join(items))
    assert all(summary_holds(item, terms) for item in items)


def test_originals_an_inverting_summary_flips_are_not_compressed_nor_expired(alice, monkeypatch):
    flipped = {
        "Alice does not eat pork": "Alice eats pork.",
        "Alice is allergic to peanuts, shellfish and sesame": "Alice is allergic to peanuts.",
    }
    originals = _topic(alice, [*flipped, *FILLER])

    def careless(*, name, input, **kw):  # an LLM that inverts one fact and trims another
        return {"summary": "\n".join(flipped.get(item, item) for item in input["items"])}

    monkeypatch.setattr(compression, "skill_run", careless)
    assert memory_compress_task()["summaries"] == 1
    status = dict(Memory.objects.filter(pk__in=[m.pk for m in originals]).values_list("pk", "status"))
    assert [status[m.pk] for m in originals] == ["active"] * 2 + ["compressed"] * 21
    Memory.objects.filter(pk__in=[m.pk for m in originals]).update(
        updated_at=timezone.now() - timedelta(days=conf.COMPRESSED_KEEP_DAYS + 1)
    )
    assert memory_compress_task()["expired"] == 21
    assert set(Memory.objects.filter(status="active").values_list("content", flat=True)) >= set(flipped)


def test_the_offline_summary_still_holds_its_originals(alice):
    originals = _topic(alice, ["Alice does not eat pork", "我们的预算是三万元", *FILLER])
    assert services.memories_compress() == 1
    assert set(Memory.objects.filter(pk__in=[m.pk for m in originals]).values_list("status", flat=True)) == {
        "compressed"
    }


# --- 3. restatements with numbers written another way ------------------------------------


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("The Acme budget is $3M", "The Acme budget is $3 million"),
        ("the call is at 3pm", "the call is at 3 pm"),
        ("the server has 16GB of RAM", "the server has 16 GB of RAM"),
        ("合同金额是3万元", "合同金额是三万元"),
        ("合同金额是3万元", "合同金额是30000元"),
        ("预算是十万元", "预算是10万元"),
        ("Alice is 30", "Alice is 30 years old"),
        ("他今年30岁", "他今年30"),
        ("他今年二十五岁", "他今年25岁"),
        ("budget of 30,000 USD", "budget of 30k USD"),
    ],
)
def test_restatements_share_a_fact_signature(a, b):
    assert fact_signature(a) == fact_signature(b)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("合同金额是3万元", "合同金额是3千元"),
        ("预算是十万元", "预算是一万元"),
        ("worth 3 million USD", "worth 3 billion USD"),
        ("The Acme budget is $3M", "The Acme budget is €3M"),
        ("the call is at 3pm", "the call is at 3am"),
        ("Alice is 30 years old", "Alice has worked here for 30 years"),
        ("the server has 16GB of RAM", "the server has 16TB of RAM"),
        # adjacent Chinese digits are a range, not a number read digit by digit
        ("上线还要一两天", "上线还要12天"),
        ("预算两三万元", "预算23万元"),
        ("项目需要三四个人", "项目需要34个人"),
        ("孩子五六岁", "孩子56岁"),
        ("出差七八天", "出差78天"),
        ("团队有三四十人", "团队有34人"),
    ],
)
def test_other_amounts_keep_their_signatures_apart(a, b):
    assert fact_signature(a) != fact_signature(b)


@pytest.mark.parametrize(
    ("first", "second"),
    [("The Acme budget is $3M", "The Acme budget is $3 million"), ("合同金额是3万元", "合同金额是三万元")],
)
def test_a_restatement_is_a_duplicate(alice, first, second):
    base = unit(8)
    kept, _ = services.memory_create(owner=alice, content=first, embedding=base)
    _, duplicate = services.memory_create(owner=alice, content=second, embedding=at_cosine(base, 0.98))
    assert duplicate == kept


# --- 4. a deeply nested JSON tool output ---------------------------------------------------


def test_a_deeply_nested_tool_output_is_kept_by_lines(api, alice):
    session = api.post("/sessions", {"user": "alice"}).json()
    depth = 895
    content = '{"a": ' + json.dumps([1] * 60) + ', "b": ' + "[" * depth + "]" * depth + "}"
    response = api.post(
        f"/sessions/{session['id']}/turns", {"user": "alice", "role": "tool", "content": content}
    )
    assert response.status_code == 201, response.content[:200]
    assert response.json()["content"] == content  # one line: nothing to cut


def test_a_memory_deleted_while_a_change_waited_is_a_404_not_a_500(alice):
    """PATCH or feedback that read the memory just before a concurrent DELETE took it."""
    from memories.services import memory_delete, memory_feedback, memory_update

    stale, _ = services.memory_create(owner=alice, content="Acme renews in May")
    memory_delete(memory=Memory.objects.get(pk=stale.pk), user=alice)
    with pytest.raises(ApplicationError) as updating:
        memory_update(memory=stale, user=alice, data={"importance": 0.9})
    with pytest.raises(ApplicationError) as rating:
        memory_feedback(memory=stale, user=alice, signal="adopted")
    assert updating.value.status_code == rating.value.status_code == 404
