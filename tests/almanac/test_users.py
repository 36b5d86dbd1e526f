"""Users are per tenant (almanac.services.users): the same name in two tenants is two
people, in the API, the admin, the commands and the connectors' identity mapping.
The web login is tested in tests/web/test_login.py."""

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command

from almanac.errors import ApplicationError
from almanac.models import UserProfile
from almanac.selectors import user_group_keys
from almanac.services.keys import agentkey_create
from almanac.services.users import user_create, user_name, user_resolve
from connectors.models import ExternalIdentity
from connectors.services.identity import identity_resolve, identity_upsert
from memories.services.memories import memory_create
from tests.conftest import user_admin_form
from tests.staff import make_staff

pytestmark = pytest.mark.django_db
User = get_user_model()


@pytest.fixture
def globex_alice(other_tenant, alice):
    """Another company's alice, made after acme's."""
    return user_create(
        tenant=other_tenant, username="alice", email="alice@globex.com", departments=["财务部"]
    )


def bearer(raw):
    return {"Authorization": f"Bearer {raw}"}


# --- the service and the resolver --------------------------------------------------------


def test_the_same_name_in_two_tenants_is_two_people(tenant, other_tenant, alice, globex_alice):
    assert alice.pk != globex_alice.pk
    assert (alice.username, globex_alice.username) == ("alice", "globex:alice")  # the first keeps it
    assert user_name(alice) == user_name(globex_alice) == "alice"
    assert globex_alice.profile.username == "alice" and globex_alice.profile.tenant == other_tenant
    assert "user:alice" in user_group_keys(globex_alice) and "dept:财务部" in user_group_keys(globex_alice)
    assert "dept:sales" not in user_group_keys(globex_alice)  # nothing of acme's alice


def test_user_create_is_idempotent_per_tenant(tenant, other_tenant, alice, globex_alice):
    again = user_create(tenant=other_tenant, username="alice", projects=["凤凰"])
    assert again.pk == globex_alice.pk
    assert "project:凤凰" in user_group_keys(again) and "project:凤凰" not in user_group_keys(alice)
    assert UserProfile.objects.filter(username="alice").count() == 2


def test_the_resolver_never_crosses_tenants(tenant, other_tenant, alice, globex_alice, bob):
    assert user_resolve(tenant=tenant, ref="alice") == alice
    assert user_resolve(tenant=other_tenant, ref="alice") == globex_alice
    assert user_resolve(tenant=other_tenant, ref="alice@acme.com") is None  # acme's e-mail
    assert user_resolve(tenant=other_tenant, ref="bob") is None
    assert user_resolve(tenant=other_tenant, ref="globex:alice") is None  # a handle is no name


def test_a_name_with_a_colon_is_refused(tenant):
    with pytest.raises(ApplicationError, match="invalid username"):
        user_create(tenant=tenant, username="acme:eve")


def test_a_user_without_a_tenant_joins_the_first_that_names_them(tenant):
    root = User.objects.create_user(username="root")  # createsuperuser makes one like it
    assert user_create(tenant=tenant, username="root").pk == root.pk
    assert root.profile.username == "root"


def test_renaming_a_prefixed_user_renames_them_in_their_tenant_only(alice, globex_alice):
    secret = memory_create(owner=globex_alice, content="globex alice: my parking spot is B7", scope="user")[0]
    assert secret.scope_key == "alice" and secret.acl == ["user:alice"]
    globex_alice.username = "globex:alicia"
    globex_alice.save()
    globex_alice.refresh_from_db()
    assert globex_alice.profile.username == "alicia" and "user:alicia" in user_group_keys(globex_alice)
    secret.refresh_from_db()
    assert secret.scope_key == "alicia" and secret.acl == ["user:alicia"]
    alice.refresh_from_db()
    assert alice.profile.username == "alice" and "user:alice" in user_group_keys(alice)


# --- the API: an agent key finds its own tenant's alice -------------------------------------


def test_each_tenant_s_key_sees_its_own_alice_s_memories(client, tenant, other_tenant, alice, globex_alice):
    acme_key = agentkey_create(tenant=tenant, name="acme-agent")[1]
    globex_key = agentkey_create(tenant=other_tenant, name="globex-agent")[1]
    for raw, text in ((acme_key, "acme alice prefers window seats"), (globex_key, "globex alice 喜欢靠过道")):
        body = {"user": "alice", "content": text, "scope": "user"}
        response = client.post("/api/v1/memories", body, content_type="application/json", headers=bearer(raw))
        assert response.status_code == 201, response.content
        assert response.json()["scope_key"] == "alice"
    seen = {}
    for name, raw in (("acme", acme_key), ("globex", globex_key)):
        response = client.get("/api/v1/memories", {"user": "alice"}, headers=bearer(raw))
        seen[name] = [m["content"] for m in response.json()["items"]]
    assert seen == {"acme": ["acme alice prefers window seats"], "globex": ["globex alice 喜欢靠过道"]}
    me = client.get("/api/v1/me", {"user": "alice"}, headers=bearer(globex_key)).json()
    assert (me["username"], me["tenant"], me["email"]) == ("alice", "globex", "alice@globex.com")


