"""Compression (DESIGN §5): a crowded topic of one scope becomes one summary memory; the
originals are compressed, linked, restorable, and deleted after the keep period."""

from datetime import timedelta

import pytest
from django.conf import settings
from django.utils import timezone

from almanac.models import AuditEvent
from memories import selectors, services
from memories.models import Memory, MemoryLink
from memories.services import compression
from memories.tasks import memory_compress_task
from tests.memories.conftest import FILLER, at_cosine, on_topic, unit

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("offline_llm")]

TOPIC = unit(40)


def _apollo(owner, n: int, **kw):
    # One topic: vectors at cosine 0.9 to a common direction (so ~0.8 to each other).
    return [
        services.memory_create(
            owner=owner,
            content=f"Apollo fact number {i}: the release checklist item {i} is owned by team {i % 3}",
            embedding=at_cosine(TOPIC, 0.9, seed=100 + i),
            **kw,
        )[0]
        for i in range(n)
    ]


def test_a_crowded_topic_becomes_one_summary(alice, bob, charlie, settings):
    settings.LLM_BASE_URL = ""
    originals = _apollo(alice, settings.MEMORY_COMPRESS_MIN + 3, scope="project", scope_key="Apollo")
    unrelated = [
        services.memory_create(
            owner=alice, content=f"tea note {i}", embedding=unit(200 + i), scope="project", scope_key="Apollo"
        )[0]
        for i in range(3)
    ]
    assert memory_compress_task() == {"summaries": 1, "expired": 0}

    [summary] = Memory.objects.filter(meta__source="compression")
    assert summary.status == "active" and summary.scope == "project" and summary.scope_key == "apollo"
    assert summary.acl == originals[0].acl  # visible to exactly the originals' readers
    assert "Apollo fact number" in summary.content
    assert set(Memory.objects.filter(pk__in=[m.pk for m in originals]).values_list("status", flat=True)) == {
        "compressed"
    }
    assert set(Memory.objects.filter(pk__in=[m.pk for m in unrelated]).values_list("status", flat=True)) == {
        "active"
    }
    assert MemoryLink.objects.filter(target=summary, kind="compressed_into").count() == len(originals)
    assert AuditEvent.objects.get(action="memory.compress").detail["originals"] == len(originals)
    # Recall finds the summary, never the compressed originals; charlie (not in Apollo) nothing.
    found = [
        h.memory.pk for h in selectors.memory_search(user=bob, query="Apollo release checklist", top_k=30)
    ]
    assert summary.pk in found and not set(found) & {m.pk for m in originals}
    assert selectors.memory_search(user=charlie, query="Apollo release checklist") == []
    assert memory_compress_task() == {"summaries": 0, "expired": 0}  # idempotent


def test_scopes_are_never_mixed_and_small_topics_stay(alice, settings):
    settings.LLM_BASE_URL = ""
    half = settings.MEMORY_COMPRESS_MIN // 2 + 1
    _apollo(alice, half)  # alice's private memories
    _apollo(alice, half, scope="project", scope_key="Apollo")
    assert memory_compress_task()["summaries"] == 0
    assert not Memory.objects.exclude(status="active").exists()


def test_restore_brings_originals_back_and_retires_an_empty_summary(alice, settings):
    settings.LLM_BASE_URL = ""
    originals = _apollo(alice, settings.MEMORY_COMPRESS_MIN + 1)
    memory_compress_task()
    summary = Memory.objects.get(meta__source="compression")
    some = Memory.objects.filter(pk__in=[m.pk for m in originals[:5]])
    assert services.memory_restore(memories=some, user=alice) == 5
    summary.refresh_from_db()
    assert summary.status == "active"  # still stands for the other originals
    assert (
        services.memory_restore(memories=Memory.objects.filter(status="compressed"), user=alice)
        == len(originals) - 5
    )
    summary.refresh_from_db()
    assert summary.status == "archived" and not MemoryLink.objects.exists()
    assert set(Memory.objects.filter(pk__in=[m.pk for m in originals]).values_list("status", flat=True)) == {
        "active"
    }


