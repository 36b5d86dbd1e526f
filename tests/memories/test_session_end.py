"""Session end: the fact extractor (an LLM with a 60 s timeout and retries) is called with no
transaction open and no lock held; what it found is written in one short transaction that
re-checks the chunk, so two extractions of one session running at once write it once."""

import threading

import pytest
from django.db import connection, connections

from memories.models import ConversationSession, Memory, SessionChunk
from memories.services import extraction
from memories.services.extraction import session_extract
from skills.services import skill_run

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("offline_llm")]

TURNS = ["客户C合同金额30万元，下周三签约。", "The Apollo launch moved to March 19, and Bob owns the budget."]


def _backend_state(pid: int) -> tuple[str, int]:
    """(pg_stat_activity's state of backend `pid`, how many locks it holds), read from
    another connection."""
    other = connections.create_connection("default")
    try:
        with other.cursor() as cursor:
            cursor.execute("SELECT state FROM pg_stat_activity WHERE pid = %s", [pid])
            state = cursor.fetchone()[0]
            cursor.execute("SELECT count(*) FROM pg_locks WHERE pid = %s AND locktype <> 'virtualxid'", [pid])
            return state, cursor.fetchone()[0]
    finally:
        other.close()


class SlowLLM:
    """Stands in for the skill call: records what the connection holds while it "waits",
    waits for the others at `barrier`, then answers as the offline extractor does."""

    def __init__(self, parties: int = 1):
        self.barrier = threading.Barrier(parties, timeout=30)
        self.seen: list[tuple[bool, str, int]] = []
        self.lock = threading.Lock()

    def __call__(self, **kwargs):
        state, locks = _backend_state(connection.connection.info.backend_pid)
        with self.lock:
            self.seen.append((connection.in_atomic_block, state, locks))
        self.barrier.wait()
        return skill_run(**kwargs)


def test_the_llm_is_called_with_no_transaction_and_no_lock(alice, ended_session, monkeypatch):
    session = ended_session(alice, TURNS)
    slow = SlowLLM()
    monkeypatch.setattr(extraction, "skill_run", slow)
    result = session_extract(session_id=session.pk)
    assert result["new"] >= 1 and slow.seen
    for in_atomic, state, locks in slow.seen:
        assert not in_atomic
        assert state != "idle in transaction"
        assert locks == 0  # no row, table or advisory lock held while it waits
    assert Memory.objects.filter(meta__session_id=session.pk).exists()


def test_two_extractions_at_once_write_each_chunk_once(alice, ended_session, monkeypatch):
    session = ended_session(alice, TURNS)
    slow = SlowLLM(parties=2)  # both runs are inside the LLM call at the same time
    monkeypatch.setattr(extraction, "skill_run", slow)
    errors = []

    def run():
        try:
            session_extract(session_id=session.pk)
        except Exception as error:  # noqa: BLE001 - reported by the assertion below
            errors.append(error)
        finally:
            connection.close()

    threads = [threading.Thread(target=run) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert not errors
    assert len(slow.seen) == 2 * SessionChunk.objects.filter(session=session).count()
    chunks = list(SessionChunk.objects.filter(session=session).values_list("digest", flat=True))
    assert len(chunks) == len(set(chunks))
    contents = list(Memory.objects.filter(meta__session_id=session.pk).values_list("content", flat=True))
    assert contents and len(contents) == len(set(contents))
    written = sum(SessionChunk.objects.filter(session=session).values_list("memories_written", flat=True))
    assert written == len(contents)


def test_a_session_deleted_while_the_llm_waits_gets_nothing_written(alice, ended_session, monkeypatch):
    session = ended_session(alice, TURNS)

    def deleting(**kwargs):
        ConversationSession.objects.filter(pk=session.pk).delete()
        return skill_run(**kwargs)

    monkeypatch.setattr(extraction, "skill_run", deleting)
    session_extract(session_id=session.pk)
    assert not SessionChunk.objects.filter(session_id=session.pk).exists()
    assert not Memory.objects.filter(meta__session_id=session.pk).exists()
