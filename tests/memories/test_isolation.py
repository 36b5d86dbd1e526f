"""One access filter: tenants, scopes, query-time membership, 404 for the invisible."""

import pytest

from almanac.services.users import user_set_projects
from memories import selectors
from memories.models import Memory

pytestmark = pytest.mark.django_db


def visible_ids(user):
    return set(Memory.objects.visible_to(user).values_list("id", flat=True))


def test_tenant_never_sees_other_tenant(alice, mallory, remember):
    mine = remember(alice, "Acme renewal notes for Vercel", scope="tenant")
    theirs = remember(mallory, "Globex renewal notes for Vercel", scope="tenant")
    assert visible_ids(alice) == {mine.pk}
    assert visible_ids(mallory) == {theirs.pk}
    assert [h.memory.pk for h in selectors.memory_search(user=alice, query="renewal notes Vercel")] == [
        mine.pk
    ]


def test_user_scope_is_private(alice, bob, remember):
    private = remember(alice, "我喜欢喝美式咖啡，不加糖")
    assert private.acl == ["user:alice"]
    assert private.pk in visible_ids(alice)
    assert private.pk not in visible_ids(bob)
    assert selectors.memory_search(user=bob, query="美式咖啡") == []


def test_dept_scope_reaches_exactly_members(alice, sam, bob, charlie, remember):
    memory = remember(alice, "Sales target for Q3 is 2M", scope="dept", scope_key="Sales")
    assert memory.acl == ["dept:sales"]
    assert {u.username for u in (alice, sam, bob, charlie) if memory.pk in visible_ids(u)} == {"alice", "sam"}


def test_project_scope_reaches_exactly_members(alice, bob, charlie, sam, remember):
    memory = remember(alice, "Apollo launches on 3 月 12 日", scope="project", scope_key="apollo")
    assert {u.username for u in (alice, sam, bob, charlie) if memory.pk in visible_ids(u)} == {"alice", "bob"}


def test_user_in_two_projects_sees_both(alice, bob, remember):
    apollo = remember(bob, "Apollo uses Postgres", scope="project", scope_key="Apollo")
    zephyr = remember(bob, "Zephyr ships weekly", scope="project", scope_key="Zephyr")
    assert {apollo.pk, zephyr.pk} <= visible_ids(bob)
    assert visible_ids(alice) == {apollo.pk}


def test_removed_from_project_hides_on_next_query(alice, bob, remember):
    memory = remember(alice, "Apollo pricing floor is 30%", scope="project", scope_key="Apollo")
    assert memory.pk in visible_ids(bob)
    user_set_projects(user=bob, names=["Zephyr"])
    assert memory.pk not in visible_ids(bob)
    assert selectors.memory_search(user=bob, query="Apollo pricing floor") == []


def test_fails_closed_for_anonymous_and_inactive(alice, remember):
    from django.contrib.auth.models import AnonymousUser

    remember(alice, "a tenant-wide fact about lunch", scope="tenant")
    assert not Memory.objects.visible_to(AnonymousUser()).exists()
    assert not Memory.objects.visible_to(None).exists()
    alice.is_active = False
    assert not Memory.objects.visible_to(alice).exists()


def test_archived_hidden_unless_asked(alice, remember):
    memory = remember(alice, "an old fact that was archived")
    Memory.objects.filter(pk=memory.pk).update(status="archived")
    assert memory.pk not in visible_ids(alice)
    assert Memory.objects.visible_to(alice, statuses=None).filter(pk=memory.pk).exists()


def test_scope_requires_membership(charlie):
    from almanac.errors import ApplicationError
    from memories.services.memories import memory_create

    with pytest.raises(ApplicationError) as err:
        memory_create(owner=charlie, content="Apollo secret", scope="project", scope_key="Apollo")
    assert err.value.status_code in (400, 403)


@pytest.mark.parametrize(
    ("method", "path", "body"),
    [
        ("get", "/memories/{id}", None),
        ("patch", "/memories/{id}", {"importance": 0.9}),
        ("delete", "/memories/{id}", None),
        ("post", "/memories/{id}/feedback", {"signal": "adopted"}),
    ],
)
def test_every_memory_endpoint_404s_for_invisible(api, alice, charlie, mallory, remember, method, path, body):
    memory = remember(alice, "alice's private preference: window seat")
    for who in ("charlie", "bob-does-not-exist", "mallory"):
        url = path.format(id=memory.pk)
        if body is None:
            response = getattr(api, method)(url, user=who)
        else:
            response = getattr(api, method)(url, {**body, "user": who})
        assert response.status_code == 404, (who, response.content)
        assert "detail" in response.json()
    assert Memory.objects.filter(pk=memory.pk, importance=0.5, quality=1.0).exists()


@pytest.mark.parametrize(
    ("method", "path", "body"),
    [
        ("get", "/sessions/{id}/window", None),
        ("post", "/sessions/{id}/turns", {"role": "user", "content": "hi"}),
        ("post", "/sessions/{id}/end", {}),
    ],
)
def test_every_session_endpoint_404s_for_other_user(api, alice, charlie, method, path, body):
    from memories.services.sessions import session_create

    session = session_create(user=alice)
    url = path.format(id=session.pk)
    response = api.get(url, user="charlie") if body is None else api.post(url, {**body, "user": "charlie"})
    assert response.status_code == 404
    session.refresh_from_db()
    assert session.status == "open" and session.turn_count == 0