def test_originals_are_deleted_after_the_keep_period(alice, settings):
    settings.LLM_BASE_URL = ""
    originals = _apollo(alice, settings.MEMORY_COMPRESS_MIN + 1)
    memory_compress_task()
    old = [m.pk for m in originals[:4]]
    Memory.objects.filter(pk__in=old).update(
        updated_at=timezone.now() - timedelta(days=settings.MEMORY_COMPRESSED_KEEP_DAYS + 1)
    )
    assert memory_compress_task() == {"summaries": 0, "expired": 4}
    assert not Memory.objects.filter(pk__in=old).exists()
    assert Memory.objects.filter(status="compressed").count() == len(originals) - 4
    assert Memory.objects.filter(meta__source="compression", status="active").count() == 1


def test_admin_restore_action(client, alice, tenant, settings):
    from almanac.services.users import user_create

    settings.LLM_BASE_URL = ""
    originals = _apollo(alice, settings.MEMORY_COMPRESS_MIN + 1)
    memory_compress_task()
    client.force_login(user_create(tenant=tenant, username="root", is_admin=True, password="pw-12345678"))
    response = client.post(
        "/admin/memories/memory/",
        {"action": "restore", "_selected_action": [m.pk for m in originals]},
        follow=True,
    )
    assert f"{len(originals)} memories restored" in response.content.decode()
    assert Memory.objects.get(meta__source="compression").status == "archived"


def _expire(memories) -> None:
    Memory.objects.filter(pk__in=[m.pk for m in memories]).update(
        updated_at=timezone.now() - timedelta(days=settings.MEMORY_COMPRESSED_KEEP_DAYS + 1)
    )
    assert services.compressed_expire() == len(memories)


def test_restoring_the_last_linked_original_keeps_the_expired_ones_facts(alice, settings):
    """A summary emptied by a restore that still holds expired originals is their only copy:
    it is rewritten from them, never archived out of recall."""
    settings.LLM_BASE_URL = ""
    originals = _apollo(alice, settings.MEMORY_COMPRESS_MIN + 1)
    memory_compress_task()
    summary = Memory.objects.get(meta__source="compression")
    kept, expired = originals[0], originals[1:]
    _expire(expired)
    assert services.memory_restore(memories=Memory.objects.filter(pk=kept.pk), user=alice) == 1
    summary.refresh_from_db()
    assert summary.status == "active"
    assert sorted(summary.meta["compressed_from"]) == sorted(m.pk for m in expired)
    assert "Apollo fact number 1:" in summary.content and "Apollo fact number 0:" not in summary.content
    hits = [h.memory.pk for h in selectors.memory_search(user=alice, query="Apollo fact number 7 checklist")]
    assert summary.pk in hits and kept.pk in hits


def test_purging_a_summary_purges_its_expired_originals_history(alice, settings):
    settings.LLM_BASE_URL = ""
    originals = _apollo(alice, settings.MEMORY_COMPRESS_MIN + 1)
    memory_compress_task()
    summary = Memory.objects.get(meta__source="compression")
    expired, live = originals[:4], originals[4:]
    _expire(expired)
    assert "Apollo fact number 2:" in "".join(
        Memory.history.filter(id=expired[2].pk).values_list("content", flat=True)
    )
    services.memory_purge(memory=summary, user=alice)
    for memory in expired:
        assert set(Memory.history.filter(id=memory.pk).values_list("content", flat=True)) == {"[purged]"}
    # The originals that still exist are theirs: back to active, their history untouched.
    assert set(Memory.objects.filter(pk__in=[m.pk for m in live]).values_list("status", flat=True)) == {
        "active"
    }
    assert "Apollo fact number 5:" in "".join(
        Memory.history.filter(id=live[1].pk).values_list("content", flat=True)
    )


