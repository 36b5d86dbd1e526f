"""A compression summary never outlives what it says about an original (docs/design.md, Identity and
access; Memories).

An original folded into a summary that is deleted, purged, moved to another scope or
rewritten must stop being readable through the summary, in the same transaction: the
summary is retired and the other originals come back (nothing else is lost), or, when
some originals were already deleted after the keep period, the summary is rewritten from
those alone.
"""

from datetime import timedelta

import pytest
from django.conf import settings
from django.contrib.auth import get_user_model
from django.utils import timezone

from almanac.errors import ApplicationError
from almanac.services.users import user_create
from memories import selectors
from memories.models import Memory, MemoryLink
from memories.services.compression import (
    compressed_expire,
    memories_compress,
    memory_compress_topic,
    memory_restore,
)
from memories.services.memories import memory_create, memory_delete, memory_update
from memories.services.purge import memory_purge
from tests.memories.conftest import at_cosine, unit

pytestmark = pytest.mark.django_db

TOPIC = unit(41)
SECRET = "wangwei personal bonus 88k"


@pytest.fixture(autouse=True)
def _offline_llm(settings):
    settings.LLM_BASE_URL = ""  # the compress skill's extractive fallback: it quotes the items


@pytest.fixture
def wangwei(tenant):
    return user_create(tenant=tenant, username="wangwei", departments=["Finance"])


@pytest.fixture
def folded(wangwei, bob):
    """24 dept:finance memories (wangwei's secret, 23 of bob's), compressed into one summary
    (bob's: he wrote most of them) that quotes the secret."""
    texts = [f"{SECRET} for the year"] + [
        f"Finance close step {i}: reconcile ledger {i} before day {i % 5 + 1}" for i in range(1, 24)
    ]
    originals = [
        memory_create(
            owner=wangwei if i == 0 else bob,
            content=text,
            scope="dept",
            scope_key="Finance",
            embedding=at_cosine(TOPIC, 0.9, seed=300 + i),
        )[0]
        for i, text in enumerate(texts)
    ]
    assert memories_compress() == 1
    summary = Memory.objects.get(meta__source="compression")
    assert "88k" in summary.content and summary.acl == ["dept:finance"] and summary.owner_id == bob.pk
    assert "88k" in _readable_by(bob)  # the premise: bob reads it through the summary
    return originals[0], originals[1:], summary


def _readable_by(user) -> str:
    """Everything `user` can read about the secret: recall, and lists of every status."""
    hits = selectors.memory_search(user=user, query="wangwei personal bonus", top_k=30)
    listed = selectors.memory_list(user=user, status=None)
    return "\n".join([h.memory.content for h in hits] + [m.content for m in listed])


def _others_active(others):
    return set(Memory.objects.filter(pk__in=[m.pk for m in others]).values_list("status", flat=True))


def test_scope_change_then_purge_hides_the_summary_text(folded, wangwei, bob):
    secret, others, summary = folded
    memory_update(memory=secret, user=wangwei, data={"scope": "user"})
    assert "88k" not in _readable_by(bob)
    memory_purge(memory=Memory.objects.get(pk=secret.pk), user=wangwei)
    assert "88k" not in _readable_by(bob)


def test_scope_change_retires_the_summary_and_brings_the_others_back(folded, wangwei, bob):
    secret, others, summary = folded
    memory_update(memory=secret, user=wangwei, data={"scope": "user"})
    assert "88k" not in _readable_by(bob)
    assert not Memory.objects.filter(pk=summary.pk).exists()
    assert _others_active(others) == {"active"}  # nothing else is lost
    assert not MemoryLink.objects.filter(kind="compressed_into").exists()
    moved = Memory.objects.get(pk=secret.pk)
    assert moved.acl == ["user:wangwei"] and moved.status == "active"  # no longer folded anywhere
    assert "88k" in _readable_by(wangwei)


def test_delete_of_an_original_retires_its_summary(folded, wangwei, bob):
    secret, others, summary = folded
    memory_delete(memory=secret, user=wangwei)
    assert "88k" not in _readable_by(bob)
    assert _others_active(others) == {"active"}


def test_purge_of_an_original_scrubs_the_summary_history(folded, wangwei, bob):
    secret, others, summary = folded
    memory_purge(memory=secret, user=wangwei)
    assert "88k" not in _readable_by(bob)
    assert not Memory.history.filter(content__contains="88k").exists()


def test_rewriting_an_original_removes_the_old_text_from_the_summary(folded, wangwei, bob):
    secret, others, summary = folded
    memory_update(memory=secret, user=wangwei, data={"content": "bonus details removed"})
    assert "88k" not in _readable_by(bob)
    assert _others_active(others) == {"active"}


