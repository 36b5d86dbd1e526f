"""Purging a sensitive memory (docs/design.md, Governance): gone, and gone from its history and the skill-run
log; an audit event without the content says it happened. A plain delete keeps history."""

import hashlib
import json

import pytest

from almanac.models import AuditEvent
from memories.models import Memory, MemoryAuditText
from memories.services.compression import memories_compress
from memories.services.memories import memory_create, memory_delete, memory_update
from memories.services.purge import memory_purge
from memories.tasks import session_extract_task
from skills.models import SkillRun
from skills.services import skill_run
from tests.memories.conftest import FILLER, on_topic, quoting

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("offline_llm")]

SECRET = "My passport number is X1234567, renew it in May"


@pytest.fixture
def secret(alice, remember, settings):
    settings.LLM_BASE_URL = ""
    memory = remember(alice, SECRET)
    memory_update(memory=memory, user=alice, data={"importance": 0.9})  # a second history row
    skill_run(
        name="fact_extract",
        input={"text": f"User: {SECRET}"},
        trigger="session:1",
        tenant=alice.profile.tenant,
    )
    return memory


def _history_texts(memory_id: int) -> list[str]:
    return list(Memory.history.filter(id=memory_id).values_list("content", flat=True))


def test_purge_removes_the_text_everywhere_and_audits_without_it(alice, secret):
    memory_id = secret.pk
    counts = memory_purge(memory=secret, user=alice)
    assert not Memory.objects.filter(pk=memory_id).exists()
    texts = _history_texts(memory_id)
    assert len(texts) == 3 and set(texts) == {"[purged]"}  # created, updated, deleted
    assert counts == {"history_rows": 3, "skill_runs": 1, "audit_texts": 2, "admin_log": 0, "task_log": 0}
    assert not any("X1234567" in json.dumps([r.input, r.output, r.error]) for r in SkillRun.objects.all())
    # The audit events keep their digests; the texts beside them are gone.
    assert not MemoryAuditText.objects.filter(before__contains="X1234567").exists()
    assert not MemoryAuditText.objects.filter(after__contains="X1234567").exists()
    update = AuditEvent.objects.get(action="memory.update", object_id=str(memory_id))
    assert update.detail["before_digest"] == hashlib.sha256(SECRET.encode()).hexdigest()
    event = AuditEvent.objects.get(action="memory.purge")
    assert event.object_id == str(memory_id) and event.actor == "alice"
    assert "X1234567" not in json.dumps(event.detail) and event.detail["history_rows"] == 3
    # Nor is it a term of the keyword statistics any more (no memory holds it).
    from almanac.models import TermStat

    assert not TermStat.objects.filter(term__icontains="x1234567").exists()


def test_delete_keeps_history_and_is_audited(alice, secret):
    memory_id = secret.pk
    memory_delete(memory=secret, user=alice)
    assert SECRET in _history_texts(memory_id)
    assert AuditEvent.objects.get(action="memory.delete").object_id == str(memory_id)


def test_only_the_owner_or_a_governor_may_purge(alice, bob, remember):
    shared = remember(alice, "Apollo vendor contract number is C-7781", scope="project", scope_key="Apollo")
    from almanac.errors import ApplicationError

    with pytest.raises(ApplicationError) as info:
        memory_purge(memory=shared, user=bob)  # bob sees it (Apollo) but does not own it
    assert info.value.status_code == 403
    assert Memory.objects.filter(pk=shared.pk).exists() and "C-7781" in _history_texts(shared.pk)[0]


def test_api_delete_with_purge(api, alice, charlie, secret):
    assert api.delete(f"/memories/{secret.pk}", user="charlie", purge="true").status_code == 404  # invisible
    assert api.delete(f"/memories/{secret.pk}", user="alice", purge="true").status_code == 204
    assert set(_history_texts(secret.pk)) == {"[purged]"}


