"""The memory views (web.views.memories): the cards in plain words, and each card action
(edit, feedback, archive, delete and its undo, delete everywhere) with its permissions,
as a full page without JavaScript and in place for htmx."""

import json
from datetime import timedelta

import pytest

from almanac.models import AuditEvent
from memories.models import Feedback, Memory
from memories.selectors import memory_search
from memories.services.memories import memory_create
from skills.models import SkillRun
from skills.services import skill_run
from tests.web.conftest import ZH, login

pytestmark = pytest.mark.django_db

HTMX = {"HTTP_HX_REQUEST": "true"}


def remember(owner, content, **kw) -> Memory:
    memory, duplicate = memory_create(owner=owner, content=content, **kw)
    assert duplicate is None
    return memory


def test_memories_are_paged_and_the_links_keep_the_filters(client, alice, five_memories):
    body = login(client, alice).get("/memories/", {"q": "renewal", "type": "semantic"}).content.decode()
    assert body.count('class="card" id="memory-') == 2
    assert 'href="?q=renewal&amp;type=semantic&amp;page=2"' in body
    last = client.get("/memories/", {"q": "renewal", "type": "semantic", "page": "3"}).content.decode()
    assert last.count('class="card" id="memory-') == 1
    assert 'href="?q=renewal&amp;type=semantic&amp;page=2"' in last


def test_memory_kinds_are_in_plain_words_and_the_filter_keeps_working(client, alice):
    memory_create(owner=alice, content="I prefer one-page PDFs", memory_type="semantic")
    memory_create(owner=alice, content="Met Vercel's CFO on May 3", memory_type="episodic")
    body = login(client, alice).get("/memories/", **ZH).content.decode()
    assert '<span class="tag">事实或偏好</span>' in body and '<span class="tag">事件</span>' in body
    assert "语义" not in body and "情景" not in body and ">semantic<" not in body and ">user<" not in body
    english = client.get("/memories/").content.decode()
    assert (
        '<span class="tag">a fact or preference</span>' in english
        and '<span class="tag">an event</span>' in english
    )
    assert "emantic" not in english.replace('value="semantic"', "").replace("type=semantic", "")
    facts = client.get("/memories/", {"type": "semantic"}).content.decode()
    assert (
        "one-page PDFs" in facts and "Vercel" not in facts.split("</form>", 1)[1].split('id="documents"')[0]
    )
    assert '<option value="semantic" selected>Facts and preferences</option>' in facts
    events = client.get("/memories/", {"type": "episodic"}, **ZH).content.decode()
    assert "CFO" in events and "one-page PDFs" not in events
    assert '<option value="episodic" selected>过往事件</option>' in events


def test_a_card_says_owner_audience_origin_and_dates_in_plain_words(client, alice, bob):
    remember(alice, "I prefer one-page PDFs")
    remember(alice, "Sales reviews pipeline on Mondays", scope="dept", scope_key="Sales")
    remember(bob, "Apollo launch moved to June", scope="project", scope_key="Apollo")
    remember(alice, "Acme closes for the holidays on Dec 24", scope="tenant", meta={"source": "document"})
    body = login(client, alice).get("/memories/").content.decode()
    audiences = [part.split("</dd>")[0] for part in body.split('<dd class="visible-to">')[1:]]
    assert audiences == ["everyone at Acme", "Apollo project", "Sales department", "you"]
    assert "<dd>bob</dd>" in body and "<dd>you</dd>" in body
    assert "<dd>a document</dd>" in body and "<dd>an agent</dd>" in body and "<dd>never</dd>" in body
    zh = client.get("/memories/", **ZH).content.decode()
    audiences = [part.split("</dd>")[0] for part in zh.split('<dd class="visible-to">')[1:]]
    assert audiences == ["Acme 全体成员", "Apollo 项目", "Sales 部门", "你"]
    assert "来源" in zh and "最近使用" in zh and "从未" in zh


