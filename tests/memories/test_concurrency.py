"""Concurrent writes of one memory, scope or session chunk: serialized, nothing counted twice."""

import pytest
from django.db import connection, transaction

from almanac.errors import ApplicationError
from almanac.models import CorpusStat, TermStat
from memories.models import CORPUS, Memory, SessionChunk
from memories.services.compression import memories_compress, memory_compress_topic
from memories.services.extraction import _dated_chunks, _digest, session_extract
from memories.services.memories import memory_create, memory_delete, memory_update
from memories.services.purge import memory_purge
from memories.services.rows import memory_set_status
from tests.locking import committed_meanwhile, while_locked

pytestmark = pytest.mark.django_db(transaction=True)


def _stats(tenant, terms):
    """(documents, the summed document frequency of `terms`) of the memory corpus."""
    docs = CorpusStat.objects.get(tenant=tenant, corpus=CORPUS).docs
    return docs, sum(
        TermStat.objects.filter(tenant=tenant, corpus=CORPUS, term__in=terms).values_list("df", flat=True)
    )


def test_two_deletes_of_one_memory_count_once(tenant, alice, remember):
    remember(alice, "Zanzibar pricing sheet for Apollo")
    memory = remember(alice, "Zanzibar renewal is due in March")
    memory_id, terms = memory.pk, list(memory.tf)
    docs, df = _stats(tenant, terms)
    stale = Memory.objects.get(pk=memory_id)  # what the second request loaded before the first deleted it

    outcome = while_locked(
        lambda: memory_delete(memory=memory, user=alice),
        lambda: memory_delete(memory=stale, user=alice),
    )

    assert outcome == {"value": False}, outcome  # gone already: nothing done (the API says 404)
    assert _stats(tenant, terms) == (docs - 1, df - len(terms))
    assert Memory.history.filter(id=memory_id, history_type="-").count() == 1


def test_two_identical_writes_at_once_make_one_memory(tenant, alice):
    content = "Apollo deploys happen on Tuesdays after the standup"
    outcome = while_locked(
        lambda: memory_create(owner=alice, content=content),
        lambda: memory_create(owner=alice, content=content),
    )
    [memory] = Memory.objects.filter(content=content)
    assert outcome["value"] == (memory, memory)  # the second write is the first one's duplicate


def test_a_chunk_two_extractions_reach_at_once_is_extracted_once(alice, ended_session):
    session = ended_session(alice, ["I always prefer concise bullet-point answers about Apollo."])
    [(chunk, day)] = _dated_chunks(session)
    digest = _digest(session.pk, chunk["text"], day)  # a chunk is the skill's input: its new text

    def first_run_holds_the_chunk():
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))", [f"chunk:{digest}"])
        SessionChunk.objects.create(session=session, digest=digest, position=0, outcome="extracted")

    outcome = while_locked(first_run_holds_the_chunk, lambda: session_extract(session_id=session.pk))
    assert "error" not in outcome, outcome  # it used to fail on the chunk's unique digest
    assert SessionChunk.objects.filter(session=session).count() == 1
    assert not Memory.objects.filter(owner=alice).exists()  # the second run extracted nothing


@pytest.fixture
def folded(tenant, bob, settings):
    """24 memories of bob's department compressed into one summary."""
    from tests.memories.conftest import at_cosine, unit

    settings.LLM_BASE_URL = ""
    topic = unit(41)
    originals = [
        memory_create(
            owner=bob,
            content=f"Sales close step {i}: update forecast {i} before day {i % 5 + 1}",
            scope="dept",
            embedding=at_cosine(topic, 0.9, seed=300 + i),
        )[0]
        for i in range(24)
    ]
    assert memories_compress() == 1
    return originals, Memory.objects.get(meta__source="compression")


