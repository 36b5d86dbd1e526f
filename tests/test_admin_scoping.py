"""Admin scoping for staff who are not superusers: history views, page summaries, tenants.

Staff users other than superusers see only what the access filter lets them see, in their
own tenant; superusers see everything.
"""

import itertools

import pytest
from django.contrib.auth import get_user_model
from django.utils.html import escape

from almanac.models import AccessGroup, AuditEvent, GroupMembership
from almanac.services.audit import audit_record
from almanac.services.users import user_create
from connectors.models import Event, Source
from connectors.services.ingest import event_ingest
from memories.models import Memory
from memories.services.compression import memories_compress
from memories.services.memories import memory_create, memory_delete, memory_update
from skills.models import SkillRun
from skills.services import skill_sync_builtins
from tests.conftest import user_admin_form
from tests.staff import make_staff
from wiki.models import Page, PageSection
from wiki.services.compiler import STATUS_REASON
from wiki.services.summary import page_summary_for_reader

pytestmark = pytest.mark.django_db

_ts = itertools.count(1)


def slack(text, *, channel="C100", name="#sales", public=True, members=None, customer="Vercel"):
    ts = f"1700000{next(_ts):03d}.000100"
    container = {"key": f"slack:channel:{channel}", "name": name, "public": public}
    if members is not None:
        container["members"] = members
    return {
        "source": "slack",
        "external_id": f"{channel}/{ts}",
        "version": 1,
        "kind": "message",
        "occurred_at": "2026-11-30T10:00:00Z",
        "container": container,
        "thread_key": f"slack:thread:{channel}/{ts}",
        "author": "alice@acme.com",
        "title": "",
        "text": text,
        "tags": {"customer": customer},
        "url": "",
    }


@pytest.fixture(autouse=True)
def _no_summaries(settings):
    settings.WIKI_SUMMARY_ENABLED = False  # each summary is a skill run


@pytest.fixture
def push(django_capture_on_commit_callbacks):
    """Ingest one event into `tenant`; the wiki compiles it on commit."""

    def _push(tenant, payload) -> Event:
        with django_capture_on_commit_callbacks(execute=True):
            event = event_ingest(tenant=tenant, payload=payload)[0]
        event.refresh_from_db()
        return event

    return _push


@pytest.fixture
def superadmin(tenant):
    return user_create(tenant=tenant, username="root", is_admin=True, password="pw-12345678")


@pytest.fixture
def staff_bob(bob):
    return make_staff(bob, "memories.view_memory", "memories.change_memory", "memories.add_memory")


def _same_answer(response, expected):
    assert (response.status_code, response.get("Location")) == (
        expected.status_code,
        expected.get("Location"),
    )


# --- 1. history views answer like the change view --------------------------------------------


def test_memory_history_of_another_tenant_answers_like_the_change_view(client, staff_bob, mallory):
    memory = memory_create(owner=mallory, content="globex secret: merger with Initech")[0]
    client.force_login(staff_bob)
    url = f"/admin/memories/memory/{memory.pk}"
    change = client.get(f"{url}/change/")
    assert change.status_code == 302
    _same_answer(client.get(f"{url}/history/"), change)
    version = memory.history.first()
    response = client.get(f"{url}/history/{version.history_id}/")
    _same_answer(response, change)
    assert b"Initech" not in response.content


def test_memory_revert_of_another_tenant_changes_nothing(client, staff_bob, mallory):
    memory = memory_create(owner=mallory, content="globex plan A")[0]
    old = memory.history.first()
    memory_update(memory=memory, user=mallory, data={"content": "globex plan B"})
    client.force_login(staff_bob)
    form = {"owner": mallory.pk, "memory_type": "semantic", "content": "bob was here", "scope": "user",
            "scope_key": "mallory", "importance": "0.5", "status": "active", "meta": "{}", "occurred_at": ""}  # fmt: skip
    change = client.post(f"/admin/memories/memory/{memory.pk}/change/", form)
    response = client.post(f"/admin/memories/memory/{memory.pk}/history/{old.history_id}/", form)
    _same_answer(response, change)
    memory.refresh_from_db()
    assert memory.content == "globex plan B"


