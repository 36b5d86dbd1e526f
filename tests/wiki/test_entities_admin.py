"""Entities in the admin: create, edit (names folded), merge (sections move, history kept, audited)."""

import pytest
from django.contrib.auth.models import Permission

from almanac.errors import ApplicationError
from almanac.models import AuditEvent
from tests.wiki.conftest import slack
from wiki.models import Entity, Page, PageSection
from wiki.services.entities import entity_create
from wiki.services.merge import entity_merge

pytestmark = pytest.mark.django_db


def _form(tenant, **fields):
    return {"tenant": tenant.pk, "kind": "customer", "name": "", "aliases": "", "user": "", **fields}


def test_admin_creates_an_entity_with_its_page(admin_client, tenant):
    response = admin_client.post(
        "/admin/wiki/entity/add/", _form(tenant, name="Globex Inc.", aliases="Globex Corporation,GBX")
    )
    assert response.status_code == 302, response.content.decode()[:2000]
    entity = Entity.objects.get(name="Globex Inc.")
    assert entity.key == "globex" and entity.named_in == [tenant.group_key]
    assert set(entity.aliases) == {"Globex Corporation", "GBX"} and "gbx" in entity.alias_keys
    assert Page.objects.get(entity=entity).title == "Globex Inc."


def test_admin_refuses_a_name_that_folds_to_an_existing_one(admin_client, tenant):
    entity_create(tenant=tenant, kind="customer", name="Globex")
    response = admin_client.post("/admin/wiki/entity/add/", _form(tenant, name="GLOBEX Ltd."))
    assert response.status_code == 200 and "already exists" in response.content.decode()
    assert Entity.objects.filter(kind="customer").count() == 1


def test_admin_edit_refolds_the_name_and_keeps_the_slug(admin_client, tenant):
    entity = entity_create(tenant=tenant, kind="customer", name="Globex")
    slug = entity.page.slug
    response = admin_client.post(
        f"/admin/wiki/entity/{entity.pk}/change/", {"name": "Globex Labs", "aliases": "Globex", "user": ""}
    )
    assert response.status_code == 302, response.content.decode()[:2000]
    entity.refresh_from_db()
    assert entity.key == "globex labs" and "globex" in entity.alias_keys
    page = Page.objects.get(entity=entity)
    assert page.title == "Globex Labs" and page.slug == slug


def test_an_admin_made_alias_routes_later_events(tenant, push):
    entity_create(tenant=tenant, kind="customer", name="Globex", aliases=["GBX"])
    push(slack("Renewal note", tags={"customer": "GBX"}))
    assert PageSection.objects.get().page.slug == "globex"


@pytest.fixture
def two_globexes(tenant, push, alice, bob):
    push(slack("Globex renewal: 170k per year", tags={"customer": "Globex"}))
    push(slack("Their team wants SSO", tags={"customer": "Globex Labs"}, minutes=5))
    survivor = Entity.objects.get(name="Globex")
    merged = Entity.objects.get(name="Globex Labs")
    return survivor, merged


def test_merge_moves_sections_combines_aliases_and_audits(two_globexes, alice, push):
    survivor, merged = two_globexes
    moved = PageSection.objects.get(page__entity=merged)
    old_page_id = moved.page_id
    entity_merge(survivor=survivor, merged=merged, actor=alice)
    survivor.refresh_from_db()
    assert not Entity.objects.filter(pk=merged.pk).exists()
    assert not Page.objects.filter(pk=old_page_id).exists()
    assert PageSection.objects.filter(page__entity=survivor).count() == 2
    assert "Globex Labs" in survivor.aliases and "globex labs" in survivor.alias_keys
    moved.refresh_from_db()
    assert moved.history.first().history_change_reason == "merged from customer:Globex Labs"
    assert moved.history.count() >= 2  # its compile row is kept
    audit = AuditEvent.objects.get(action="wiki.entity_merged")
    assert audit.actor == "alice" and audit.detail["merged"]["name"] == "Globex Labs"
    # a later event naming the merged name lands on the survivor
    push(slack("Globex Labs signed", tags={"customer": "Globex Labs"}, minutes=9))
    topics = PageSection.objects.exclude(page__kind="person")  # not the author's directory section
    assert set(topics.values_list("page__entity", flat=True)) == {survivor.pk}


def test_merge_keeps_one_copy_of_a_thread_both_pages_hold(tenant, push, alice):
    push(slack("Globex and Globex Labs in one thread", tags={"customer": ["Globex", "Globex Labs"]}))
    survivor, merged = Entity.objects.get(name="Globex"), Entity.objects.get(name="Globex Labs")
    sections = PageSection.objects.exclude(page__kind="person")  # not the author's directory section
    assert sections.count() == 2
    entity_merge(survivor=survivor, merged=merged, actor=alice)
    assert sections.count() == 1


def test_merge_refuses_other_kinds_and_tenants(tenant, other_tenant, alice):
    a = entity_create(tenant=tenant, kind="customer", name="Globex")
    b = entity_create(tenant=tenant, kind="project", name="Globex rollout")
    c = entity_create(tenant=other_tenant, kind="customer", name="Initech")
    for other in (b, c, a):
        with pytest.raises(ApplicationError):
            entity_merge(survivor=a, merged=other, actor=alice)


