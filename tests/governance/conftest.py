"""Governance fixtures: staff users with model permissions, a superuser, a department admin."""

import pytest

from almanac.models import AdminScope, Department
from almanac.services.users import user_create
from tests.staff import make_staff

GOVERNING = (
    "auth.view_user", "auth.change_user", "almanac.view_userprofile", "almanac.change_userprofile",
    "almanac.view_auditevent", "almanac.view_agentkey", "almanac.view_accessgroup", "memories.view_memory",
    "memories.change_memory", "memories.delete_memory", "connectors.view_source", "connectors.change_source",
)  # fmt: skip


@pytest.fixture
def superadmin(tenant):
    return user_create(tenant=tenant, username="root", is_admin=True, password="pw-12345678")


@pytest.fixture
def tenant_admin(tenant):
    """Staff of acme without a department scope: governs the whole tenant."""
    return make_staff(user_create(tenant=tenant, username="tina", departments=["Legal"]), *GOVERNING)


@pytest.fixture
def sales_admin(tenant, alice):
    """A department admin of Sales (alice's department), in Sales herself."""
    dana = make_staff(user_create(tenant=tenant, username="dana", departments=["Sales"]), *GOVERNING)
    scope = AdminScope.objects.create(user=dana)
    scope.departments.add(Department.objects.get(tenant=tenant, name="Sales"))
    return dana
