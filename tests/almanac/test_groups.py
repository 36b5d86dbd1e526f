import pytest

from almanac.models import AccessGroup, GroupMembership
from almanac.selectors import user_group_keys
from almanac.services.tenancy import membership_add
from almanac.services.users import (
    membership_sync_builtin,
    user_create,
    user_set_departments,
    user_set_projects,
)

pytestmark = pytest.mark.django_db


def test_builtin_groups_of_a_new_user(alice):
    assert user_group_keys(alice) == ["dept:sales", "project:apollo", "tenant:acme", "user:alice"]


def test_several_departments_and_projects(tenant):
    user = user_create(
        tenant=tenant, username="zoe", departments=["Sales", "财务部"], projects=["Apollo", "凤凰"]
    )
    assert user_group_keys(user) == [
        "dept:sales",
        "dept:财务部",
        "project:apollo",
        "project:凤凰",
        "tenant:acme",
        "user:zoe",
    ]


def test_joining_and_leaving_a_project(alice):
    user_set_projects(user=alice, names=["Apollo", "Zephyr"])
    assert "project:zephyr" in user_group_keys(alice)
    user_set_projects(user=alice, names=["Zephyr"])
    keys = user_group_keys(alice)
    assert "project:apollo" not in keys and "project:zephyr" in keys


def test_joining_and_leaving_a_department(alice):
    user_set_departments(user=alice, names=["Finance"])
    keys = user_group_keys(alice)
    assert "dept:finance" in keys and "dept:sales" not in keys


def test_connector_memberships_survive_builtin_sync(tenant, alice):
    group = AccessGroup.objects.create(tenant=tenant, key="slack:channel:C1", kind="source")
    membership_add(user=alice, group=group, origin="slack")
    user_set_projects(user=alice, names=[])
    membership_sync_builtin(user=alice)
    assert "slack:channel:C1" in user_group_keys(alice)


def test_inactive_or_anonymous_users_have_no_keys(alice):
    from django.contrib.auth.models import AnonymousUser

    assert user_group_keys(AnonymousUser()) == []
    assert user_group_keys(None) == []
    alice.is_active = False
    alice.save()
    assert user_group_keys(alice) == []


def test_groups_of_another_tenant_never_count(tenant, other_tenant, alice):
    foreign = AccessGroup.objects.create(tenant=other_tenant, key="dept:secret", kind="dept")
    GroupMembership.objects.create(user=alice, group=foreign, origin="admin")
    assert "dept:secret" not in user_group_keys(alice)
