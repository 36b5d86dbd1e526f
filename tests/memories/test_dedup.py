"""Near-duplicate check on write: cosine > MEMORY_DEDUP_THRESHOLD, within the same scope only."""

import string

import pytest
from django.conf import settings
from hypothesis import HealthCheck, assume, given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

from almanac.text.duplicates import same_facts
from memories.models import Memory
from memories.services.memories import memory_create
from tests.memories.conftest import at_cosine, unit

pytestmark = pytest.mark.django_db


def test_just_above_threshold_returns_existing(alice):
    base = unit(1)
    first, _ = memory_create(owner=alice, content="likes aisle seats", embedding=base)
    again, duplicate = memory_create(
        owner=alice, content="prefers aisle seats", embedding=at_cosine(base, 0.925)
    )
    assert duplicate == first and again == first
    assert Memory.objects.count() == 1


def test_just_below_threshold_inserts(alice):
    base = unit(1)
    memory_create(owner=alice, content="likes aisle seats", embedding=base)
    _, duplicate = memory_create(owner=alice, content="likes window seats", embedding=at_cosine(base, 0.915))
    assert duplicate is None
    assert Memory.objects.count() == 2


def test_threshold_is_configurable(alice, settings):
    settings.MEMORY_DEDUP_THRESHOLD = 0.99
    base = unit(1)
    memory_create(owner=alice, content="likes aisle seats", embedding=base)
    _, duplicate = memory_create(owner=alice, content="prefers aisle seats", embedding=at_cosine(base, 0.95))
    assert duplicate is None


def test_same_vector_in_another_scope_is_not_a_duplicate(alice, bob):
    base = unit(2)
    memory_create(owner=alice, content="Apollo uses Postgres 18", embedding=base)
    _, dup_project = memory_create(
        owner=alice, content="Apollo uses Postgres 18", scope="project", scope_key="Apollo", embedding=base
    )
    _, dup_other_user = memory_create(owner=bob, content="Apollo uses Postgres 18", embedding=base)
    assert dup_project is None and dup_other_user is None
    assert Memory.objects.count() == 3
    # ... but a project member writing it again into the project is.
    _, dup = memory_create(
        owner=bob,
        content="Apollo is on Postgres 18",
        scope="project",
        scope_key="Apollo",
        embedding=at_cosine(base, 0.97),
    )
    assert dup is not None and dup.scope == "project"


def test_archived_memory_is_not_a_duplicate(alice):
    base = unit(3)
    old, _ = memory_create(owner=alice, content="old fact", embedding=base)
    Memory.objects.filter(pk=old.pk).update(status="archived")
    _, duplicate = memory_create(owner=alice, content="old fact", embedding=base)
    assert duplicate is None


def test_api_duplicate_is_200_with_duplicate_of(api, alice):
    first = api.post("/memories", {"user": "alice", "content": "我喜欢喝美式咖啡，不加糖"})
    assert first.status_code == 201
    again = api.post("/memories", {"user": "alice", "content": "我喜欢喝美式咖啡，不加糖。"})
    assert again.status_code == 200
    assert again.json()["duplicate_of"] == first.json()["id"] == again.json()["id"]


@pytest.mark.parametrize(
    "first, second",
    [
        ("Apollo deploys happen on Tuesdays", "Apollo deploys happen on Thursdays"),
        ("Apollo 每周二部署", "Apollo 每周四部署"),
        ("Apollo 上线日期是 3 月 12 日", "Apollo 上线日期是 3 月 19 日"),
    ],
)
def test_a_close_sentence_with_other_facts_is_a_new_memory(alice, first, second):
    # The offline embeddings are near-identical (above the threshold), the facts are not:
    # the second is an update or a contradiction, and dropping it as a duplicate loses it.
    from almanac.search.embeddings import embed

    a, b = embed([first, second])
    assert float(a @ b) > settings.MEMORY_DEDUP_THRESHOLD
    memory_create(owner=alice, content=first)
    memory, duplicate = memory_create(owner=alice, content=second)
    assert duplicate is None and memory.content == second
    assert Memory.objects.count() == 2