def test_a_session_user_names_themselves_by_their_name(client, alice, globex_alice):
    client.force_login(globex_alice)
    assert client.get("/api/v1/me", {"user": "alice"}).json()["tenant"] == "globex"
    assert client.get("/api/v1/me", {"user": "globex:alice"}).json()["username"] == "alice"  # the handle
    assert client.get("/api/v1/me", {"user": "alice@acme.com"}).status_code == 403


# --- commands -------------------------------------------------------------------------------


def test_user_create_command_in_two_tenants(tenant, other_tenant, capsys):
    call_command("user_create", "acme", "dora", "--email", "dora@acme.com")
    call_command("user_create", "globex", "dora", "--email", "dora@globex.com", "--dept", "法务部")
    out = capsys.readouterr().out
    assert "user dora in acme" in out and "user dora in globex" in out
    profiles = UserProfile.objects.filter(username="dora").order_by("tenant__slug")
    assert [(p.tenant.slug, p.user.email) for p in profiles] == [
        ("acme", "dora@acme.com"),
        ("globex", "dora@globex.com"),
    ]


# --- the admin ------------------------------------------------------------------------------


def test_tenant_admins_see_their_own_alice_only(client, tenant, alice, globex_alice, bob, mallory):
    make_staff(bob, "auth.view_user", "auth.change_user")
    client.force_login(bob)
    body = client.get("/admin/auth/user/", {"q": "alice"}).content.decode()
    assert f"/admin/auth/user/{alice.pk}/change/" in body
    assert f"/admin/auth/user/{globex_alice.pk}/change/" not in body and "globex" not in body
    assert client.get(f"/admin/auth/user/{globex_alice.pk}/change/").status_code == 302  # not his
    make_staff(mallory, "auth.view_user", "auth.change_user")
    client.force_login(mallory)
    body = client.get("/admin/auth/user/", {"q": "alice"}).content.decode()
    assert f"/admin/auth/user/{globex_alice.pk}/change/" in body
    assert f"/admin/auth/user/{alice.pk}/change/" not in body


def test_the_admin_saves_and_renames_a_prefixed_user(client, tenant, alice, globex_alice):
    root = user_create(tenant=tenant, username="root", is_admin=True, password="pw-12345678")
    client.force_login(root)
    url = f"/admin/auth/user/{globex_alice.pk}/change/"
    response = client.post(url, user_admin_form(globex_alice, email="a@globex.com"))
    assert response.status_code == 302, response.content[:500]
    response = client.post(url, user_admin_form(globex_alice, username="globex:alicia"))
    assert response.status_code == 302, response.content[:500]
    assert UserProfile.objects.get(user=globex_alice).username == "alicia"
    response = client.post(url, user_admin_form(globex_alice, username="acme:x:y"))
    assert response.status_code == 200 and "optionally after" in response.content.decode()


def test_the_admin_refuses_a_name_the_tenant_already_has(client, tenant, alice, bob):
    root = user_create(tenant=tenant, username="root", is_admin=True, password="pw-12345678")
    client.force_login(root)
    response = client.post(f"/admin/auth/user/{bob.pk}/change/", user_admin_form(bob, username="acme:alice"))
    assert response.status_code == 200
    assert "Another user of this tenant already has that name" in response.content.decode()
    assert UserProfile.objects.get(user=bob).username == "bob"


def test_the_admin_adds_a_same_named_user_for_another_tenant(client, tenant, other_tenant, alice):
    root = user_create(tenant=tenant, username="root", is_admin=True, password="pw-12345678")
    client.force_login(root)
    form = {"username": "globex:alice", "usable_password": "false", "password1": "", "password2": ""}
    assert client.post("/admin/auth/user/add/", form).status_code == 302
    user = User.objects.get(username="globex:alice")
    form = {"user": user.pk, "tenant": other_tenant.pk, "title": "", "display_name": ""}
    response = client.post("/admin/almanac/userprofile/add/", form)
    assert response.status_code == 302, response.content[:500]
    assert user_resolve(tenant=other_tenant, ref="alice") == user
    # The same user again in acme, which has an alice: a form error, not a 500.
    other = User.objects.create_user(username="acme:alice")
    form = {"user": other.pk, "tenant": tenant.pk, "title": "", "display_name": ""}
    response = client.post("/admin/almanac/userprofile/add/", form)
    assert response.status_code == 200 and "acme already has a user called" in response.content.decode()


# --- connectors: an identity of tenant A is never used in tenant B ---------------------------


def test_an_identity_mapped_in_one_tenant_is_not_used_in_another(tenant, other_tenant, alice, globex_alice):
    identity_upsert(tenant=tenant, source_kind="slack", handle="U0ALICE", email="alice@acme.com")
    assert ExternalIdentity.objects.get(tenant=tenant, handle="U0ALICE").user == alice
    assert identity_resolve(tenant=tenant, source_kind="slack", members=["U0ALICE"]) == [alice]
    assert identity_resolve(tenant=other_tenant, source_kind="slack", members=["U0ALICE"]) == []
    # acme's e-mail means nobody in globex, though globex has an alice too
    assert identity_resolve(tenant=other_tenant, source_kind="email", members=["alice@acme.com"]) == []
    assert identity_resolve(tenant=other_tenant, source_kind="email", members=["alice@globex.com"]) == [
        globex_alice
    ]
    # a bare name is no identity: it grants nothing in either tenant
    assert identity_resolve(tenant=other_tenant, source_kind="github", members=["alice"]) == []
