"""Admin: superusers see everything; other staff see only the sections visible to them."""

from django.contrib.auth.models import Permission

from wiki.models import PageSection


def test_admin_pages_render_for_a_superuser(admin_client, vercel_world):
    for url in ("/admin/wiki/page/", "/admin/wiki/pagesection/", "/admin/wiki/entity/"):
        assert admin_client.get(url).status_code == 200, url
    section = PageSection.objects.first()
    assert admin_client.get(f"/admin/wiki/pagesection/{section.pk}/change/").status_code == 200
    assert admin_client.get(f"/admin/wiki/page/{section.page_id}/change/").status_code == 200


def test_staff_sees_only_visible_sections(client, vercel_world, alice):
    alice.is_staff = True
    alice.save(update_fields=["is_staff"])
    alice.user_permissions.add(
        *Permission.objects.filter(codename__in=["view_pagesection", "change_pagesection"])
    )
    client.force_login(alice)
    body = client.get("/admin/wiki/pagesection/").content.decode()
    assert "#sales" in body and "#finance-internal" not in body


def test_confirm_action_makes_stale_sections_current(admin_client, push, alice):
    email = {
        "source": "email",
        "external_id": "<m9@acme.com>",
        "version": 1,
        "kind": "email",
        "occurred_at": "2026-11-30T10:00:00Z",
        "container": {"key": "email:thread:t9", "name": "Vercel", "members": ["alice@acme.com"]},
        "thread_key": "email:thread:t9",
        "author": "alice@acme.com",
        "title": "Vercel quote",
        "text": "Quote is 40k",
        "tags": {"customer": "Vercel"},
    }
    push(email, dict(email, version=2, kind="email_recalled", occurred_at="2026-11-30T11:00:00Z"))
    section = PageSection.objects.get(stale=True)
    response = admin_client.post(
        "/admin/wiki/pagesection/",
        {"action": "confirm_stale_sections", "_selected_action": [section.pk], "reason": "checked"},
    )
    assert response.status_code == 302
    section.refresh_from_db()
    assert not section.stale


def test_a_superuser_starts_a_rebuild_and_follows_its_progress(
    admin_client, vercel_world, tenant, django_capture_on_commit_callbacks
):
    from wiki.models import Rebuild

    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        response = admin_client.post("/admin/wiki/rebuild/add/", {"tenant": tenant.pk, "page_slug": "vercel"})
    # One rebuild task after the commit (the compile it runs adds callbacks of its own).
    assert response.status_code == 302
    assert len([c for c in callbacks if c.__qualname__.startswith("RebuildAdmin.")]) == 1
    rebuild = Rebuild.objects.get()  # tests run django-q tasks at once (Q_SYNC)
    assert (rebuild.page_slug, rebuild.state) == ("vercel", "done")
    body = admin_client.get("/admin/wiki/rebuild/").content.decode()
    assert "done" in body and "threads 2/2" in body
    response = admin_client.post(
        "/admin/wiki/rebuild/add/", {"tenant": tenant.pk, "page_slug": "no-such-page"}
    )
    assert response.status_code == 200 and "no page" in response.content.decode()
    assert Rebuild.objects.count() == 1


def test_staff_who_are_not_superusers_see_no_rebuilds(client, vercel_world, alice):
    alice.is_staff = True
    alice.save(update_fields=["is_staff"])
    alice.user_permissions.add(*Permission.objects.filter(codename__in=["view_rebuild", "add_rebuild"]))
    client.force_login(alice)
    assert client.get("/admin/wiki/rebuild/").status_code == 403
    assert client.get("/admin/wiki/rebuild/add/").status_code == 403
