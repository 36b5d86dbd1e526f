"""A governor moving someone's memory to scope `user` puts it in the owner's private scope
(`scope_user`, as the admin passes it), not in the governor's."""

import pytest

from almanac.services import user_create
from memories import services
from memories.models import Memory

pytestmark = pytest.mark.django_db


def test_scope_user_decides_whose_private_scope(tenant, alice):
    root = user_create(tenant=tenant, username="root", is_admin=True)
    memory = services.memory_create(owner=alice, content="Sales pipeline review notes", scope="dept")[0]
    services.memory_update(memory=memory, user=root, data={"scope": "user"}, scope_user=alice)
    assert Memory.objects.get(pk=memory.pk).acl == ["user:alice"]


def test_without_scope_user_it_is_the_acting_users(tenant, alice):
    memory = services.memory_create(owner=alice, content="Sales pipeline review notes", scope="dept")[0]
    services.memory_update(memory=memory, user=alice, data={"scope": "user"})
    assert Memory.objects.get(pk=memory.pk).acl == ["user:alice"]