def test_wiki_history_of_another_tenant_answers_like_the_change_view(client, alice, other_tenant, push):
    push(other_tenant, slack("Globex renewal is at risk", members=["mallory@globex.com"]))
    page = Page.objects.get(tenant=other_tenant)
    section = PageSection.objects.get(tenant=other_tenant)
    make_staff(
        alice, "wiki.view_page", "wiki.change_page", "wiki.view_pagesection", "wiki.change_pagesection"
    )
    client.force_login(alice)
    for model, obj in (("page", page), ("pagesection", section)):
        url = f"/admin/wiki/{model}/{obj.pk}"
        change = client.get(f"{url}/change/")
        assert change.status_code == 302
        _same_answer(client.get(f"{url}/history/"), change)
        response = client.get(f"{url}/history/{obj.history.first().history_id}/")
        _same_answer(response, change)
        assert b"Globex renewal" not in response.content


def test_memory_history_lists_only_versions_the_user_may_see(client, alice, staff_bob):
    memory = memory_create(owner=alice, content="alice private: my salary is 90k")[0]
    private_version = memory.history.first()
    memory_update(
        memory=memory,
        user=alice,
        data={"content": "Apollo kickoff is in Lisbon", "scope": "project", "scope_key": "Apollo"},
    )
    client.force_login(staff_bob)
    url = f"/admin/memories/memory/{memory.pk}/history/"
    response = client.get(url)
    assert response.status_code == 200
    assert b"Apollo kickoff" in response.content and b"salary" not in response.content
    assert client.get(f"{url}{private_version.history_id}/").status_code == 404
    assert client.get(f"{url}{memory.history.first().history_id}/").status_code == 200


def test_history_pages_still_open_for_what_the_user_may_see(client, tenant, alice, push, superadmin):
    push(tenant, slack("Vercel renewal call went well"))
    section = PageSection.objects.exclude(page__kind="person").get(tenant=tenant)  # not the author's page
    skill = skill_sync_builtins()[0]
    make_staff(alice, "wiki.view_page", "wiki.view_pagesection", "skills.view_skill")
    client.force_login(alice)  # the skills are the installation's: superusers only
    assert client.get(f"/admin/skills/skill/{skill.pk}/history/").status_code == 403
    for user in (alice, superadmin):
        client.force_login(user)
        for model, obj in (
            ("wiki/page", section.page),
            ("wiki/pagesection", section),
            *([("skills/skill", skill)] if user.is_superuser else []),
        ):
            url = f"/admin/{model}/{obj.pk}/history/"
            assert client.get(url).status_code == 200, url
            assert client.get(f"{url}{obj.history.first().history_id}/").status_code == 200, url
            assert client.get(f"{url}not-a-number/").status_code == 404, url


def test_superuser_sees_every_version(client, alice, superadmin):
    memory = memory_create(owner=alice, content="alice private: my salary is 90k")[0]
    memory_update(memory=memory, user=alice, data={"scope": "project", "scope_key": "Apollo"})
    client.force_login(superadmin)
    response = client.get(f"/admin/memories/memory/{memory.pk}/history/")
    assert response.status_code == 200 and b"salary" in response.content


# --- 2. the page summary ------------------------------------------------------------------------


@pytest.fixture
def vercel_page(tenant, alice, bob, push):
    """Page 'Vercel': a public #sales section and a private #finance-internal one (bob only)."""
    push(tenant, slack("Vercel renewal call went well, they want SSO"))
    push(
        tenant,
        slack("margin floor is 22%", channel="C200", name="#finance-internal", public=False,
              members=["bob@acme.com"]),
    )  # fmt: skip
    page = Page.objects.get(tenant=tenant, slug="vercel")
    sections = list(page.sections.all())
    assert len(sections) == 2
    return page


