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
