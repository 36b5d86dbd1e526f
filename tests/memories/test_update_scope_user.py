"""Moving a memory to scope `user` puts it in its owner's private scope, whoever moves it
(an admin, a governor through the API), never in the mover's."""

import pytest

from almanac.services.users import user_create
from memories.models import Memory
from memories.services.memories import memory_create, memory_update

pytestmark = pytest.mark.django_db


def test_a_governor_moves_a_memory_into_its_owners_private_scope(tenant, alice, charlie):
    root = user_create(tenant=tenant, username="root", is_admin=True)
    memory = memory_create(owner=alice, content="Sales pipeline review notes", scope="dept")[0]
    memory_update(memory=memory, user=root, data={"scope": "user"})
    assert Memory.objects.get(pk=memory.pk).acl == ["user:alice"]
    # What the admin passes as `scope_user` (the stored owner, or a form's) changes nothing.
    memory_update(memory=memory, user=root, data={"scope": "dept"}, scope_user=alice)
    memory_update(memory=memory, user=root, data={"scope": "user"}, scope_user=charlie)
    assert Memory.objects.get(pk=memory.pk).acl == ["user:alice"]


def test_the_owner_moves_it_into_their_own(tenant, alice):
    memory = memory_create(owner=alice, content="Sales pipeline review notes", scope="dept")[0]
    memory_update(memory=memory, user=alice, data={"scope": "user"})
    assert Memory.objects.get(pk=memory.pk).acl == ["user:alice"]