def test_admin_purge_action(client, alice, secret, tenant):
    from almanac.services.users import user_create

    root = user_create(tenant=tenant, username="root", is_admin=True, password="pw-12345678")
    client.force_login(root)
    asked = client.post("/admin/memories/memory/", {"action": "purge", "_selected_action": [secret.pk]})
    assert asked.status_code == 200 and "cannot be undone" in asked.content.decode()  # asked first
    assert Memory.objects.filter(pk=secret.pk).exists()
    response = client.post(
        "/admin/memories/memory/",
        {"action": "purge", "_selected_action": [secret.pk], "post": "yes"},
        follow=True,
    )
    assert response.status_code == 200 and "1 memories purged" in response.content.decode()
    assert set(_history_texts(secret.pk)) == {"[purged]"}
    assert AuditEvent.objects.get(action="memory.purge").actor == "root"


def test_purge_after_an_edit_removes_the_old_text_everywhere(api, alice):
    secret, *_ = on_topic(alice, ["Vendor vault PIN is 4411", *FILLER], scope="project", scope_key="Apollo")
    assert memories_compress() == 1
    summary = Memory.objects.get(meta__source="compression")
    assert "4411" in summary.content and quoting("4411")  # the premise: the run and summary quote it
    edited = api.patch(f"/memories/{secret.pk}", {"user": "alice", "content": "Vendor vault PIN was rotated"})
    assert edited.status_code == 200
    assert api.delete(f"/memories/{secret.pk}", user="alice", purge="true").status_code == 204
    assert quoting("4411") == []
    assert not Memory.history.filter(content__contains="4411").exists()
    assert not Memory.objects.filter(content__contains="4411").exists()


def test_purge_keeps_the_history_of_summaries_that_never_held_it(alice):
    on_topic(alice, FILLER, scope="project", scope_key="Apollo")
    assert memories_compress() == 1
    summary = Memory.objects.get(meta__source="compression")
    lone = memory_create(owner=alice, content="Vendor vault PIN is 4411")[0]
    memory_update(memory=lone, user=alice, data={"content": "Vendor vault PIN was rotated"})
    memory_purge(memory=Memory.objects.get(pk=lone.pk), user=alice)
    assert "[purged]" not in Memory.history.filter(id=summary.pk).values_list("content", flat=True)
    assert set(Memory.history.filter(id=lone.pk).values_list("content", flat=True)) == {"[purged]"}


def test_purging_words_another_summary_quotes_leaves_that_summary_alone(alice, bob):
    # alice's summary says "verify build"; bob's own memories say it too, and he purges them.
    on_topic(alice, FILLER, scope="project", scope_key="Apollo")
    assert memories_compress() == 1
    summary = Memory.objects.get(meta__source="compression")
    runs = {r.pk: r.output for r in quoting("verify build 2")}
    assert runs
    short = memory_create(owner=bob, content="build")[0]
    memory_purge(memory=short, user=bob)  # too common a text to look for anywhere
    assert {r.pk: r.output for r in quoting("verify build 2")} == runs
    mine = memory_create(owner=bob, content="verify build 3 before stage 4")[0]
    memory_purge(memory=mine, user=bob)
    # The summary's history is alice's (a skill run quoting the text itself is redacted: a log).
    assert "[purged]" not in Memory.history.filter(id=summary.pk).values_list("content", flat=True)


@pytest.mark.parametrize(
    ("turn", "needle"),
    [
        ('My passport number is "E12345678".', "E12345678"),
        ("我的护照号码是“E12345678”，签发地是C:\\上海。", "E12345678"),
        ('The "vault" code is V-99\\7 and the PIN is 4411.', "4411"),
    ],
)
def test_purge_redacts_the_runs_that_quote_it(api, alice, ended_session, turn, needle):
    session = ended_session(alice, [turn])
    session_extract_task(session.pk)
    memory = Memory.objects.get(owner=alice, content__contains=needle)
    assert quoting(needle)  # the premise: the extraction run quotes it
    assert api.delete(f"/memories/{memory.pk}", user="alice", purge="true").status_code == 204
    assert quoting(needle) == []


# --- Purged everywhere: every text column of every table, found by information_schema -------

NEEDLE = "QX-9917-ZEBRA"
TEXT_TYPES = ("text", "character varying", "character", "json", "jsonb", "ARRAY", "tsvector", "USER-DEFINED")