def test_editing_rewrites_the_memory_with_history_and_finds_it_by_its_new_words(client, alice):
    memory = remember(alice, "The Vercel renewal is due in March")
    page = login(client, alice).post(
        f"/memories/{memory.pk}/edit", {"content": "The Vercel renewal is due in May"}
    )
    assert page.status_code == 302 and page["Location"].endswith(f"/memories/#memory-{memory.pk}")
    assert Memory.objects.get(pk=memory.pk).content == "The Vercel renewal is due in May"
    assert Memory.history.filter(id=memory.pk, history_change_reason="web").exists()
    assert AuditEvent.objects.filter(action="memory.update", object_id=str(memory.pk)).exists()
    hits = memory_search(user=alice, query="Vercel renewal May")
    assert hits and hits[0].memory.pk == memory.pk
    form = client.get(f"/memories/{memory.pk}/edit", **HTMX).content.decode()
    assert "<textarea" in form and "due in May" in form and "<html" not in form
    card = client.post(f"/memories/{memory.pk}/edit", {"content": "Due in June"}, **HTMX).content.decode()
    assert card.startswith("<article") and "Due in June" in card and 'role="status"' in card


def test_an_empty_edit_is_refused_in_the_readers_language(client, alice):
    memory = remember(alice, "The Vercel renewal is due in March")
    page = login(client, alice).post(f"/memories/{memory.pk}/edit", {"content": "  "}, **ZH)
    assert page.status_code == 422 and "<textarea" in page.content.decode()
    assert Memory.objects.get(pk=memory.pk).content == "The Vercel renewal is due in March"


def test_changing_a_shared_memory_warns_first(client, alice):
    memory = remember(alice, "Sales reviews pipeline on Mondays", scope="dept", scope_key="Sales")
    form = login(client, alice).get(f"/memories/{memory.pk}/edit").content.decode()
    assert "shared with Sales department" in form and 'name="confirm"' in form
    page = client.post(f"/memories/{memory.pk}/edit", {"content": "Sales reviews pipeline on Tuesdays"})
    assert page.status_code == 409
    assert Memory.objects.get(pk=memory.pk).content == "Sales reviews pipeline on Mondays"
    client.post(
        f"/memories/{memory.pk}/edit", {"content": "Sales reviews pipeline on Tuesdays", "confirm": "1"}
    )
    assert Memory.objects.get(pk=memory.pk).content == "Sales reviews pipeline on Tuesdays"
    step = client.post(f"/memories/{memory.pk}/archive")
    assert step.status_code == 200 and "Archiving it takes it out of their answers" in step.content.decode()
    assert Memory.objects.get(pk=memory.pk).status == "active"
    step = client.post(f"/memories/{memory.pk}/delete", **HTMX).content.decode()
    assert step.startswith('<article class="card warn"') and 'name="confirm" value="1"' in step
    assert Memory.objects.filter(pk=memory.pk).exists()


def test_editing_a_shared_memory_needs_the_right(client, alice, bob):
    memory = remember(alice, "Apollo launch moved to June", scope="project", scope_key="Apollo")
    body = login(client, bob).get("/memories/").content.decode()
    assert f'id="memory-{memory.pk}"' in body and f"/memories/{memory.pk}/edit" not in body
    assert client.get(f"/memories/{memory.pk}/edit").status_code == 403
    page = client.post(
        f"/memories/{memory.pk}/edit", {"content": "Apollo is cancelled", "confirm": "1"}, **ZH
    )
    assert page.status_code == 403 and "只有" in page.content.decode()
    assert client.post(f"/memories/{memory.pk}/archive", {"confirm": "1"}).status_code == 403
    assert client.post(f"/memories/{memory.pk}/purge", {"confirm": "1"}).status_code == 403
    assert Memory.objects.get(pk=memory.pk).content == "Apollo launch moved to June"
    # Useful / wrong is anyone's who can read it.
    assert client.post(f"/memories/{memory.pk}/feedback", {"signal": "useful"}).status_code == 302


