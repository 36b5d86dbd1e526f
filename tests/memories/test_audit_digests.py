"""Audit events of memories carry before/after content digests (sha256); the texts are kept
beside them (the audit log is append-only) until a purge removes them."""

import hashlib

import pytest

from almanac.models import AuditEvent
from memories.models import Memory, MemoryAuditText
from memories.services.compression import memory_compress_topic
from memories.services.memories import memory_delete, memory_update
from memories.services.purge import memory_purge
from tests.memories.conftest import FILLER, on_topic

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("offline_llm")]


def sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def _event(action: str, memory_id: int) -> AuditEvent:
    return AuditEvent.objects.filter(action=action, object_id=str(memory_id)).latest("id")


def _texts(event: AuditEvent) -> tuple[str, str]:
    row = MemoryAuditText.objects.get(event=event)
    return row.before, row.after


def test_update_carries_before_and_after(alice, remember):
    memory = remember(alice, "The Apollo kickoff is in room 4")
    memory_update(memory=memory, user=alice, data={"content": "The Apollo kickoff is in the big hall"})
    event = _event("memory.update", memory.pk)
    assert event.detail["before_digest"] == sha("The Apollo kickoff is in room 4")
    assert event.detail["after_digest"] == sha("The Apollo kickoff is in the big hall")
    assert _texts(event) == ("The Apollo kickoff is in room 4", "The Apollo kickoff is in the big hall")


def test_create_and_delete_carry_the_text(alice, remember):
    memory = remember(alice, "Globex pays by wire transfer")
    assert _event("memory.create", memory.pk).detail["after_digest"] == sha("Globex pays by wire transfer")
    memory_id = memory.pk
    memory_delete(memory=memory, user=alice)
    event = _event("memory.delete", memory_id)
    assert event.detail["before_digest"] == sha("Globex pays by wire transfer")
    assert _texts(event)[0] == "Globex pays by wire transfer"


def test_what_a_memory_said_last_week(alice, remember):
    """Governance: the chain of digests and texts of one memory answers it."""
    memory = remember(alice, "Apollo budget owner: Bob")
    memory_update(memory=memory, user=alice, data={"content": "Apollo budget owner: Carol"})
    trail = [
        (e.action, *_texts(e))
        for e in AuditEvent.objects.filter(object_type="memory", object_id=str(memory.pk)).order_by("id")
    ]
    assert trail == [
        ("memory.create", "", "Apollo budget owner: Bob"),
        ("memory.update", "Apollo budget owner: Bob", "Apollo budget owner: Carol"),
    ]


def test_compress_carries_the_originals_and_the_summary(alice):
    originals = on_topic(alice, FILLER)
    summary = memory_compress_topic(memories=originals)
    assert summary is not None
    event = _event("memory.compress", summary.pk)
    before, after = _texts(event)
    assert after == summary.content and event.detail["after_digest"] == sha(summary.content)
    assert FILLER[0] in before and event.detail["before_digest"] == sha(before)
    assert Memory.objects.get(pk=summary.pk).kind == "summary"


def test_purge_removes_the_audit_texts_of_what_quoted_it(alice, remember):
    old = remember(alice, "Alice's passport number is X7654321 valid 10 years")
    new = remember(alice, "Alice's passport number is X7654321 valid 5 years")
    old.refresh_from_db()
    assert old.superseded_by_id == new.pk
    supersede = _event("memory.supersede", old.pk)
    counts = memory_purge(memory=new, user=alice)
    assert counts["audit_texts"] >= 2
    # The supersede event of the other memory quoted it as "after": gone; its digests stay.
    assert _texts(supersede)[1] == "[purged]" and supersede.detail["after_digest"]
    assert not MemoryAuditText.objects.filter(after__contains="valid 5 years").exists()
    assert not MemoryAuditText.objects.filter(before__contains="valid 5 years").exists()
    old.refresh_from_db()
    assert old.status == "active"  # its successor is gone: it is the last word again