def test_an_expiry_run_reads_a_summary_edited_while_it_runs(alice, settings, monkeypatch):
    """The run must not delete originals by a summary text it read before an edit: once the
    summary no longer says them, the rest go back to active."""
    settings.LLM_BASE_URL = ""
    originals = _apollo(alice, settings.MEMORY_COMPRESS_MIN + 1)
    memory_compress_task()
    summary = Memory.objects.get(meta__source="compression")
    Memory.objects.filter(pk__in=[m.pk for m in originals]).update(
        updated_at=timezone.now() - timedelta(days=settings.MEMORY_COMPRESSED_KEEP_DAYS + 1)
    )
    remove = compression.memory_row_delete

    def remove_then_edit(**kwargs):
        removed = remove(**kwargs)
        Memory.objects.filter(pk=summary.pk).update(content="Apollo has no open facts any more.")
        return removed

    monkeypatch.setattr(compression, "memory_row_delete", remove_then_edit)
    assert services.compressed_expire() == 1  # the first, deleted before the edit
    assert (
        Memory.objects.filter(pk__in=[m.pk for m in originals], status="active").count() == len(originals) - 1
    )


def test_rewriting_a_summary_gives_back_at_once_the_originals_it_no_longer_says(alice, settings):
    settings.LLM_BASE_URL = ""
    originals = _apollo(alice, settings.MEMORY_COMPRESS_MIN + 1)
    memory_compress_task()
    summary = Memory.objects.get(meta__source="compression")
    kept = [line for line in summary.content.splitlines() if "number 1:" in line or "number 2:" in line]
    services.memory_update(memory=summary, user=alice, data={"content": "\n".join(kept)})
    status = dict(Memory.objects.filter(pk__in=[m.pk for m in originals]).values_list("pk", "status"))
    held = {m.pk for m in originals if "number 1:" in m.content or "number 2:" in m.content}
    assert held and all(status[pk] == ("compressed" if pk in held else "active") for pk in status)
    hits = [h.memory.pk for h in selectors.memory_search(user=alice, query="Apollo fact number 7 checklist")]
    assert originals[7].pk in hits  # found again at once, not after the expiry job


def test_originals_an_inverting_summary_flips_are_not_compressed_nor_expired(alice, monkeypatch):
    flipped = {
        "Alice does not eat pork": "Alice eats pork.",
        "Alice is allergic to peanuts, shellfish and sesame": "Alice is allergic to peanuts.",
    }
    originals = on_topic(alice, [*flipped, *FILLER])

    def careless(*, name, input, **kw):  # an LLM that inverts one fact and trims another
        return {"summary": "\n".join(flipped.get(item, item) for item in input["items"])}

    monkeypatch.setattr(compression, "skill_run", careless)
    assert memory_compress_task()["summaries"] == 1
    status = dict(Memory.objects.filter(pk__in=[m.pk for m in originals]).values_list("pk", "status"))
    assert [status[m.pk] for m in originals] == ["active"] * 2 + ["compressed"] * 21
    Memory.objects.filter(pk__in=[m.pk for m in originals]).update(
        updated_at=timezone.now() - timedelta(days=settings.MEMORY_COMPRESSED_KEEP_DAYS + 1)
    )
    assert memory_compress_task()["expired"] == 21
    assert set(Memory.objects.filter(status="active").values_list("content", flat=True)) >= set(flipped)


def test_the_offline_summary_still_holds_its_originals(alice):
    originals = on_topic(alice, ["Alice does not eat pork", "我们的预算是三万元", *FILLER])
    assert services.memories_compress() == 1
    assert set(Memory.objects.filter(pk__in=[m.pk for m in originals]).values_list("status", flat=True)) == {
        "compressed"
    }


# A topic of 24 vendors, each with its own id, date and amount: what a summary must keep.
VENDOR_TOPIC = unit(42)


def _vendors(owner, n=24):
    return [
        services.memory_create(
            owner=owner,
            content=f"Vendor V0{i:02d} signed the supply contract on 2026-03-{i + 1:02d} for {1000 + 37 * i} USD",
            embedding=at_cosine(VENDOR_TOPIC, 0.9, seed=500 + i),
        )[0]
        for i in range(n)
    ]