def test_an_original_rewritten_while_its_summary_is_deleted_waits_its_turn(bob, folded):
    # The rewrite locks the original, then the summary; the summary's delete locks the
    # summary, then its originals. Interleaved (the rewrite holding the original when the
    # delete starts), that was a deadlock; the tenant's write lock, taken first by both,
    # makes the delete wait for the whole rewrite.
    from memories.services.rows import lock_tenant_writes

    originals, summary = folded

    def rewrite_begins():
        lock_tenant_writes(bob.profile.tenant_id)
        Memory.objects.select_for_update().get(pk=originals[5].pk)

    outcome = while_locked(
        rewrite_begins,
        lambda: memory_delete(memory=summary, user=bob),
        then=lambda: memory_update(memory=originals[5], user=bob, data={"content": "Step five, redone"}),
    )
    assert outcome == {"value": False}, outcome  # the rewrite released (deleted) the summary first
    assert not Memory.objects.filter(pk=summary.pk).exists()
    assert set(Memory.objects.filter(owner=bob).values_list("status", flat=True)) == {"active"}


def test_a_topic_that_changed_while_its_summary_was_written_is_not_compressed(bob, folded, monkeypatch):
    from memories.services import topics

    originals, summary = folded
    memory_delete(memory=summary, user=bob)  # the originals are active again
    topic = list(Memory.objects.filter(owner=bob, status="active").order_by("created_at", "id"))
    real = topics.skill_run

    def skill_run_while_one_moves(**kw):
        memory_update(memory=topic[0], user=bob, data={"scope": "user"})  # during the LLM call
        return real(**kw)

    monkeypatch.setattr(topics, "skill_run", skill_run_while_one_moves)
    assert memory_compress_topic(memories=topic) is None
    assert not Memory.objects.filter(meta__source="compression").exists()
    assert Memory.objects.get(pk=topic[0].pk).status == "active"


def test_deleting_a_user_waits_for_the_tenants_writers_before_locking_any_memory(tenant, bob, folded):
    # A user's deletion writes their memories (row locks: the owner set to NULL, private ones
    # deleted through the services): it must queue behind the tenant's writers first, as
    # they do, or a delete of several users at once and any memory write could each hold
    # what the other waits for.
    from django.contrib.auth import get_user_model

    from memories.services.rows import lock_tenant_writes

    originals, summary = folded
    locked_meanwhile = []

    def rows_still_free():  # run while the deletion waits: it must hold none of them yet
        ids = [summary.pk, *(m.pk for m in originals)]
        locked_meanwhile.extend(
            Memory.objects.select_for_update(nowait=True).filter(pk__in=ids).values_list("pk", flat=True)
        )

    outcome = while_locked(
        lambda: lock_tenant_writes(tenant.pk),
        lambda: get_user_model().objects.get(pk=bob.pk).delete(),
        then=rows_still_free,
    )
    assert "error" not in outcome, outcome
    assert len(locked_meanwhile) == 25 and not Memory.objects.filter(owner_id=bob.pk).exists()


def test_a_rename_while_the_summary_is_written_stops_the_compression(tenant, alice, monkeypatch):
    # A rename re-keys the topic's rows without touching updated_at; the summary would have
    # been written under the old name's key, for whoever gets that name next.
    from django.contrib.auth import get_user_model

    from memories.services import topics
    from tests.memories.conftest import at_cosine, unit

    topic_vector = unit(43)
    for i in range(22):
        memory_create(
            owner=alice,
            content=f"My note {i} on forecast {i}",
            embedding=at_cosine(topic_vector, 0.9, seed=500 + i),
        )
    topic = list(Memory.objects.filter(owner=alice).order_by("created_at", "id"))
    real = topics.skill_run

    def rename():
        user = get_user_model().objects.get(pk=alice.pk)
        user.username = "alice2"
        user.save()

    def skill_run_while_renamed(**kw):  # the rename commits in another transaction
        committed_meanwhile(rename)
        return real(**kw)

    monkeypatch.setattr(topics, "skill_run", skill_run_while_renamed)
    assert memory_compress_topic(memories=topic) is None
    assert {tuple(acl) for acl in Memory.objects.filter(owner=alice).values_list("acl", flat=True)} == {
        ("user:alice2",)
    }
    assert not Memory.objects.filter(meta__source="compression").exists()


