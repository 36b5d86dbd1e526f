"""The personal key `user:<username>` follows the person, not the name (docs/design.md, Identity and access).

A rename (a plain `User.save()`, as Django's UserAdmin and the shell do) moves the personal
group and every memory of that scope to the new name in the same transaction; a deleted
user's personal key goes with them; a new user never inherits someone else's key.
"""

import pytest
from django.contrib.auth import get_user_model
from django.db import transaction
from django.utils import timezone

from almanac.errors import ApplicationError
from almanac.models import AccessGroup, GroupMembership
from almanac.selectors import user_group_keys
from almanac.services.users import membership_sync_builtin, personal_key_retire, user_create
from memories import selectors
from memories.models import Memory
from memories.services.memories import memory_create, memory_update
from memories.services.rows import memory_insert

pytestmark = pytest.mark.django_db
User = get_user_model()
SECRET = "carol private: salary negotiation notes"


@pytest.fixture
def carol(tenant):
    return user_create(tenant=tenant, username="carol", departments=["Sales"])


@pytest.fixture
def private(carol):
    return memory_create(owner=carol, content=SECRET, scope="user")[0]


@pytest.fixture
def stray(tenant, private, alice):
    """A memory in carol's private scope that she does not own (a governor moved it there,
    or a summary of hers written by another owner): it goes with her key all the same."""
    return memory_insert(
        tenant_id=tenant.pk,
        owner=alice,
        scope="user",
        scope_key="carol",
        memory_type="semantic",
        content="carol private: stray note about her review",
        embedding=private.embedding,
        history_user=None,
        reason="test",
    )


def _sees(user, text: str = SECRET) -> bool:
    return any(text in m.content for m in Memory.objects.visible_to(user, statuses=None))


def _rename(user, name: str):
    user = User.objects.get(pk=user.pk)
    user.username = name
    user.save()  # what django.contrib.auth's UserAdmin does
    return User.objects.get(pk=user.pk)


def test_rename_moves_the_personal_key_and_a_new_user_inherits_nothing(tenant, carol, private):
    renamed = _rename(carol, "carol.wu")
    assert "user:carol.wu" in user_group_keys(renamed) and "user:carol" not in user_group_keys(renamed)
    moved = Memory.objects.get(pk=private.pk)
    assert moved.acl == ["user:carol.wu"] and moved.scope_key == "carol.wu"
    assert _sees(renamed)
    hits = selectors.memory_search(user=renamed, query="salary negotiation")
    assert [h.memory.pk for h in hits] == [private.pk]

    newcomer = user_create(tenant=tenant, username="carol", departments=["Sales"])
    assert "user:carol" in user_group_keys(newcomer)
    assert not _sees(newcomer)
    assert selectors.memory_search(user=newcomer, query="salary negotiation") == []
    assert AccessGroup.objects.get(key="user:carol").memberships.get().user_id == newcomer.pk


def test_rename_inside_a_rolled_back_transaction_moves_nothing(carol, private):
    with pytest.raises(RuntimeError), transaction.atomic():
        _rename(carol, "carol.wu")
        raise RuntimeError("admin form failed later")
    assert Memory.objects.get(pk=private.pk).acl == ["user:carol"]
    assert AccessGroup.objects.filter(key="user:carol").exists()
    assert not AccessGroup.objects.filter(key="user:carol.wu").exists()


def test_rename_through_the_admin(client, tenant, carol, private):
    root = user_create(tenant=tenant, username="root", is_admin=True, password="pw-12345678")
    client.force_login(root)
    joined = timezone.localtime(carol.date_joined)
    response = client.post(
        f"/admin/auth/user/{carol.pk}/change/",
        {
            "username": "carol.wu",
            "is_active": "on",
            "date_joined_0": f"{joined:%Y-%m-%d}",
            "date_joined_1": f"{joined:%H:%M:%S}",
        },
    )
    assert response.status_code == 302, response.content.decode()[:2000]
    assert Memory.objects.get(pk=private.pk).acl == ["user:carol.wu"]
    newcomer = user_create(tenant=tenant, username="carol")
    assert not _sees(newcomer)


def test_a_deleted_users_key_is_not_inherited(tenant, carol, private, stray):
    User.objects.get(pk=carol.pk).delete()
    assert not Memory.objects.filter(pk__in=[private.pk, stray.pk]).exists()
    assert not AccessGroup.objects.filter(key="user:carol").exists()

    newcomer = user_create(tenant=tenant, username="carol")
    assert not _sees(newcomer, "carol private")


def test_a_new_user_never_joins_a_personal_group_another_user_holds(tenant, carol, private):
    # A rename that bypassed the model (a queryset update sends no signal).
    User.objects.filter(pk=carol.pk).update(username="carol.wu")
    with pytest.raises(ApplicationError):
        user_create(tenant=tenant, username="carol")
    assert not User.objects.filter(username="carol").exists()  # rolled back
    assert list(
        GroupMembership.objects.filter(group__key="user:carol").values_list("user_id", flat=True)
    ) == [carol.pk]


