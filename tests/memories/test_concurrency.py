"""Concurrent writes of one memory, scope or session chunk: serialized, nothing counted twice."""

import threading

import pytest
from django.db import connection, connections, transaction
from django.http import Http404

from almanac.models import CorpusStat, TermStat
from memories import services
from memories.models import CORPUS, Memory, SessionChunk
from memories.services.extraction import _chunks_of, _digest

pytestmark = pytest.mark.django_db(transaction=True)


def _waiting_on_lock() -> bool:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM pg_locks WHERE NOT granted AND locktype IN ('advisory', 'tuple', 'transactionid')"
        )
        return cursor.fetchone()[0] > 0


def _while_locked(first, second):
    """Run `first` in a transaction; while it is still open, start `second` in another thread
    and let the transaction commit once `second` waits on a lock. Returns what `second`
    returned or raised."""
    outcome = {}

    def worker():
        try:
            outcome["value"] = second()
        except Exception as exc:
            outcome["error"] = exc
        finally:
            connections.close_all()

    with transaction.atomic():
        first()
        thread = threading.Thread(target=worker)
        thread.start()
        for _ in range(2000):
            if _waiting_on_lock():
                break
            threading.Event().wait(0.005)
        else:
            pytest.fail("the second writer never waited for the first one's lock")
    thread.join(30)
    return outcome


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

    outcome = _while_locked(
        lambda: services.memory_delete(memory=memory, user=alice),
        lambda: services.memory_delete(memory=stale, user=alice),
    )

    assert isinstance(outcome.get("error"), Http404), outcome
    assert _stats(tenant, terms) == (docs - 1, df - len(terms))
    assert Memory.history.filter(id=memory_id, history_type="-").count() == 1


def test_two_identical_writes_at_once_make_one_memory(tenant, alice):
    content = "Apollo deploys happen on Tuesdays after the standup"
    outcome = _while_locked(
        lambda: services.memory_create(owner=alice, content=content),
        lambda: services.memory_create(owner=alice, content=content),
    )
    [memory] = Memory.objects.filter(content=content)
    assert outcome["value"] == (memory, memory)  # the second write is the first one's duplicate


def test_a_chunk_two_extractions_reach_at_once_is_extracted_once(alice, ended_session):
    session = ended_session(alice, ["I always prefer concise bullet-point answers about Apollo."])
    [chunk] = _chunks_of(session)
    digest = _digest(session.pk, chunk)

    def first_run_holds_the_chunk():
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))", [f"chunk:{digest}"])
        SessionChunk.objects.create(session=session, digest=digest, position=0, outcome="extracted")

    outcome = _while_locked(
        first_run_holds_the_chunk, lambda: services.session_extract(session_id=session.pk)
    )
    assert "error" not in outcome, outcome  # it used to fail on the chunk's unique digest
    assert SessionChunk.objects.filter(session=session).count() == 1
    assert not Memory.objects.filter(owner=alice).exists()  # the second run extracted nothing
