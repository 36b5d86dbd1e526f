"""Scope attribution by content (memories.services.attribution): a named project or
department is the scope when the speaker belongs to it, stays private and is marked for
review when they do not; company-wide statements go to the tenant from those allowed."""

import pytest

from almanac.models import Department
from almanac.services.users import user_create
from memories import selectors
from memories.models import Memory
from memories.services.attribution import memories_mark_reviewed, scope_attribution
from memories.services.extraction import session_extract

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("offline_llm")]


@pytest.fixture
def li(tenant):
    """In project Zeus only."""
    return user_create(tenant=tenant, username="li", projects=["Zeus"])


@pytest.fixture
def wang(tenant):
    """In project Zeus and the 财务部 department."""
    return user_create(tenant=tenant, username="wang", projects=["Zeus"], departments=["财务部"])


@pytest.fixture
def boss(tenant):
    return user_create(tenant=tenant, username="boss", is_admin=True)


def _where(user, text):
    found = scope_attribution(user=user, text=text)
    return found.scope, found.scope_key, (found.review or {}).get("named")


def test_a_named_project_of_the_speaker_is_the_scope(li, alice):
    assert _where(li, "Our team decided to move the Zeus launch to May") == ("project", "zeus", None)
    assert _where(li, "Zeus 的上线推迟到五月") == ("project", "zeus", None)
    assert _where(alice, "the apollo launch moved to June") == ("project", "apollo", None)  # any case


def test_a_named_project_the_speaker_is_not_in_stays_private_and_is_marked(li, alice):
    assert _where(li, "Our team decided to move the Apollo launch") == ("user", None, ["project:apollo"])
    assert _where(li, "我们项目组决定推迟 Apollo 的发布") == ("user", None, ["project:apollo"])
    assert _where(alice, "Zeus 的上线推迟到五月") == ("user", None, ["project:zeus"])


def test_names_match_whole_latin_words_only(alice):
    assert _where(alice, "Apollonia ordered 40 chairs") == ("user", None, None)
    assert _where(alice, "Wholesales grew 3% this quarter") == ("user", None, None)


def test_a_named_department_in_chinese_and_english(wang, alice):
    assert _where(wang, "财务部每月5日结账") == ("dept", Department.objects.get(name="财务部").key, None)
    assert _where(alice, "Sales closes the quarter on March 28") == ("dept", "sales", None)
    assert _where(alice, "财务部每月5日结账") == (
        "user",
        None,
        [Department.objects.get(name="财务部").group_key],
    )


def test_two_of_the_speakers_units_named_is_ambiguous(wang):
    assert _where(wang, "Zeus 的预算由财务部审批") == ("user", None, None)


def test_the_speaker_about_themselves_stays_private(li):
    assert _where(li, "I think the Apollo launch will slip") == ("user", None, None)
    assert _where(li, "我觉得 Zeus 的排期太紧") == ("user", None, None)


def test_company_wide_statements_by_an_admin_go_to_the_tenant(boss, tenant):
    assert _where(boss, "全公司下周一开始使用新的报销系统") == ("tenant", tenant.slug, None)
    assert _where(boss, "Everyone in the company must finish security training by Friday") == (
        "tenant",
        tenant.slug,
        None,
    )


def test_company_wide_statements_by_others_stay_private_and_are_marked(alice, tenant):
    assert _where(alice, "公司规定报销须在30天内提交") == ("user", None, [tenant.group_key])
    assert _where(alice, "Company policy: laptops are replaced every 3 years") == (
        "user",
        None,
        [tenant.group_key],
    )


def test_extraction_keeps_another_teams_news_private_and_queues_it(li, bob, tenant, ended_session):
    """li (Zeus only) reports Apollo's news: neither Zeus nor Apollo is told; a governor finds it."""
    zeus_mate = user_create(tenant=tenant, username="zhao", projects=["Zeus"])
    session_extract(
        session_id=ended_session(li, ["Our team decided to move the Apollo launch to May 12."]).pk
    )
    memory = Memory.objects.get(owner=li)
    assert (memory.scope, memory.acl, memory.needs_review) == ("user", ["user:li"], True)
    assert memory.meta["review"] == {"reason": "names-other-unit", "named": ["project:apollo"]}
    for reader in (zeus_mate, bob):
        assert selectors.memory_search(user=reader, query="Apollo launch May") == []
    assert memories_mark_reviewed(memories=Memory.objects.filter(pk=memory.pk), user=li) == 1
    memory.refresh_from_db()
    assert not memory.needs_review and memory.history.first().history_change_reason == "admin:reviewed"


def test_extraction_shares_a_teams_own_news_with_the_team(li, tenant, ended_session):
    zeus_mate = user_create(tenant=tenant, username="zhao", projects=["Zeus"])
    session_extract(session_id=ended_session(li, ["Zeus 的上线推迟到5月12日。"]).pk)
    memory = Memory.objects.get(owner=li)
    assert (memory.acl, memory.needs_review) == (["project:zeus"], False)
    assert [h.memory.pk for h in selectors.memory_search(user=zeus_mate, query="Zeus 上线")] == [memory.pk]


def test_extraction_of_a_company_wide_rule_by_an_admin_reaches_everyone(boss, charlie, tenant, ended_session):
    session_extract(session_id=ended_session(boss, ["全公司下周一开始使用新的报销系统。"]).pk)
    memory = Memory.objects.get(owner=boss)
    assert memory.acl == [tenant.group_key]
    assert [h.memory.pk for h in selectors.memory_search(user=charlie, query="报销系统")] == [memory.pk]


def test_the_admin_lists_the_review_queue_and_clears_it(client, li, bob, boss, ended_session):
    """bob is in Apollo: the project exists."""
    session_extract(
        session_id=ended_session(li, ["Our team decided to move the Apollo launch to May 12."]).pk
    )
    session_extract(session_id=ended_session(li, ["Zeus 的上线推迟到5月12日。"]).pk)
    marked = Memory.objects.get(owner=li, needs_review=True)
    client.force_login(boss)
    queue = client.get("/admin/memories/memory/?needs_review__exact=1").context["cl"].queryset
    assert [m.pk for m in queue] == [marked.pk]
    response = client.post(
        "/admin/memories/memory/", {"action": "mark_reviewed", "_selected_action": [marked.pk]}, follow=True
    )
    assert "1 memories marked reviewed" in response.content.decode()
    assert not Memory.objects.filter(needs_review=True).exists()