def test_page_form_hides_a_summary_of_private_sections(client, alice, vercel_page, settings):
    settings.WIKI_SUMMARY_ENABLED = True
    make_staff(alice, "wiki.view_page", "wiki.change_page")
    client.force_login(alice)
    response = client.get(f"/admin/wiki/page/{vercel_page.pk}/change/")
    assert response.status_code == 200
    assert b"want SSO" in response.content and b"margin floor" not in response.content


def test_page_form_shows_a_visible_summary_read_only(client, tenant, alice, push, settings):
    settings.WIKI_SUMMARY_ENABLED = True
    push(tenant, slack("Zephyr team meets on Fridays", customer="Zephyr"))
    page = Page.objects.get(tenant=tenant, slug="zephyr")
    make_staff(alice, "wiki.view_page", "wiki.change_page")
    client.force_login(alice)
    body = client.get(f"/admin/wiki/page/{page.pk}/change/").content.decode()
    summary = page_summary_for_reader(user=alice, page=page)
    assert "Zephyr team meets on Fridays" in summary and escape(summary) in body
    assert 'name="summary"' not in body  # shown, not editable


def test_scoped_staff_see_no_project_status(client, alice, vercel_page, superadmin):
    # A status says what an issue in some container did: not shown to scoped staff at all.
    Page.objects.filter(pk=vercel_page.pk).update(status="closed", status_container="github:repo:acme/secret")
    make_staff(alice, "wiki.view_page", "wiki.change_page")
    client.force_login(alice)
    for path in (f"/admin/wiki/page/{vercel_page.pk}/change/", "/admin/wiki/page/"):
        body = client.get(path).content.decode()
        assert "closed" not in body.lower() and "status_container" not in body, path
    assert client.get("/admin/wiki/page/?status=closed").status_code == 400  # no filtering on it either
    assert client.get("/admin/wiki/page/?status__startswith=c").status_code == 400
    client.force_login(superadmin)
    assert "closed" in client.get(f"/admin/wiki/page/{vercel_page.pk}/change/").content.decode()


def test_scoped_staff_do_not_read_a_status_change_in_the_page_history(
    client, tenant, alice, push, superadmin
):
    push(tenant, slack("Apollo kickoff notes for everyone", customer="Apollo"))
    page = Page.objects.get(tenant=tenant, slug="apollo")
    page.status, page.status_container = "closed", "github:repo:acme/secret"
    page._change_reason = STATUS_REASON  # as the compiler writes it
    page.save()
    make_staff(alice, "wiki.view_page", "wiki.change_page")
    client.force_login(alice)
    body = client.get(f"/admin/wiki/page/{page.pk}/history/").content.decode()
    assert "Change history: apollo" in body and STATUS_REASON not in body and "closed" not in body
    client.force_login(superadmin)
    assert STATUS_REASON in client.get(f"/admin/wiki/page/{page.pk}/history/").content.decode()


def test_page_history_hides_a_summary_of_private_sections(client, alice, vercel_page):
    make_staff(alice, "wiki.view_page", "wiki.change_page")
    client.force_login(alice)
    response = client.get(f"/admin/wiki/page/{vercel_page.pk}/history/")
    assert response.status_code == 200
    assert b"margin floor" not in response.content
    version = vercel_page.history.first()
    response = client.get(f"/admin/wiki/page/{vercel_page.pk}/history/{version.history_id}/")
    assert response.status_code == 200 and b"margin floor" not in response.content


# --- 3. tenants ----------------------------------------------------------------------------------


