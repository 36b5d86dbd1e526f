"""Person pages from the directory, and each person's visible activity."""

from tests.wiki.conftest import slack
from wiki.models import PageSection
from wiki.services.people import directory_sync


def test_person_page_from_the_directory_is_visible_tenant_wide(api, tenant, alice, bob, charlie):
    directory_sync(tenant=tenant)
    body = api.get("/wiki/pages", user="charlie", kind="person").json()
    assert {p["title"] for p in body} == {"alice", "bob", "charlie"}
    page = api.get("/wiki/pages/bob", user="charlie").json()
    assert "Finance" in page["sections"][0]["content"] and "Zephyr" in page["sections"][0]["content"]


def test_person_page_shows_only_activity_the_reader_may_see(api, tenant, vercel_world, alice, bob, charlie):
    directory_sync(tenant=tenant)
    as_bob = " ".join(s["content"] for s in api.get("/wiki/pages/bob", user="bob").json()["sections"])
    as_alice = " ".join(s["content"] for s in api.get("/wiki/pages/bob", user="alice").json()["sections"])
    assert "margin floor" in as_bob
    assert "margin floor" not in as_alice and "Finance" in as_alice


def test_directory_sync_is_idempotent_and_follows_the_profile(tenant, alice):
    from almanac.services.users import user_set_departments

    directory_sync(tenant=tenant)
    directory_sync(tenant=tenant)
    assert PageSection.objects.filter(page__kind="person").count() == 1
    user_set_departments(user=alice, names=["Marketing"])
    directory_sync(tenant=tenant)
    assert "Marketing" in PageSection.objects.get(page__kind="person").content


def test_directory_sync_creates_project_pages_for_directory_projects(tenant, alice, push):
    directory_sync(tenant=tenant)
    push(slack("we should move apollo to the new cluster"))
    assert PageSection.objects.filter(page__slug="apollo").count() == 1


def test_the_page_list_counts_what_a_person_page_shows(api, tenant, vercel_world, alice, bob, charlie):
    directory_sync(tenant=tenant)
    for reader in ["alice", "bob", "charlie"]:
        listed = {p["slug"]: p for p in api.get("/wiki/pages", user=reader, kind="person").json()}
        for slug in ["alice", "bob"]:
            shown = api.get(f"/wiki/pages/{slug}", user=reader).json()["sections"]
            assert listed[slug]["sections"] == len(shown), (reader, slug)
    # bob wrote a private section alice cannot see: his page has more for him than for her.
    bob_for = {
        r: {p["slug"]: p["sections"] for p in api.get("/wiki/pages", user=r, kind="person").json()}
        for r in ["alice", "bob"]
    }
    assert bob_for["bob"]["bob"] > bob_for["alice"]["bob"] >= 1


def test_two_employees_with_one_name_get_two_person_pages(tenant):
    from almanac.services.users import user_create
    from wiki.models import Entity

    first = user_create(tenant=tenant, username="wangwei", email="wangwei@acme.com", display_name="王伟")
    directory_sync(tenant=tenant)
    second = user_create(tenant=tenant, username="wangwei2", email="wangwei2@acme.com", display_name="王伟")
    directory_sync(tenant=tenant)
    directory_sync(tenant=tenant)  # idempotent: each keeps its own page
    people = {e.user_id: e for e in Entity.objects.filter(kind="person")}
    assert set(people) == {first.pk, second.pk}
    assert people[first.pk].name == "王伟" and people[second.pk].name == "王伟 (wangwei2)"
    for entity in people.values():
        (section,) = PageSection.objects.filter(page__entity=entity)
        assert section.thread_key == f"directory:{entity.user.username}"