def _tables_holding(needle: str) -> list[str]:
    """Every (table.column) of the database whose text holds `needle`: all text, varchar,
    json, array and tsvector columns of every table, listed by information_schema."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT c.table_name, c.column_name FROM information_schema.columns c"
            " JOIN information_schema.tables t USING (table_schema, table_name)"
            " WHERE c.table_schema = current_schema() AND t.table_type = 'BASE TABLE'"
            " AND (c.data_type = ANY(%s) AND (c.data_type <> 'USER-DEFINED' OR c.udt_name <> 'vector'))",
            [list(TEXT_TYPES)],
        )
        columns = cursor.fetchall()
        assert len(columns) > 100  # the premise: the whole schema, not a hand list
        found = []
        for table, column in columns:
            cursor.execute(f'SELECT count(*) FROM "{table}" WHERE "{column}"::text ILIKE %s', [f"%{needle}%"])
            if cursor.fetchone()[0]:
                found.append(f"{table}.{column}")
    return found


def _task_log_holding(needle: str) -> list[int]:
    """django-q's task log keeps arguments and results pickled (base64): decoded here."""
    from django_q.models import Task

    return [t.pk for t in Task.objects.all() if needle.lower() in repr((t.args, t.kwargs, t.result)).lower()]


def _cache_holding(needle: str) -> bool:
    from django.core.cache import caches

    store = getattr(caches["default"], "_cache", {})
    return any(needle.lower().encode() in bytes(value).lower() for value in store.values())


@pytest.mark.usefixtures("_tasks_run_inline")
def test_a_purged_memory_is_in_no_table(
    api, client, alice, tenant, settings, django_capture_on_commit_callbacks
):
    from django.core.cache import cache
    from django_q.tasks import async_task

    from almanac.services.users import user_create

    settings.LLM_BASE_URL = ""
    text = f"Vault door code {NEEDLE} opens the archive room on floor 3"
    # 1. Created through the API, by an agent acting for alice.
    created = api.post("/memories", {"user": "alice", "content": text, "memory_type": "semantic"})
    assert created.status_code == 201, created.content
    memory_id = created.json()["id"]
    # 2. Edited in the admin (the admin log keeps its first 60 characters).
    root = user_create(tenant=tenant, username="root", is_admin=True, password="pw-12345678")
    client.force_login(root)
    page = client.get(f"/admin/memories/memory/{memory_id}/change/")
    form = page.context["adminform"].form
    data = {name: form[name].value() for name in form.fields}
    data = {k: v for k, v in data.items() if v is not None}
    data["content"] = f"{text}; the spare key is in {NEEDLE}-B"
    changed = client.post(f"/admin/memories/memory/{memory_id}/change/", data)
    assert changed.status_code == 302, (
        changed.context["adminform"].form.errors if changed.context else changed
    )
    # 3. Skills ran over it: directly, and as a queued task (the task log keeps args and result).
    skill_run(name="fact_extract", input={"text": f"User: {text}"}, trigger="admin", tenant=tenant)
    async_task(
        "skills.services.skill_run",
        q_options={"task_name": "summarize:adhoc"},
        name="summarize",
        input={"text": text, "max_tokens": 50},
        tenant=tenant,
    )
    cache.set("recent-note", {"said": text})  # something cached what it said
    # 4. It was searched for (keyword statistics, search columns).
    found = api.post("/memories/search", {"user": "alice", "query": NEEDLE, "top_k": 3}).json()
    assert memory_id in [hit["memory"]["id"] for hit in found["results"]]
    before = _tables_holding(NEEDLE)
    assert {
        "memories_memory.content",
        "memories_historicalmemory.content",
        "django_admin_log.object_repr",
        "skills_skillrun.input",
    } <= set(before), before
    assert _task_log_holding(NEEDLE) and _cache_holding(NEEDLE)

    with django_capture_on_commit_callbacks(execute=True):
        purged = client.post(
            "/admin/memories/memory/",
            {"action": "purge", "_selected_action": [memory_id], "post": "yes"},
            follow=True,
        )
    assert "1 memories purged" in purged.content.decode()
    assert _tables_holding(NEEDLE) == []
    assert _task_log_holding(NEEDLE) == []
    assert not _cache_holding(NEEDLE)
    assert AuditEvent.objects.filter(action="memory.purge", object_id=str(memory_id)).exists()