ADMIN_PERMS = [
    "memories.view_memory", "memories.view_conversationsession", "wiki.view_page", "wiki.view_pagesection",
    "wiki.view_entity", "connectors.view_source", "connectors.view_event", "connectors.view_externalidentity",
    "skills.view_skillrun", "almanac.view_auditevent", "almanac.view_accessgroup",
    "almanac.view_groupmembership", "almanac.view_userprofile", "almanac.view_department",
    "almanac.view_project", "almanac.view_agentkey", "almanac.view_tenant", "auth.view_user",
]  # fmt: skip
CHANGELISTS = [
    "/admin/memories/memory/", "/admin/memories/conversationsession/", "/admin/wiki/page/",
    "/admin/wiki/pagesection/", "/admin/wiki/entity/", "/admin/connectors/source/", "/admin/connectors/event/",
    "/admin/connectors/externalidentity/", "/admin/skills/skillrun/", "/admin/almanac/auditevent/",
    "/admin/almanac/accessgroup/", "/admin/almanac/groupmembership/", "/admin/almanac/userprofile/",
    "/admin/almanac/department/", "/admin/almanac/project/", "/admin/almanac/agentkey/", "/admin/almanac/tenant/",
    "/admin/auth/user/",
]  # fmt: skip


@pytest.fixture
def two_tenants(tenant, other_tenant, alice, bob, mallory, push):
    """Rows of every admin in both tenants."""
    user_create(tenant=other_tenant, username="gus", email="gus@globex.com", departments=["Globex Legal"])
    own = {
        "bob_channel": push(tenant, slack("bob channel: Apollo slips a week", members=["bob@acme.com"])),
        "alice_channel": push(
            tenant,
            slack(
                "alice only: layoffs planned",
                channel="C200",
                name="#hr",
                public=False,
                members=["alice@acme.com"],
            ),
        ),  # fmt: skip
    }
    theirs = push(other_tenant, slack("globex: Initech deal", members=["mallory@globex.com"]))
    for t, text in ((tenant, "acme run text"), (other_tenant, "globex run text")):
        SkillRun.objects.create(
            skill_name="summarize", trigger=f"{t.slug}:1", tenant=t, status="success", input={"text": text}
        )
        audit_record(action=f"{t.slug}.export", tenant=t, actor=f"{t.slug}-admin")
    return own, theirs


def test_scoped_staff_see_only_their_tenant_in_filters_and_rows(client, bob, two_tenants):
    make_staff(bob, *ADMIN_PERMS)
    client.force_login(bob)
    for url in CHANGELISTS:
        response = client.get(url)
        assert response.status_code == 200, url
        body = response.content.decode()
        assert "Globex" not in body and "globex" not in body and "Initech" not in body, url


def test_scoped_staff_get_no_other_tenant_row(client, bob, mallory, other_tenant, two_tenants):
    make_staff(bob, *ADMIN_PERMS)
    client.force_login(bob)
    rows = [
        ("connectors/source", Source.objects.get(tenant=other_tenant)),
        ("connectors/event", Event.objects.get(tenant=other_tenant)),
        ("skills/skillrun", SkillRun.objects.get(tenant=other_tenant)),
        ("almanac/auditevent", AuditEvent.objects.get(tenant=other_tenant, action="globex.export")),
        ("almanac/accessgroup", AccessGroup.objects.filter(tenant=other_tenant).first()),
        ("almanac/groupmembership", GroupMembership.objects.filter(group__tenant=other_tenant).first()),
        ("almanac/tenant", other_tenant),
        ("auth/user", mallory),
    ]
    for path, obj in rows:
        assert client.get(f"/admin/{path}/{obj.pk}/change/").status_code == 302, path


def test_scoped_staff_see_events_of_their_containers_without_content(client, bob, two_tenants):
    own, _ = two_tenants
    make_staff(bob, "connectors.view_event")
    client.force_login(bob)
    listed = {e.pk for e in client.get("/admin/connectors/event/").context["cl"].queryset}
    assert listed == {own["bob_channel"].pk}
    assert client.get(f"/admin/connectors/event/{own['alice_channel'].pk}/change/").status_code == 302
    response = client.get(f"/admin/connectors/event/{own['bob_channel'].pk}/change/")
    assert response.status_code == 200 and b"Apollo slips" not in response.content
    found = client.get("/admin/connectors/event/", {"q": "Apollo slips"}).context["cl"].queryset
    assert not found.exists()  # no searching the hidden text either
    for lookup in ("text__icontains", "raw__icontains", "title"):  # nor filtering on it by URL
        assert client.get("/admin/connectors/event/", {lookup: "Apollo"}).status_code == 400, lookup


