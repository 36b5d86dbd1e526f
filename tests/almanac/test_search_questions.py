"""Natural questions search like their content words: question words and particles in zh and
en ("是什么时候", "是谁", "how much") neither sink the keyword lane nor the recall behind the
web search, the memory search API and the context call."""

import pytest

from almanac.search import keyword
from almanac.search.text import segment
from memories.models import CORPUS
from memories.selectors import memory_search
from memories.services.memories import memory_create

pytestmark = pytest.mark.django_db

NOTES = [
    "客户C的续约日期是2027年3月1日。",
    "华东区的报销流程需要部门经理审批。",
    "Apollo 项目的负责人是王芳。",
    "The Globex budget for next year is 40,000 euros.",
    "Maya keeps a grey tabby cat called Mochi.",
    "周五下午团队一起去爬山。",
]

QUESTIONS = [
    ("续约日期是什么时候", "续约日期"),
    ("客户C的续约日期是哪天呢？", "续约日期"),
    ("Apollo 项目的负责人是谁？", "负责人是王芳"),
    ("报销流程是怎么样的吗", "报销流程"),
    ("How much is the Globex budget?", "Globex budget"),
    ("What is the name of Maya's cat?", "Mochi"),
]


@pytest.fixture
def notes(alice):
    return [memory_create(owner=alice, content=text)[0] for text in NOTES]


@pytest.mark.parametrize(
    "question, content",
    [
        ("续约日期是什么时候", ["续约", "日期"]),
        ("负责人是谁呢", ["负责", "责人", "负责人"]),
        ("预算是多少", ["预算"]),
        ("合同几点签", ["合同", "签"]),
        ("How much is the budget?", ["budget"]),
        ("Why did the launch slip?", ["launch", "slip"]),
    ],
)
def test_question_words_are_no_search_terms(question, content):
    assert segment(question) == content


@pytest.mark.parametrize(
    "question, words",
    [
        ("续约日期是什么时候", "续约日期"),
        ("负责人是谁呢？", "负责人"),
        ("报销流程是怎么样的吗", "报销流程"),
        ("How much is the Globex budget?", "Globex budget"),
        ("Why did the budget grow?", "budget grow"),
    ],
)
def test_a_question_weighs_as_its_words(alice, notes, question, words):
    """A word no memory holds weighs as the rarest term (nonsense is covered by nothing), so a
    question word counted as a term would cut every memory's keyword coverage."""

    def query(text):
        return keyword.keyword_query(tenant_id=alice.profile.tenant_id, corpus=CORPUS, text=text)

    asked, bare = query(question), query(words)
    assert asked.terms == bare.terms and asked.unknown_idf == bare.unknown_idf
    assert asked.coverage(bare.terms) == bare.coverage(bare.terms) > 0


@pytest.mark.parametrize("question, expected", QUESTIONS)
def test_memory_search_answers_natural_questions(alice, notes, question, expected):
    hits = memory_search(user=alice, query=question, top_k=3)
    assert hits and expected in hits[0].memory.content


def test_web_search_finds_the_memory_a_chinese_question_asks_for(client, alice, notes):
    client.force_login(alice)
    body = client.get("/search", {"q": "续约日期是什么时候"}).content.decode()
    assert "2027年3月1日" in body


def test_memory_search_api_and_context_answer_a_question(api, alice, notes):
    found = api.post("/memories/search", {"user": "alice", "query": "续约日期是什么时候", "top_k": 3})
    assert found.status_code == 200
    assert "2027年3月1日" in found.json()["results"][0]["memory"]["content"]
    context = api.post("/context", {"user": "alice", "task": "How much is the Globex budget?"})
    assert context.status_code == 200
    assert "40,000 euros" in context.json()["prompt"]