def _said_somewhere(ids: list[str]) -> set[str]:
    texts = " ".join(Memory.objects.filter(status="active").values_list("content", flat=True))
    return {i for i in ids if i in texts}


def _age(pks):
    Memory.objects.filter(pk__in=pks).update(
        updated_at=timezone.now() - timedelta(days=settings.MEMORY_COMPRESSED_KEEP_DAYS + 1)
    )


def test_compressing_a_large_topic_keeps_every_fact_after_the_keep_period(alice):
    originals = _vendors(alice)
    ids = [f"V0{i:02d}" for i in range(24)]
    assert memory_compress_task()["summaries"] >= 1
    summaries = " ".join(Memory.objects.filter(meta__source="compression").values_list("content", flat=True))
    assert all(i in summaries for i in ids)
    _age([m.pk for m in originals])
    memory_compress_task()
    assert _said_somewhere(ids) == set(ids)
    assert all(f"{1000 + 37 * i} USD" in summaries for i in range(24))


def test_a_topic_larger_than_one_summary_is_split(alice, settings):
    settings.MEMORY_COMPRESS_MAX_TOKENS = 250
    originals = _vendors(alice)
    assert memory_compress_task()["summaries"] >= 2
    summaries = Memory.objects.filter(meta__source="compression")
    assert all(len(s.meta["compressed_from"]) > 1 for s in summaries)
    assert not Memory.objects.filter(pk__in=[m.pk for m in originals], status="active").exists()
    assert _said_somewhere([f"V0{i:02d}" for i in range(24)]) == {f"V0{i:02d}" for i in range(24)}


def test_originals_the_summary_leaves_out_stay_active(alice, monkeypatch):
    originals = _vendors(alice)

    def forgetful(*, name, input, **kw):  # an LLM that keeps only the first ten
        return {"summary": "\n".join(input["items"][:10])}

    monkeypatch.setattr(compression, "skill_run", forgetful)
    assert memory_compress_task()["summaries"] == 1
    summary = Memory.objects.get(meta__source="compression")
    status = dict(Memory.objects.filter(pk__in=[m.pk for m in originals]).values_list("pk", "status"))
    assert [status[m.pk] for m in originals] == ["compressed"] * 10 + ["active"] * 14
    assert MemoryLink.objects.filter(target=summary).count() == 10


def test_expiry_keeps_originals_a_rewritten_summary_no_longer_says(alice):
    originals = _vendors(alice)
    memory_compress_task()
    summary = Memory.objects.get(meta__source="compression")
    # The summary no longer names V020-V023 (an LLM rewrite, an admin edit).
    lines = [line for line in summary.content.splitlines() if not any(f"V02{i}" in line for i in range(4))]
    Memory.objects.filter(pk=summary.pk).update(content="\n".join(lines))
    _age([m.pk for m in originals])
    assert memory_compress_task()["expired"] == 20
    kept = Memory.objects.filter(pk__in=[m.pk for m in originals])
    assert sorted(kept.values_list("status", flat=True)) == ["active"] * 4
    assert not MemoryLink.objects.filter(source__in=kept).exists()
    assert _said_somewhere([f"V0{i:02d}" for i in range(24)]) == {f"V0{i:02d}" for i in range(24)}


def test_an_unlinked_compressed_memory_is_not_deleted(alice, remember):
    memory = remember(alice, "Apollo ships on Fridays")
    Memory.objects.filter(pk=memory.pk).update(
        status="compressed",
        updated_at=timezone.now() - timedelta(days=settings.MEMORY_COMPRESSED_KEEP_DAYS + 1),
    )
    assert memory_compress_task()["expired"] == 0
    assert Memory.objects.get(pk=memory.pk).status == "active"


def test_patching_a_compressed_original_active_unlinks_it(api, alice):
    originals = _vendors(alice)
    memory_compress_task()
    response = api.patch(f"/memories/{originals[0].pk}", {"user": "alice", "status": "active"})
    assert response.status_code == 200 and response.json()["status"] == "active"
    assert not MemoryLink.objects.filter(source_id=originals[0].pk).exists()