def test_scoped_staff_see_skill_runs_without_content(client, bob, tenant, two_tenants, superadmin):
    make_staff(bob, "skills.view_skillrun")
    client.force_login(bob)
    response = client.get("/admin/skills/skillrun/")
    assert [r.tenant_id for r in response.context["cl"].queryset] == [tenant.pk]
    assert "globex" not in response.content.decode()  # nor in the trigger filter
    run = SkillRun.objects.get(tenant=tenant)
    response = client.get(f"/admin/skills/skillrun/{run.pk}/change/")
    assert response.status_code == 200 and b"acme run text" not in response.content
    for lookup in ("input__icontains", "output__icontains", "error__contains"):
        assert client.get("/admin/skills/skillrun/", {lookup: "acme run"}).status_code == 400, lookup
    client.force_login(superadmin)
    assert client.get("/admin/skills/skillrun/", {"input__icontains": "acme run"}).status_code == 200


def test_superuser_sees_every_tenant(client, superadmin, two_tenants):
    client.force_login(superadmin)
    for url, model in (
        ("/admin/connectors/event/", Event),
        ("/admin/skills/skillrun/", SkillRun),
        ("/admin/almanac/auditevent/", AuditEvent),
        ("/admin/connectors/source/", Source),
    ):
        response = client.get(url)
        assert response.context["cl"].result_count == model.objects.count(), url
    assert "globex" in client.get("/admin/connectors/source/").content.decode()  # in the tenant filter
    _, theirs = two_tenants
    response = client.get(f"/admin/connectors/event/{theirs.pk}/change/")
    assert b"Initech deal" in response.content


def test_scoped_staff_cannot_write_into_another_tenant(client, staff_bob, mallory, other_tenant):
    make_staff(staff_bob, "connectors.add_source")
    client.force_login(staff_bob)
    form = {"owner": mallory.pk, "memory_type": "semantic", "content": "planted by bob", "scope": "user",
            "scope_key": "mallory", "importance": "0.5", "status": "active", "meta": "{}", "occurred_at": ""}  # fmt: skip
    response = client.post("/admin/memories/memory/add/", form)
    assert response.status_code == 200  # the form, with an error
    assert not Memory.objects.filter(content="planted by bob").exists()
    form = {"tenant": other_tenant.pk, "kind": "notes", "name": "planted", "config": "{}",
            "enabled": "on", "poll_minutes": 5, "cursor-TOTAL_FORMS": 0, "cursor-INITIAL_FORMS": 0,
            "cursor-MIN_NUM_FORMS": 0, "cursor-MAX_NUM_FORMS": 1}  # fmt: skip
    response = client.post("/admin/connectors/source/add/", form)
    assert response.status_code == 200
    assert not Source.objects.filter(name="planted").exists()


# --- 4. the user admin grants nothing; superusers keep deleted objects' history ------------


def test_scoped_staff_cannot_grant_admin_rights_or_touch_a_superuser(client, bob, superadmin):
    make_staff(bob, "auth.view_user", "auth.change_user")
    client.force_login(bob)
    response = client.post(
        f"/admin/auth/user/{bob.pk}/change/", user_admin_form(bob, is_superuser="on", is_staff="on")
    )
    assert response.status_code == 302, response.content[:300]
    bob.refresh_from_db()
    assert not bob.is_superuser and bob.is_staff  # the grants are read-only for him
    assert client.get(f"/admin/auth/user/{superadmin.pk}/change/").status_code == 302  # not his to see
    assert "root" not in client.get("/admin/auth/user/").content.decode()