def test_a_rename_waits_for_a_memory_write_of_that_user(tenant, alice):
    # The write holds the tenant lock and, at commit, needs alice's user row (its owner key);
    # the rename locked that row first and asked for the tenant lock after: a deadlock.
    from django.contrib.auth import get_user_model

    def rename():
        with transaction.atomic():  # as the admin's change view does
            user = get_user_model().objects.get(pk=alice.pk)
            user.username = "alice2"
            user.save()

    outcome = while_locked(lambda: memory_create(owner=alice, content="written during the rename"), rename)
    assert "error" not in outcome, outcome
    assert list(Memory.objects.filter(owner=alice).values_list("acl", flat=True)) == [["user:alice2"]]


def test_a_restore_and_a_delete_of_its_summary_at_once_do_not_deadlock(alice, settings):
    """A restore locks the originals, then their summary; a delete of the summary locks it,
    then its originals. Both take the tenant's write lock first, so one waits for the other."""
    from memories.tasks import memory_compress_task
    from tests.memories.test_compression import _apollo

    settings.LLM_BASE_URL = ""
    originals = _apollo(alice, settings.MEMORY_COMPRESS_MIN + 1)
    memory_compress_task()
    summary = Memory.objects.get(meta__source="compression")
    ids = [m.pk for m in originals]

    outcome = while_locked(
        lambda: memory_set_status(
            memories=Memory.objects.filter(pk__in=ids), status="active", user=alice, reason="admin:restore"
        ),
        lambda: memory_delete(memory=summary, user=alice),
        then=lambda: list(Memory.objects.select_for_update().filter(pk=summary.pk)),
    )
    assert outcome == {"value": True}, outcome
    assert not Memory.objects.filter(pk=summary.pk).exists()
    assert Memory.objects.filter(pk__in=ids, status="active").count() == len(ids)


def test_a_purge_while_compression_runs_leaves_no_run_log_quoting_it(alice, settings, monkeypatch):
    """The purge redacts the runs it can see; the compression's run row, written in its own
    transaction after the purge, must not be committed when it gives up."""

    from memories.services import topics
    from memories.tasks import memory_compress_task
    from skills.models import SkillRun
    from tests.memories.test_compression import _apollo

    settings.LLM_BASE_URL = ""
    originals = _apollo(alice, settings.MEMORY_COMPRESS_MIN + 1)
    secret = originals[0]
    real = topics.skill_run

    def slow_skill(**kwargs):  # the purge lands while the LLM works
        committed_meanwhile(lambda: memory_purge(memory=Memory.objects.get(pk=secret.pk), user=alice))
        return real(**kwargs)

    monkeypatch.setattr(topics, "skill_run", slow_skill)
    assert memory_compress_task()["summaries"] == 0  # a memory changed meanwhile: nothing written
    assert not Memory.objects.filter(pk=secret.pk).exists()
    assert not [r for r in SkillRun.objects.all() if secret.content in str(r.input)]


def test_a_memory_deleted_while_a_change_waited_is_a_404_not_a_500(alice):
    """PATCH or feedback that read the memory just before a concurrent DELETE took it."""
    from memories.services.feedback import memory_feedback
    from memories.services.memories import memory_delete, memory_update

    stale, _ = memory_create(owner=alice, content="Acme renews in May")
    memory_delete(memory=Memory.objects.get(pk=stale.pk), user=alice)
    with pytest.raises(ApplicationError) as updating:
        memory_update(memory=stale, user=alice, data={"importance": 0.9})
    with pytest.raises(ApplicationError) as rating:
        memory_feedback(memory=stale, user=alice, signal="adopted")
    assert updating.value.status_code == rating.value.status_code == 404