def test_refusing_a_delete_says_why_in_the_readers_language(client, alice, bob):
    memory, _ = memory_create(owner=alice, content="Apollo launch moved", scope="project", scope_key="Apollo")
    page = login(client, bob).post(f"/memories/{memory.pk}/delete", **ZH)
    assert page.status_code == 403
    assert "只有" in page.content.decode()


@pytest.mark.parametrize(
    ("method", "action", "data"),
    [
        ("get", "", {}),
        ("get", "edit", {}),
        ("post", "edit", {"content": "mine now", "confirm": "1"}),
        ("post", "feedback", {"signal": "wrong"}),
        ("post", "archive", {"confirm": "1"}),
        ("post", "unarchive", {"confirm": "1"}),
        ("post", "delete", {"confirm": "1"}),
        ("post", "purge", {"confirm": "1"}),
        ("post", "undo", {}),
    ],
)
def test_a_foreign_memory_is_not_found(client, alice, charlie, method, action, data):
    memory = remember(alice, "I prefer one-page PDFs")
    url = f"/memories/{memory.pk}/{action}"
    assert getattr(login(client, charlie), method)(url, data).status_code == 404
    part = getattr(client, method)(url, data, **HTMX)
    assert part.status_code == 404 and "no longer there" in part.content.decode()
    row = Memory.objects.get(pk=memory.pk)
    assert (row.content, row.status, row.quality) == ("I prefer one-page PDFs", "active", 1.0)
    assert not Feedback.objects.exists()


def test_useful_and_wrong_move_the_quality_as_the_apis_feedback_does(client, alice):
    memory = remember(alice, "The Vercel renewal is due in March")
    card = login(client, alice).post(f"/memories/{memory.pk}/feedback", {"signal": "useful"}, **HTMX)
    assert 'value="useful" aria-pressed="true"' in card.content.decode()
    useful = Memory.objects.get(pk=memory.pk).quality
    assert useful > 1.0
    client.post(f"/memories/{memory.pk}/feedback", {"signal": "wrong"})
    assert Memory.objects.get(pk=memory.pk).quality < 1.0
    assert list(Feedback.objects.order_by("id").values_list("signal", flat=True)) == ["adopted", "corrected"]
    assert client.post(f"/memories/{memory.pk}/feedback", {"signal": "maybe"}).status_code == 422


def test_archive_and_restore(client, alice):
    memory = remember(alice, "The Vercel renewal is due in March")
    page = login(client, alice).post(f"/memories/{memory.pk}/archive")
    assert page["Location"].endswith(f"/memories/?status=archived#memory-{memory.pk}")
    assert Memory.objects.get(pk=memory.pk).status == "archived"
    assert f'id="memory-{memory.pk}"' not in client.get("/memories/").content.decode()
    archived = client.get("/memories/", {"status": "archived"}).content.decode()
    assert f"/memories/{memory.pk}/unarchive" in archived and "/feedback" not in archived
    card = client.post(f"/memories/{memory.pk}/unarchive", **HTMX).content.decode()
    assert Memory.objects.get(pk=memory.pk).status == "active" and f"/memories/{memory.pk}/archive" in card


def test_a_delete_can_be_undone_for_a_short_time(client, alice, settings):
    settings.MEMORY_UNDO_SECONDS = 60
    memory = remember(alice, "The Vercel renewal is due in March")
    memory_id = memory.pk
    page = login(client, alice).post(f"/memories/{memory_id}/delete")
    assert page["Location"].endswith(f"/memories/?deleted={memory_id}")
    assert not Memory.objects.filter(pk=memory_id).exists()
    listing = client.get(page["Location"]).content.decode()
    assert (
        f'action="/memories/{memory_id}/undo"' in listing and "You can undo this for 60 seconds." in listing
    )
    zh = client.get(page["Location"], **ZH).content.decode()
    assert "60 秒内可以撤销。" in zh
    assert client.post(f"/memories/{memory_id}/undo").status_code == 302
    assert Memory.objects.get(pk=memory_id).content == "The Vercel renewal is due in March"
    part = client.post(f"/memories/{memory_id}/delete", **HTMX).content.decode()
    assert "Undo" in part and "60 seconds" in part
    last = Memory.history.filter(id=memory_id, history_type="-").latest("history_id")
    Memory.history.filter(history_id=last.history_id).update(
        history_date=last.history_date - timedelta(seconds=61)
    )
    late = client.post(f"/memories/{memory_id}/undo", **ZH)
    assert late.status_code == 410 and "太久" in late.content.decode()
    assert not Memory.objects.filter(pk=memory_id).exists()