def test_a_rename_onto_someone_elses_personal_key_is_a_form_error(client, alice, bob, superadmin):
    client.force_login(superadmin)
    response = client.post(f"/admin/auth/user/{bob.pk}/change/", user_admin_form(bob, username="alice2"))
    assert response.status_code == 302  # a free name: renamed
    AccessGroup.objects.create(tenant=alice.profile.tenant, key="user:dave", kind="user", name="dave")
    response = client.post(f"/admin/auth/user/{bob.pk}/change/", user_admin_form(bob, username="dave"))
    assert (
        response.status_code == 200
        and "the personal key user:dave exists already" in response.content.decode()
    )
    bob.refresh_from_db()
    assert bob.username == "alice2"


def test_superusers_keep_the_history_of_a_deleted_memory(client, alice, superadmin):
    memory = memory_create(owner=alice, content="a note the admin may want back")[0]
    memory_id = memory.pk
    memory_delete(memory=memory, user=alice)
    client.force_login(superadmin)
    response = client.get(f"/admin/memories/memory/{memory_id}/history/")
    assert response.status_code == 200 and "a note the admin may want back" in response.content.decode()


def test_deleting_an_original_and_its_summary_together_in_the_admin(client, tenant, bob, superadmin):
    from tests.memories.conftest import at_cosine, unit

    topic = unit(41)
    for i in range(24):
        memory_create(
            owner=bob, content=f"Close step {i}: update forecast {i}", scope="dept",
            embedding=at_cosine(topic, 0.9, seed=300 + i),
        )  # fmt: skip
    assert memories_compress() == 1
    summary = Memory.objects.get(meta__source="compression")
    original = Memory.objects.filter(status="compressed").order_by("pk").first()
    client.force_login(superadmin)
    response = client.post(
        "/admin/memories/memory/?o=1",
        {"action": "delete_selected", "post": "yes", "_selected_action": [original.pk, summary.pk]},
    )
    assert response.status_code == 302
    assert not Memory.objects.filter(pk__in=[original.pk, summary.pk]).exists()
    assert Memory.objects.filter(owner=bob, status="active").count() == 23


def test_superusers_add_users_in_the_admin(client, superadmin):
    client.force_login(superadmin)
    assert client.get("/admin/auth/user/add/").status_code == 200
    form = {"username": "newbie", "usable_password": "false", "password1": "", "password2": ""}
    response = client.post("/admin/auth/user/add/", form)
    assert response.status_code == 302, response.content[:500]
    assert get_user_model().objects.filter(username="newbie").exists()


def test_scoped_staff_cannot_edit_another_admin(client, alice, bob):
    make_staff(bob, "auth.view_user", "auth.change_user")
    make_staff(alice, "memories.view_memory")
    client.force_login(bob)
    for path in ("change/", "password/"):
        assert client.get(f"/admin/auth/user/{alice.pk}/{path}").status_code in (302, 404), path
    response = client.post(
        f"/admin/auth/user/{alice.pk}/password/", {"password1": "Xy-12345678", "password2": "Xy-12345678"}
    )
    assert response.status_code in (302, 404)
    alice.refresh_from_db()
    assert not alice.check_password("Xy-12345678")
    # His own page and his email still save, whatever state his personal key is in.
    GroupMembership.objects.filter(user=bob, group__key="user:bob").delete()
    response = client.post(f"/admin/auth/user/{bob.pk}/change/", user_admin_form(bob, email="b@acme.com"))
    assert response.status_code == 302, response.content[:300]


def test_reverting_a_deleted_memory_from_its_history_is_refused(client, alice, superadmin):
    memory = memory_create(owner=alice, content="a note deleted since")[0]
    memory_id, version = memory.pk, memory.history.first()
    memory_delete(memory=memory, user=alice)
    client.force_login(superadmin)
    url = f"/admin/memories/memory/{memory_id}/history/{version.history_id}/"
    assert client.get(url).status_code == 200  # shown
    form = {"memory_type": "semantic", "content": "a note deleted since", "scope": "user", "scope_key": "alice",
            "importance": "0.5", "status": "active", "meta": "{}", "occurred_at": ""}  # fmt: skip
    assert client.post(url, form).status_code == 302  # not saved outside the services
    assert not Memory.objects.filter(pk=memory_id).exists()