def test_an_unrelated_change_keeps_the_summary(folded, wangwei, bob):
    secret, others, summary = folded
    memory_update(memory=secret, user=wangwei, data={"importance": 0.9, "scope": "dept"})
    assert Memory.objects.get(pk=summary.pk).status == "active"
    assert Memory.objects.get(pk=secret.pk).status == "compressed"


def test_a_restored_original_that_moves_later_takes_its_text_along(folded, wangwei, bob):
    secret, others, summary = folded
    memory_restore(memories=Memory.objects.filter(pk=secret.pk), user=wangwei)
    memory_update(memory=Memory.objects.get(pk=secret.pk), user=wangwei, data={"scope": "user"})
    assert "88k" not in _readable_by(bob)
    assert _others_active(others) == {"active"}


def test_originals_gone_after_the_keep_period_are_not_lost(folded, wangwei, bob):
    """The summary is the only copy of expired originals: it is rewritten from them alone."""
    secret, others, summary = folded
    expired = others[:5]
    Memory.objects.filter(pk__in=[m.pk for m in expired]).update(
        updated_at=timezone.now() - timedelta(days=settings.MEMORY_COMPRESSED_KEEP_DAYS + 1)
    )
    assert compressed_expire() == 5
    memory_update(memory=secret, user=wangwei, data={"scope": "user"})
    assert "88k" not in _readable_by(bob)
    rewritten = Memory.objects.get(pk=summary.pk)
    assert rewritten.status == "active" and rewritten.acl == ["dept:finance"]
    for memory in expired:
        assert memory.content in rewritten.content
    assert sorted(rewritten.meta["compressed_from"]) == sorted(m.pk for m in expired)
    assert _others_active(others[5:]) == {"active"}  # still here: back on their own


def test_a_deleted_author_leaves_the_shared_summary_as_it_is(folded, wangwei, bob):
    # The secret was shared with dept:finance: it stays for them, and so does the summary.
    secret, others, summary = folded
    get_user_model().objects.get(pk=wangwei.pk).delete()
    kept = Memory.objects.get(pk=secret.pk)
    assert kept.owner_id is None and kept.status == "compressed"
    assert Memory.objects.get(pk=summary.pk).status == "active"
    assert "88k" in _readable_by(bob)


def test_the_api_repro(folded, wangwei, bob, api):
    secret, others, summary = folded
    response = api.patch(f"/memories/{secret.pk}", {"user": "wangwei", "scope": "user"})
    assert response.status_code == 200, response.content
    assert api.delete(f"/memories/{secret.pk}", user="wangwei", purge="true").status_code == 204
    found = api.post("/memories/search", {"user": "bob", "query": "wangwei personal bonus"}).json()
    assert not [r for r in found["results"] if "88k" in r["memory"]["content"]]


def test_a_summary_of_summaries_lets_go_too(folded, wangwei, bob):
    secret, others, summary = folded
    more = [
        memory_create(
            owner=bob,
            content=f"Treasury note {i}: sweep account {i} on day {i % 7 + 1}",
            scope="dept",
            scope_key="Finance",
            embedding=at_cosine(TOPIC, 0.9, seed=500 + i),
        )[0]
        for i in range(settings.MEMORY_COMPRESS_MIN + 1)
    ]
    top = memory_compress_topic(memories=[Memory.objects.get(pk=summary.pk), *more])
    assert "88k" in top.content
    memory_update(memory=secret, user=wangwei, data={"scope": "user"})
    assert "88k" not in _readable_by(bob)
    assert _others_active([*others, *more]) == {"active"}


def test_a_summary_whose_owner_is_deleted_stays_and_can_still_be_undone(folded, wangwei, bob):
    secret, others, summary = folded
    get_user_model().objects.get(pk=bob.pk).delete()  # his 23 originals and the summary stay
    orphan = Memory.objects.get(pk=summary.pk)
    assert orphan.owner_id is None and orphan.status == "active"
    assert _others_active(others) == {"compressed"}
    memory_delete(
        memory=orphan, user=user_create(tenant=wangwei.profile.tenant, username="root", is_admin=True)
    )
    assert _others_active([secret, *others]) == {"active"}


def test_deleting_a_summary_gives_its_originals_back(folded, bob):
    secret, others, summary = folded
    memory_delete(memory=summary, user=bob)
    assert _others_active([secret, *others]) == {"active"}


def test_a_summary_cannot_be_moved_out_of_its_originals_scope(folded, wangwei, bob):
    # bob owns the summary, but most of its text is other people's memories of dept:finance.
    _, _, summary = folded
    with pytest.raises(ApplicationError) as refused:
        memory_update(memory=summary, user=bob, data={"scope": "tenant"})
    assert refused.value.status_code == 409
    assert Memory.objects.get(pk=summary.pk).acl == ["dept:finance"]