def test_admin_merge_action_asks_first_then_keeps_the_older_entity(admin_client, two_globexes):
    survivor, merged = two_globexes
    selected = {"action": "merge_entities", "_selected_action": [survivor.pk, merged.pk]}
    page = admin_client.post("/admin/wiki/entity/", selected)
    assert page.status_code == 200 and 'name="survivor"' in page.content.decode()
    assert Entity.objects.filter(kind="customer").count() == 2  # nothing merged before the answer
    response = admin_client.post("/admin/wiki/entity/", {**selected, "post": "yes"})
    assert response.status_code == 302
    assert list(Entity.objects.filter(kind="customer").values_list("pk", flat=True)) == [survivor.pk]
    assert AuditEvent.objects.get(action="wiki.entity_merged").object_id == str(survivor.pk)


def test_admin_merge_keeps_the_entity_chosen_on_the_confirmation_page(admin_client, two_globexes):
    survivor, merged = two_globexes
    admin_client.post(
        "/admin/wiki/entity/",
        {"action": "merge_entities", "_selected_action": [survivor.pk, merged.pk], "post": "yes",
         "survivor": merged.pk},
    )  # fmt: skip
    assert list(Entity.objects.filter(kind="customer").values_list("pk", flat=True)) == [merged.pk]


def test_admin_entity_add_and_edit_are_audited(admin_client, tenant):
    admin_client.post("/admin/wiki/entity/add/", _form(tenant, name="Initech"))
    entity = Entity.objects.get(name="Initech")
    form = {"name": "Initech Corp", "aliases": "Initrode", "user": ""}
    admin_client.post(f"/admin/wiki/entity/{entity.pk}/change/", form)
    added, changed = AuditEvent.objects.filter(object_type="wiki_entity").order_by("pk")
    assert (added.action, added.object_id, added.tenant_id) == ("admin.add", str(entity.pk), tenant.pk)
    assert changed.action == "admin.change" and changed.actor == "admin"
    assert changed.detail["changes"]["name"] == ["Initech", "Initech Corp"]


def test_staff_merge_stays_in_their_tenant(client, two_globexes, bob, other_tenant):
    bob.is_staff = True
    bob.save(update_fields=["is_staff"])
    bob.user_permissions.add(
        *Permission.objects.filter(codename__in=["view_entity", "change_entity", "delete_entity"])
    )
    foreign = entity_create(tenant=other_tenant, kind="customer", name="Globex")
    survivor, _ = two_globexes
    client.force_login(bob)
    client.post(
        "/admin/wiki/entity/", {"action": "merge_entities", "_selected_action": [survivor.pk, foreign.pk]}
    )
    assert Entity.objects.filter(pk=foreign.pk).exists() and Entity.objects.filter(pk=survivor.pk).exists()


def test_staff_who_may_not_delete_entities_cannot_merge_them(client, two_globexes, bob):
    bob.is_staff = True
    bob.save(update_fields=["is_staff"])
    bob.user_permissions.add(*Permission.objects.filter(codename__in=["view_entity", "change_entity"]))
    survivor, merged = two_globexes
    client.force_login(bob)
    assert "merge_entities" not in client.get("/admin/wiki/entity/").content.decode()
    client.post(
        "/admin/wiki/entity/", {"action": "merge_entities", "_selected_action": [survivor.pk, merged.pk]}
    )
    assert Entity.objects.filter(pk__in=[survivor.pk, merged.pk]).count() == 2


def test_staff_do_not_see_where_a_name_was_seen(client, two_globexes, bob):
    bob.is_staff = True
    bob.save(update_fields=["is_staff"])
    bob.user_permissions.add(*Permission.objects.filter(codename__in=["view_entity", "change_entity"]))
    survivor, _ = two_globexes
    client.force_login(bob)
    page = client.get(f"/admin/wiki/entity/{survivor.pk}/change/").content.decode()
    assert "named_in" not in page and "Named in" not in page


def test_merge_refuses_to_show_a_name_to_readers_never_shown_it(tenant, push, alice):
    push(slack("Initech renewal call went well", tags={"customer": "Initech"}))
    push(
        slack(
            "Initrode wants a 30% discount",
            channel="C300",
            name="#deal-room",
            public=False,
            members=["bob@acme.com"],
            tags={"customer": "Initrode"},
            minutes=5,
        )
    )
    public = Entity.objects.get(name="Initech")
    private = Entity.objects.get(name="Initrode")
    with pytest.raises(ApplicationError, match="never shown the name"):
        entity_merge(survivor=private, merged=public, actor=alice)  # its title to all
    assert Entity.objects.filter(pk__in=[public.pk, private.pk]).count() == 2


def test_a_domain_learn_task_whose_customer_was_merged_away_has_nothing_to_do(tenant, monkeypatch, caplog):
    """The evidence names an entity a merge deleted meanwhile (read through a matcher from
    before the merge): the task logs it and learns nothing, with no traceback."""
    import logging

    from wiki import tasks
    from wiki.services import entities

    gone = entity_create(tenant=tenant, kind="customer", name="Globex Labs")
    gone_id = gone.pk
    gone.delete()
    monkeypatch.setattr(
        entities, "_domain_evidence", lambda **kw: {"globex.io": {"t1": {gone_id}, "t2": {gone_id}}}
    )
    with caplog.at_level(logging.INFO, logger="wiki.services.entities"):
        assert tasks.domains_learn_task(tenant.pk, ["globex.io"]) == []
    assert "merged away" in caplog.text