def test_a_stale_personal_group_of_a_former_user_is_not_inherited(tenant, carol, private):
    # A user deleted before this fix left their group behind, without members.
    GroupMembership.objects.filter(user=carol).delete()
    User.objects.filter(pk=carol.pk).update(username="carol.old")
    with pytest.raises(ApplicationError):
        user_create(tenant=tenant, username="carol")
    # An operator retires it: its scope is emptied, and the name is free.
    personal_key_retire(tenant=tenant, key="user:carol")
    assert not Memory.objects.filter(pk=private.pk).exists()
    newcomer = user_create(tenant=tenant, username="carol")
    assert not _sees(newcomer)


def test_membership_sync_heals_a_rename_that_bypassed_the_model(carol, private):
    User.objects.filter(pk=carol.pk).update(username="carol.wu")
    renamed = User.objects.get(pk=carol.pk)
    membership_sync_builtin(user=renamed)
    assert user_group_keys(renamed).count("user:carol.wu") == 1
    assert "user:carol" not in user_group_keys(renamed)
    assert Memory.objects.get(pk=private.pk).acl == ["user:carol.wu"]


def test_rename_onto_a_key_another_user_still_holds_is_refused(tenant, carol, private, alice):
    User.objects.filter(pk=alice.pk).update(username="alice.b")  # no signal: alice keeps user:alice
    with pytest.raises(ApplicationError), transaction.atomic():
        _rename(carol, "alice")
    assert User.objects.get(pk=carol.pk).username == "carol"
    assert Memory.objects.get(pk=private.pk).acl == ["user:carol"]


def _versions_seen(user, memory) -> set[str]:
    from almanac.selectors import acl_visible

    return {v.content for v in acl_visible(Memory.history.filter(id=memory.pk), user)}


def test_history_versions_follow_the_rename(tenant, carol, private):
    # Carol rewrites her private note and shares it with Sales: its private versions stay hers.
    memory_update(memory=private, user=carol, data={"content": "carol: shared summary"})
    memory_update(memory=private, user=carol, data={"scope": "dept", "scope_key": "Sales"})
    renamed = _rename(carol, "carol.wu")
    assert not Memory.history.filter(acl=["user:carol"]).exists()
    assert SECRET in _versions_seen(renamed, private)

    newcomer = user_create(tenant=tenant, username="carol", departments=["Sales"])
    seen = _versions_seen(newcomer, private)
    assert "carol: shared summary" in seen and SECRET not in seen


def test_history_versions_of_a_deleted_users_scope_are_not_inherited(tenant, carol, private, stray, alice):
    memory_update(memory=stray, user=alice, data={"content": "review note, shared"})
    memory_update(memory=stray, user=alice, data={"scope": "dept", "scope_key": "Sales"})
    User.objects.get(pk=carol.pk).delete()

    newcomer = user_create(tenant=tenant, username="carol", departments=["Sales"])
    seen = _versions_seen(newcomer, stray)
    assert "review note, shared" in seen and not [v for v in seen if "carol private" in v]


def test_deleting_a_user_keeps_what_they_shared_and_the_keyword_statistics_true(
    tenant, carol, private, alice
):
    from collections import Counter

    from almanac.models import CorpusStat, TermStat
    from memories.models import CORPUS

    shared = memory_create(owner=carol, content="Sales playbook: discovery call checklist", scope="dept")[0]
    memory_create(owner=alice, content="Discovery call notes for Vercel")
    User.objects.get(pk=carol.pk).delete()
    assert not Memory.objects.filter(pk=private.pk).exists()  # hers alone: gone with her
    kept = Memory.objects.get(pk=shared.pk)  # shared with Sales: stays for them, without an owner
    assert kept.owner_id is None and kept.acl == ["dept:sales"] and kept.status == "active"
    rows = Memory.objects.filter(tenant=tenant)
    corpus = CorpusStat.objects.get(tenant=tenant, corpus=CORPUS)
    assert (corpus.docs, corpus.total_len) == (rows.count(), sum(rows.values_list("doc_len", flat=True)))
    df = dict(TermStat.objects.filter(tenant=tenant, corpus=CORPUS).values_list("term", "df"))
    expected = Counter(t for tf in rows.values_list("tf", flat=True) for t in tf)
    assert {t: n for t, n in df.items() if n} == dict(expected)


def test_a_deleted_authors_shared_memory_is_governed_not_orphaned(tenant, carol, alice):
    shared = memory_create(owner=carol, content="Sales playbook: pricing floor 20%", scope="dept")[0]
    User.objects.get(pk=carol.pk).delete()
    sales = user_create(tenant=tenant, username="dave", departments=["Sales"])
    assert _sees(sales, "pricing floor")
    orphan = Memory.objects.get(pk=shared.pk)
    with pytest.raises(ApplicationError) as refused:  # no one's private scope to go to
        memory_update(memory=orphan, user=sales, data={"scope": "user"})
    assert refused.value.status_code == 403  # only a governor may change it now
    root = user_create(tenant=tenant, username="root", is_admin=True)
    with pytest.raises(ApplicationError) as refused:
        memory_update(memory=orphan, user=root, data={"scope": "user"})
    assert refused.value.status_code == 409
    memory_update(memory=orphan, user=root, data={"content": "Sales playbook: pricing floor 25%"})
    assert Memory.objects.get(pk=shared.pk).content.endswith("25%")