def test_the_task_queue_admin_is_for_superusers_only(client, bob):
    """A schedule names any function for the workers to run: staff with every model
    permission still get nothing there (and never another tenant's task results)."""
    from django_q.models import Schedule

    make_staff(bob, *[f"django_q.{verb}_{model}" for verb in ("add", "change", "view", "delete")
                      for model in ("schedule", "success", "failure", "ormq")])  # fmt: skip
    client.force_login(bob)
    for path in ["/admin/django_q/schedule/", "/admin/django_q/success/", "/admin/django_q/failure/",
                 "/admin/django_q/ormq/", "/admin/django_q/schedule/add/"]:  # fmt: skip
        assert client.get(path).status_code == 403, path
    response = client.post(
        "/admin/django_q/schedule/add/",
        {"func": "os.system", "args": "'touch /tmp/owned'", "schedule_type": "O", "repeats": "1"},
    )
    assert response.status_code == 403 and not Schedule.objects.filter(func="os.system").exists()
    assert "django_q" not in client.get("/admin/").content.decode()


# --- 4. the installation's: endpoints, env secrets, webhook claims, skills ----------------------


def _source_form(source, **changes):
    form = {
        "tenant": source.tenant_id,
        "kind": source.kind,
        "name": source.name,
        "config": "{}",
        "enabled": "on",
        "poll_minutes": 5,
        "new_credentials": "",
        "cursor-TOTAL_FORMS": 0,
        "cursor-INITIAL_FORMS": 0,
        "cursor-MIN_NUM_FORMS": 0,
        "cursor-MAX_NUM_FORMS": 1,
    }
    return {**form, **changes}


def test_scoped_staff_cannot_point_a_source_at_their_host_or_the_server_s_secrets(
    client, tenant, bob, superadmin, settings
):
    from cryptography.fernet import Fernet

    settings.CONNECTOR_SECRET_KEY = Fernet.generate_key().decode()
    source = Source.objects.create(tenant=tenant, kind="github", name="gh", config={"repos": ["acme/apollo"]})
    make_staff(bob, "connectors.view_source", "connectors.change_source")
    client.force_login(bob)
    url = f"/admin/connectors/source/{source.pk}/change/"
    for changes in (
        {
            "config": '{"repos": ["acme/apollo"], "base_url": "http://evil.example/"}',
            "new_credentials": "ghp_x",
        },
        {"config": '{"repos": ["acme/apollo"]}', "new_credentials": "env:SECRET_KEY"},
        {"config": '{"folder": "/etc"}'},
    ):
        response = client.post(url, _source_form(source, **changes))
        assert response.status_code == 200 and "only a superuser may" in response.content.decode(), changes
    source.refresh_from_db()
    assert source.config == {"repos": ["acme/apollo"]} and not source.credentials
    # A literal token and the repositories are the tenant's to set.
    ok = client.post(
        url, _source_form(source, config='{"repos": ["acme/apollo", "acme/zephyr"]}', new_credentials="ghp_x")
    )
    assert ok.status_code == 302
    client.force_login(superadmin)
    ok = client.post(
        url,
        _source_form(
            source,
            config='{"repos": ["acme/apollo"], "base_url": "https://ghe.acme/api/v3"}',
            new_credentials="env:GITHUB_TOKEN",
        ),
    )
    assert ok.status_code == 302
    source.refresh_from_db()
    assert source.config["base_url"] == "https://ghe.acme/api/v3" and source.credentials == "env:GITHUB_TOKEN"