@pytest.mark.parametrize(
    "first, second",
    [
        ("I like green tea in the morning", "I don't like green tea in the morning"),
        ("Carol likes the new dashboard", "Carol does not like the new dashboard"),
        ("我喜欢喝绿茶", "我不喜欢喝绿茶"),
        ("The Zephyr budget is 30k EUR", "The Zephyr budget is 40k EUR"),
        ("我们的预算是 30 万元", "我们的预算是 40 万元"),
        ("Acme 的续约合同打八折，由 Bob 跟进", "Acme 的续约合同打九折，由 Bob 跟进"),
        ("The Acme price is ten thousand dollars", "The Acme price is twelve thousand dollars"),
        ("We sign with Acme on the tenth of March", "We sign with Acme on the fifteenth of March"),
        ("The Acme review is next Wednesday in room 3", "The Acme review was last Wednesday in room 3"),
        ("Acme 评审在下周三", "Acme 评审在上周三"),
        ("周五的 Acme 评审会定在下午3点", "周五的 Acme 评审会定在下午3点半"),
        ("At Acme I prefer tea over coffee.", "At Acme I prefer coffee over tea."),
        ("Alice reports to Bob on the Acme account.", "Bob reports to Alice on the Acme account."),
        ("Acme 从阿里云迁移到腾讯云", "Acme 从腾讯云迁移到阿里云"),
        ("Shipped the Acme fix yesterday", "Shipping the Acme fix tomorrow"),
    ],
)
def test_negation_and_amounts_make_another_fact_however_close_the_vectors(alice, first, second):
    # The offline encoder keeps these below the threshold; another embedding model may not.
    base = unit(6)
    memory_create(owner=alice, content=first, embedding=base)
    _, duplicate = memory_create(owner=alice, content=second, embedding=at_cosine(base, 0.98))
    assert duplicate is None and Memory.objects.count() == 2


def test_a_restatement_with_the_same_facts_is_still_a_duplicate(alice):
    first, _ = memory_create(owner=alice, content="Apollo deploys happen on Tuesdays at 10:00")
    _, duplicate = memory_create(owner=alice, content="Apollo deploys happen on Tuesdays at 10:00.")
    assert duplicate == first


def test_the_nearest_with_other_facts_does_not_hide_a_real_duplicate(alice):
    base = unit(4)
    same, _ = memory_create(owner=alice, content="standup at 9:30", embedding=at_cosine(base, 0.97, seed=5))
    _, not_a_duplicate = memory_create(owner=alice, content="standup at 10:30", embedding=base)
    assert not_a_duplicate is None  # nearer to what comes next, but another time
    _, duplicate = memory_create(owner=alice, content="the standup is at 9:30", embedding=base)
    assert duplicate == same


@pytest.mark.parametrize(
    ("first", "second"),
    [("The Acme budget is $3M", "The Acme budget is $3 million"), ("合同金额是3万元", "合同金额是三万元")],
)
def test_a_restatement_is_a_duplicate(alice, first, second):
    base = unit(8)
    kept, _ = memory_create(owner=alice, content=first, embedding=base)
    _, duplicate = memory_create(owner=alice, content=second, embedding=at_cosine(base, 0.98))
    assert duplicate == kept


def _post(api, content, **kw):
    return api.post("/memories", {"user": "alice", "content": content, **kw})


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("合同金额是3万元", "合同金额是3千元"),
        ("The Acme deal is worth 3 million USD", "The Acme deal is worth 3 billion USD"),
        ("The Acme deal is worth 3 thousand dollars", "The Acme deal is worth 3 million dollars"),
    ],
)
def test_a_different_magnitude_is_not_a_duplicate(api, alice, first, second):
    assert _post(api, first).status_code == 201
    response = _post(api, second)
    assert response.status_code == 201, response.json()
    assert response.json().get("duplicate_of") is None
    assert _post(api, second).status_code == 200  # the same fact again still is one


def test_an_episode_on_another_day_is_not_a_duplicate(api, alice):
    kw = {"memory_type": "episodic"}
    first = _post(api, "Met Acme about the renewal", occurred_at="2026-03-13", **kw)
    assert first.status_code == 201
    later = _post(api, "Met Acme about the renewal", occurred_at="2026-05-15", **kw)
    assert later.status_code == 201 and later.json()["occurred_at"] == "2026-05-15"
    again = _post(api, "Met Acme about the renewal", occurred_at="2026-05-15", **kw)
    assert again.status_code == 200 and again.json()["duplicate_of"] == later.json()["id"]


def test_the_same_words_with_other_numbers_and_codes_are_not_a_duplicate(alice):
    first = "Client 15 note 142: travel item ldecjucdkbr agreed for week 9."
    second = "Client 9 note 142: travel item ldqkfdcbekq agreed for week 15."
    base = unit(9)
    memory_create(owner=alice, content=first, embedding=base)
    memory, duplicate = memory_create(owner=alice, content=second, embedding=at_cosine(base, 0.99))
    assert duplicate is None and memory.content == second
    _, again = memory_create(owner=alice, content=second, embedding=at_cosine(base, 0.99))
    assert again == memory  # the same fact again still is one


# Pairs of sentences that differ in one fact: generated from templates with slots for
# numbers (each with its role word), an id, a code, a name and a date. Pure: no database.
TEMPLATES = {
    "en": "Client {client} note {note}: travel item {code} agreed with {name} for week {week}, due {date}.",
    "zh": "客户{client}的备注{note}：{name}同意差旅项目{code}，第{week}周，截止{date}。",
}
TRADITIONAL_ZH = "客戶{client}的備註{note}：{name}同意差旅項目{code}，第{week}週，截止{date}。"
NUMBERS = ("client", "note", "week")
NAMES = ("Alice", "Bob", "Carol", "Dave", "Erin", "Frank", "Grace", "Heidi")
CONSONANTS = "bcdfghjklmnpqrstvwxz"