def test_delete_everywhere_removes_history_and_skill_run_copies(client, alice):
    secret = "My passport number is X1234567, renew it in May"
    memory = remember(alice, secret)
    memory_id = memory.pk
    skill_run(
        name="fact_extract",
        input={"text": f"User: {secret}"},
        trigger="session:1",
        tenant=alice.profile.tenant,
    )
    step = login(client, alice).post(f"/memories/{memory_id}/purge")
    assert step.status_code == 200 and "cannot be undone" in step.content.decode()
    assert Memory.objects.filter(pk=memory_id).exists()
    done = client.post(f"/memories/{memory_id}/purge", {"confirm": "1"})
    assert done["Location"].endswith("/memories/?purged=1")
    assert not Memory.objects.filter(pk=memory_id).exists()
    assert set(Memory.history.filter(id=memory_id).values_list("content", flat=True)) == {"[purged]"}
    assert not any("X1234567" in json.dumps([r.input, r.output, r.error]) for r in SkillRun.objects.all())
    event = AuditEvent.objects.get(action="memory.purge", object_id=str(memory_id))
    assert event.actor == "alice" and "X1234567" not in json.dumps(event.detail)
    # Nothing to undo: its text is gone.
    assert client.post(f"/memories/{memory_id}/undo").status_code == 410


def test_the_card_actions_need_a_session(client, alice):
    memory = remember(alice, "The Vercel renewal is due in March")
    page = client.post(f"/memories/{memory.pk}/delete")
    assert page.status_code == 302 and "/login" in page["Location"]
    part = client.post(f"/memories/{memory.pk}/feedback", {"signal": "useful"}, **HTMX)
    assert "HX-Redirect" in part.headers
    assert Memory.objects.filter(pk=memory.pk).exists() and not Feedback.objects.exists()


def test_the_right_on_one_shared_memory_shows_its_edit_and_lets_it_be_edited(client, alice, bob):
    from guardian.shortcuts import assign_perm

    granted = remember(alice, "Apollo launch moved to June", scope="project", scope_key="Apollo")
    other = remember(alice, "Apollo demo is on Friday", scope="project", scope_key="Apollo")
    assign_perm("memories.change_memory", bob, granted)
    body = login(client, bob).get("/memories/").content.decode()
    assert f"/memories/{granted.pk}/edit" in body and f"/memories/{other.pk}/edit" not in body
    client.post(f"/memories/{granted.pk}/edit", {"content": "Apollo launch moved to July", "confirm": "1"})
    assert Memory.objects.get(pk=granted.pk).content == "Apollo launch moved to July"


def test_a_page_of_cards_costs_the_same_queries_whatever_its_length(client, alice, bob):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    def queries() -> int:
        client.get("/memories/")  # sessions, caches
        with CaptureQueriesContext(connection) as captured:
            assert client.get("/memories/").status_code == 200
        return len(captured.captured_queries)

    login(client, bob)
    for n in range(3):
        remember(alice, f"Apollo milestone {n} is owned by team {n * 7}", scope="project", scope_key="Apollo")
    few = queries()
    for n in range(3, 12):
        remember(alice, f"Apollo milestone {n} is owned by team {n * 7}", scope="project", scope_key="Apollo")
    assert queries() == few


def test_the_cards_styles_are_in_the_head(client, alice):
    body = login(client, alice).get("/memories/").content.decode()
    head, main = body.split("</head>", 1)
    assert ".facts {" in head and "<style>" not in main