def test_a_workspace_another_tenant_claims_cannot_be_claimed_again(client, tenant, other_tenant, superadmin):
    Source.objects.create(tenant=other_tenant, kind="slack", name="slack", config={"team_id": "TGLOBEX"})
    Source.objects.create(tenant=other_tenant, kind="github", name="gh", config={"repos": ["globex/deals"]})
    mine = Source.objects.create(tenant=tenant, kind="slack", name="slack", config={})
    gh = Source.objects.create(tenant=tenant, kind="github", name="gh", config={})
    client.force_login(superadmin)
    for source, config in ((mine, '{"team_id": "TGLOBEX"}'), (gh, '{"repos": ["acme/x", "globex/deals"]}')):
        response = client.post(
            f"/admin/connectors/source/{source.pk}/change/", _source_form(source, config=config)
        )
        assert response.status_code == 200 and "claimed by another tenant" in response.content.decode()


def test_a_webhook_two_tenants_claim_is_refused(client, tenant, other_tenant, settings):
    import hashlib
    import hmac
    import json
    import time

    settings.SLACK_SIGNING_SECRET = "whsec"
    for t in (tenant, other_tenant):  # as rows written before the admin refused a second claim
        Source.objects.create(tenant=t, kind="slack", name="slack", config={"team_id": "TBOTH"})
    event = {"type": "message", "channel": "C1", "user": "U1", "text": "hi", "ts": "1700000000.000100"}
    raw = json.dumps({"type": "event_callback", "team_id": "TBOTH", "event": event})
    stamp = str(int(time.time()))
    signature = "v0=" + hmac.new(b"whsec", f"v0:{stamp}:{raw}".encode(), hashlib.sha256).hexdigest()
    response = client.post("/api/v1/connectors/slack/events", raw, content_type="application/json",
                           headers={"X-Slack-Request-Timestamp": stamp, "X-Slack-Signature": signature})  # fmt: skip
    assert response.status_code == 409 and not Event.objects.exists()


def test_the_skills_admin_is_for_superusers_only(client, bob):
    skill_sync_builtins()
    make_staff(bob, *[f"skills.{verb}_skill" for verb in ("add", "change", "view", "delete")])
    client.force_login(bob)
    assert client.get("/admin/skills/skill/").status_code == 403
    from skills.models import Skill

    summarize = Skill.objects.get(name="summarize")
    response = client.post("/admin/skills/skill/", {"action": "disable", "_selected_action": [summarize.pk]})
    assert response.status_code == 403
    summarize.refresh_from_db()
    assert summarize.enabled


def test_scoped_staff_see_only_their_source_names_in_the_event_filter(client, bob, other_tenant, two_tenants):
    from connectors.services.ingest import event_ingest as ingest

    payload = {**slack("globex feed", members=["mallory@globex.com"]), "source": "globex-acquisition-feed"}
    payload["container"] = {**payload["container"], "key": "push:globex-feed"}
    ingest(tenant=other_tenant, payload=payload)
    make_staff(bob, "connectors.view_event")
    client.force_login(bob)
    body = client.get("/admin/connectors/event/").content.decode()
    assert "globex-acquisition-feed" not in body


def test_admin_pages_that_cannot_add_offer_no_add_page(client, superadmin):
    client.force_login(superadmin)
    for path in ("django_q/success", "django_q/failure", "wiki/pagesection", "memories/conversationsession"):
        assert client.get(f"/admin/{path}/add/").status_code == 403, path
    assert client.get("/admin/django_q/schedule/add/").status_code == 200  # schedules can be added


def test_staff_create_entities_only_in_their_tenant(client, bob, tenant, other_tenant):
    from wiki.models import Entity

    make_staff(bob, "wiki.view_entity", "wiki.add_entity", "wiki.change_entity")
    client.force_login(bob)
    form = {"kind": "customer", "name": "Globex", "aliases": "", "user": ""}
    response = client.post("/admin/wiki/entity/add/", {**form, "tenant": other_tenant.pk})
    assert response.status_code == 200 and not Entity.objects.filter(name="Globex").exists()
    assert client.post("/admin/wiki/entity/add/", {**form, "tenant": tenant.pk}).status_code == 302
    entity = Entity.objects.get(name="Globex")
    assert entity.tenant == tenant
    # named by an admin, the name is the tenant's: the staff user finds it in the list
    assert "Globex" in client.get("/admin/wiki/entity/").content.decode()