codes = st.one_of(
    st.from_regex(r"[a-z]{2,4}[0-9]{2,5}", fullmatch=True),  # letters and digits
    st.builds(  # lowercase letters only, a run of consonants in it
        str.__add__,
        st.text(CONSONANTS, min_size=4, max_size=6),
        st.text(string.ascii_lowercase, min_size=1, max_size=6),
    ),
)
SLOTS = {
    "client": st.integers(1, 99_999),
    "note": st.integers(1, 99_999),
    "week": st.integers(1, 99_999),
    "code": codes,
    "name": st.sampled_from(NAMES),
    "date": st.tuples(st.integers(1, 12), st.integers(1, 28)),
}
facts_settings = hypothesis_settings(
    max_examples=150,
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],  # the db marker, unused here
)


def _sentence(lang: str, slots: dict, template: str | None = None, grouped: bool = False) -> str:
    month, day = slots["date"]
    values = {
        **slots,
        **{k: f"{slots[k]:,}" if grouped else slots[k] for k in NUMBERS},
        "date": f"2026-{month:02d}-{day:02d}" if lang == "en" else f"{month}月{day}日",
    }
    return (template or TEMPLATES[lang]).format(**values)


@facts_settings
@given(lang=st.sampled_from(sorted(TEMPLATES)), slots=st.fixed_dictionaries(SLOTS), data=st.data())
def test_another_value_in_any_slot_is_never_the_same_fact(lang, slots, data):
    slot = data.draw(st.sampled_from(sorted(SLOTS)))
    other = data.draw(SLOTS[slot].filter(lambda value: value != slots[slot]))
    first, second = _sentence(lang, slots), _sentence(lang, {**slots, slot: other})
    assert not same_facts(first, second)
    assert not same_facts(second, first)


@facts_settings
@given(
    lang=st.sampled_from(sorted(TEMPLATES)),
    slots=st.fixed_dictionaries(SLOTS),
    pair=st.sampled_from([("client", "note"), ("client", "week"), ("note", "week")]),
)
def test_numbers_swapped_between_roles_are_never_the_same_fact(lang, slots, pair):
    a, b = pair
    assume(slots[a] != slots[b])
    first, second = _sentence(lang, slots), _sentence(lang, {**slots, a: slots[b], b: slots[a]})
    assert not same_facts(first, second)


@facts_settings
@given(lang=st.sampled_from(sorted(TEMPLATES)), slots=st.fixed_dictionaries(SLOTS))
def test_the_same_slots_written_otherwise_are_the_same_fact(lang, slots):
    # What keeps the properties above from holding vacuously.
    sentence = _sentence(lang, slots)
    full_width = str.maketrans(string.digits, "０１２３４５６７８９")
    assert same_facts(sentence, sentence.translate(full_width))
    assert same_facts(sentence, _sentence(lang, slots, grouped=True))  # 1,200 = 1200
    if lang == "zh":
        assert same_facts(sentence, _sentence(lang, slots, template=TRADITIONAL_ZH))
    else:  # clauses reordered, each number keeping its word
        month, day = slots["date"]
        reworded = (
            f"For week {slots['week']}, due 2026-{month:02d}-{day:02d}, {slots['name']} agreed "
            f"travel item {slots['code']}: client {slots['client']} note {slots['note']}."
        )
        assert same_facts(sentence, reworded)


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("The API rate limit is 1200 requests per minute", "The API rate limit is 1200 requests per hour"),
        ("The backup runs before midnight", "The backup runs after midnight"),
        ("API限流是每分钟1200次请求", "API限流是每小时1200次请求"),
        ("备份在午夜之前运行", "备份在午夜之后运行"),
        ("订单金额5万以上需要审批", "订单金额5万以下需要审批"),
    ],
)
def test_an_acknowledged_write_of_another_detail_is_stored(api, alice, first, second):
    assert _post(api, first).status_code == 201
    response = _post(api, second)
    assert response.status_code == 201, response.json()
    assert response.json().get("duplicate_of") is None
    assert set(Memory.objects.values_list("content", flat=True)) == {first, second}
    # However close the vectors: only the same fact said again is a duplicate.
    base = unit(10)
    kept, _ = memory_create(owner=alice, content=first, embedding=base, scope="tenant")
    other, duplicate = memory_create(
        owner=alice, content=second, embedding=at_cosine(base, 0.99), scope="tenant"
    )
    assert duplicate is None and other.content == second
    _, again = memory_create(
        owner=alice, content=f"Thanks! {second}.", embedding=at_cosine(base, 0.99), scope="tenant"
    )
    assert again == other
