"""The per-user governance page (docs/operations.md, Roles): what the system holds about a
person, as the admin may see it; export and purge, both audited."""

import json

import pytest
from django.utils import timezone

from almanac.models import AuditEvent
from memories.models import Memory
from memories.services.memories import memory_create
from metrics.models import ContextCall
from tests.staff import make_staff

pytestmark = pytest.mark.django_db


def _page(client, user):
    return client.get(f"/admin/governance/user/{user.pk}/")


@pytest.fixture
def alices_things(alice, bob):
    own = memory_create(owner=alice, content="Alice prefers 周一 morning standups", scope="user")[0]
    shared = memory_create(owner=bob, content="Apollo ships on the 3rd", scope="project", scope_key="Apollo")[
        0
    ]
    hidden = memory_create(owner=bob, content="Zephyr budget is frozen", scope="project", scope_key="Zephyr")[
        0
    ]
    call = ContextCall.objects.create(
        tenant=alice.profile.tenant, user=alice, at=timezone.now(), task="when does apollo ship",
        task_digest="d" * 64, latency_ms=12.0, memory_ids=[shared.pk],
    )  # fmt: skip
    return own, shared, hidden, call


def test_the_page_shows_memories_groups_and_agent_calls(client, superadmin, alice, alices_things):
    own, shared, hidden, call = alices_things
    client.force_login(superadmin)
    response = _page(client, alice)
    assert response.status_code == 200
    assert [m.pk for m in response.context["own"]] == [own.pk]
    readable = {m.pk for m in response.context["readable"]}
    # Exactly what the access filter lets alice read, less her own.
    assert readable == set(Memory.objects.visible_to(alice).exclude(owner=alice).values_list("pk", flat=True))
    assert shared.pk in readable and hidden.pk not in readable
    groups = {g.key: g.source for g in response.context["groups"]}
    assert groups["dept:sales"] == "their department" and groups["project:apollo"] == "their project"
    assert [c.pk for c in response.context["calls"]] == [call.pk]
    assert "when does apollo ship" in response.content.decode()


def test_a_tenant_admin_of_another_tenant_gets_404(client, alice, mallory):
    make_staff(mallory, "auth.view_user", "memories.view_memory")
    client.force_login(mallory)
    assert _page(client, alice).status_code == 404
    assert client.post(f"/admin/governance/user/{alice.pk}/export.json").status_code == 404


def test_staff_who_may_not_view_users_get_403(client, alice, charlie):
    make_staff(charlie, "memories.view_memory")
    client.force_login(charlie)
    assert _page(client, alice).status_code == 403


def test_a_tenant_admin_sees_only_the_memories_they_may_read(client, tenant_admin, alice, alices_things):
    own, shared, hidden, _call = alices_things
    client.force_login(tenant_admin)  # in Legal: none of alice's private or project memories
    response = _page(client, alice)
    assert response.status_code == 200
    assert list(response.context["own"]) == [] and list(response.context["readable"]) == []


def test_export_json_is_everything_and_audited(client, superadmin, alice, alices_things):
    own, *_ = alices_things
    client.force_login(superadmin)
    assert client.get(f"/admin/governance/user/{alice.pk}/export.json").status_code == 405
    response = client.post(f"/admin/governance/user/{alice.pk}/export.json")
    data = json.loads(response.content)
    assert data["user"]["name"] == "alice" and [m["id"] for m in data["memories"]] == [own.pk]
    assert data["context_calls"][0]["task"] == "when does apollo ship"
    event = AuditEvent.objects.get(action="user.export", object_id=str(alice.pk))
    assert event.detail["memories"] == 1 and event.actor == "root"


def test_export_csv_has_a_byte_order_mark_and_the_chinese_text(client, superadmin, alice, alices_things):
    client.force_login(superadmin)
    response = client.post(f"/admin/governance/user/{alice.pk}/export.csv")
    body = response.content.decode("utf-8")
    assert body.startswith("\ufeffsection,") and "周一" in body
    assert AuditEvent.objects.filter(action="user.export", detail__format="csv").exists()


def test_purge_asks_first_then_removes_only_that_user_s_data(client, superadmin, alice, bob, alices_things):
    own, shared, _hidden, _call = alices_things
    client.force_login(superadmin)
    url = f"/admin/governance/user/{alice.pk}/purge/"
    assert client.get(url).status_code == 200
    client.post(url)  # without the confirmation: nothing
    assert Memory.objects.filter(pk=own.pk).exists()
    assert client.post(url, {"post": "yes"}).status_code == 302
    assert (
        not Memory.objects.filter(owner=alice).exists()
        and not ContextCall.objects.filter(user=alice).exists()
    )
    assert Memory.objects.filter(pk=shared.pk).exists()  # bob's
    event = AuditEvent.objects.get(action="user.purge", object_id=str(alice.pk))
    assert event.detail["memories"] == 1 and event.detail["context_calls"] == 1


def test_purge_needs_delete_permission(client, tenant_admin, alice, charlie):
    make_staff(charlie, "auth.view_user")
    client.force_login(charlie)
    assert client.post(f"/admin/governance/user/{alice.pk}/purge/", {"post": "yes"}).status_code == 403


def test_reachable_from_the_user_admin_and_the_memory_owner_filter(client, superadmin, alice, alices_things):
    client.force_login(superadmin)
    link = f"/admin/governance/user/{alice.pk}/"
    assert link in client.get(f"/admin/auth/user/{alice.pk}/change/").content.decode()
    response = client.get(f"/admin/memories/memory/?owner__id__exact={alice.pk}")
    assert link in response.content.decode()
    assert {m.owner_id for m in response.context["cl"].result_list} == {alice.pk}


def test_the_page_speaks_chinese(client, superadmin, alice, alices_things):
    client.force_login(superadmin)
    client.cookies["django_language"] = "zh-hans"
    body = _page(client, alice).content.decode()
    assert "代表其进行的最近智能体调用" in body and "所属部门" in body


def test_a_tenant_admin_is_told_how_many_of_the_memories_they_cannot_read(client, tenant_admin, alice):
    memory_create(owner=alice, content="Alice's private note: the Vercel contact is Tom", scope="user")
    memory_create(owner=alice, content="The office closes at 6", scope="tenant")
    client.force_login(tenant_admin)
    response = _page(client, alice)
    page = response.content.decode()
    assert response.context["own_total"] == 1 and response.context["own_hidden"] == 1
    assert "and 1 more you may not read" in page and "Vercel contact" not in page
    assert "<td>Active</td>" in page  # the status in words, not its stored value
    zh = client.get(f"/admin/governance/user/{alice.pk}/", HTTP_ACCEPT_LANGUAGE="zh-hans").content.decode()
    assert "另有 1 条您无权读取" in zh and "<td>active</td>" not in zh
