"""The admin dashboard (docs/operations.md, "Dashboard"): charts rendered on the server, numbers
linking to their lists, a tenant admin seeing only their tenant."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.utils import timezone

from almanac.services.users import user_create
from metrics.models import ContextCall, DailyFigure
from tests.staff import make_staff

pytestmark = pytest.mark.django_db


def call(tenant, user, task, days_ago=0, **fields):
    return ContextCall.objects.create(
        tenant=tenant,
        user=user,
        at=timezone.now() - timedelta(days=days_ago),
        task=task,
        task_digest=task,
        latency_ms=100,
        **fields,
    )


@pytest.fixture
def both_tenants(tenant, other_tenant, alice, mallory):
    today = timezone.localdate()
    for days_ago, n in ((2, 3), (1, 5), (0, 7)):
        DailyFigure.objects.create(
            tenant=tenant, day=today - timedelta(days=days_ago), name="context_calls", key="api", value=n
        )
    DailyFigure.objects.create(tenant=other_tenant, day=today, name="context_calls", key="api", value=1000)
    DailyFigure.objects.create(tenant=tenant, day=today, name="memories_returned", value=10)
    DailyFigure.objects.create(tenant=tenant, day=today, name="memories_adopted", value=4)
    DailyFigure.objects.create(tenant=None, day=today, name="queue_depth", value=42)
    call(tenant, alice, "acme renewal")
    call(other_tenant, mallory, "globex secret merger plan")


def panel(html: str, title: str) -> str:
    match = re.search(
        rf"<h3>{re.escape(title)}</h3>\s*<a class=\"metrics-value\" href=\"([^\"]*)\">([^<]*)</a>", html
    )
    assert match, f"no panel {title!r}"
    return match.group(2), match.group(1)


def test_a_tenant_admin_sees_only_their_tenant(client, tenant, both_tenants):
    admin = make_staff(
        user_create(tenant=tenant, username="ada", email="ada@acme.com"), "metrics.view_contextcall"
    )
    client.force_login(admin)

    html = client.get("/admin/").content.decode()

    value, url = panel(html, "Context calls")
    assert value == "15"  # 3 + 5 + 7, not the other tenant's 1000
    assert url == "/admin/metrics/contextcall/"
    assert panel(html, "Memory hit rate")[0] == "40.0%"
    assert (
        "<svg" in html and "<script" not in html.split('id="metrics-dashboard"')[1].split("</div>\n</div>")[0]
    )
    assert "globex" not in html.lower()
    assert "Queue depth" not in html  # the installation's queue is the superuser's
    # the list behind the number holds only their tenant's calls
    listed = client.get(url).content.decode()
    assert "acme renewal" in listed and "globex secret" not in listed


def test_a_superuser_sees_every_tenant_and_the_queue(admin_client, both_tenants):
    html = admin_client.get("/admin/").content.decode()
    assert panel(html, "Context calls")[0] == "1,015"
    assert panel(html, "Queue depth")[0] == "42"


def test_charts_are_svg_with_a_point_per_day(client, tenant, both_tenants):
    admin = make_staff(user_create(tenant=tenant, username="ada", email="ada@acme.com"))
    client.force_login(admin)
    html = client.get("/admin/").content.decode()
    chart = re.search(
        r'<svg class="metrics-chart"[^>]*aria-label="Context calls">(.*?)</svg>', html, re.S
    ).group(1)
    tips = re.findall(r"<title>([^<]*)</title>", chart)
    today = timezone.localdate()
    assert tips == [f"{today - timedelta(days=2)}: 3", f"{today - timedelta(days=1)}: 5", f"{today}: 7"]


def test_labels_in_chinese(client, tenant, both_tenants):
    admin = make_staff(user_create(tenant=tenant, username="ada", email="ada@acme.com"))
    client.force_login(admin)
    html = client.get("/admin/", headers={"Accept-Language": "zh-hans"}).content.decode()
    assert "上下文调用" in html and "记忆命中率" in html


def test_a_department_admin_sees_no_tenant_figures(client, tenant, both_tenants):
    from almanac.models import AdminScope, Department

    dana = make_staff(
        user_create(tenant=tenant, username="dana", departments=["Sales"]), "metrics.view_contextcall"
    )
    AdminScope.objects.create(user=dana).departments.add(Department.objects.get(tenant=tenant, name="Sales"))
    client.force_login(dana)
    html = client.get("/admin/").content.decode()
    assert 'id="metrics-dashboard"' not in html
    # Their own users' calls only (tests/governance/test_department_admins.py): alice's, in Sales.
    listed = client.get("/admin/metrics/contextcall/").context["cl"].result_list
    assert {call.user.username for call in listed} == {"alice"}


def test_a_superuser_sees_the_worst_tenant_s_latency_and_lag_not_their_sum(
    admin_client, tenant, other_tenant
):
    today = timezone.localdate()
    for t, p95, lag in ((tenant, 160.0, 7200.0), (other_tenant, 20.0, 3600.0)):
        DailyFigure.objects.create(tenant=t, day=today, name="context_latency_ms_p95", value=p95)
        DailyFigure.objects.create(tenant=t, day=today, name="connector_lag_seconds", value=lag)
    html = admin_client.get("/admin/").content.decode()
    assert panel(html, "Context latency p95 (ms)")[0] == "160"  # not 180
    assert panel(html, "Connector lag (hours)")[0] == "2"  # not 3


def test_a_rate_s_headline_is_the_period_s_not_the_last_day_s(admin_client, tenant):
    today = timezone.localdate()
    for days_ago, returned, adopted in ((1, 30, 15), (0, 10, 0)):
        day = today - timedelta(days=days_ago)
        DailyFigure.objects.create(tenant=tenant, day=day, name="memories_returned", value=returned)
        DailyFigure.objects.create(tenant=tenant, day=day, name="memories_adopted", value=adopted)
    html = admin_client.get("/admin/").content.decode()
    assert panel(html, "Memory hit rate")[0] == "37.5%"  # 15 / 40 over the period; today alone 0%


def test_the_lifecycle_number_links_to_the_lifecycle_events_only(admin_client, tenant, alice):
    from almanac.services.audit import audit_record as audit

    audit(tenant=tenant, actor="job", action="memory.archive", object_type="memory", object_id="1")
    audit(tenant=tenant, actor="alice", action="memory.create", object_type="memory", object_id="2")
    DailyFigure.objects.create(
        tenant=tenant, day=timezone.localdate(), name="memory_lifecycle", key="decay", value=1
    )
    html = admin_client.get("/admin/").content.decode()
    value, url = panel(html, "Superseded, compressed, decayed, purged")
    listed = admin_client.get(url.replace("&amp;", "&"))
    actions = {event.action for event in listed.context["cl"].result_list}
    assert value == "1" and actions == {"memory.archive"}


def test_the_dashboard_takes_the_page_s_width(admin_client, both_tenants):
    """Django's index is 600 px wide: four panels a row at 1280 px need the page's width, and
    each table's count column its own (not squeezed into a letter a line)."""
    html = admin_client.get("/admin/").content.decode()
    assert ".dashboard #content { width: auto; }" in html
    assert '<th class="metrics-count">Calls</th>' in html


def test_the_context_call_list_reads_well(admin_client, tenant, alice):
    first = call(tenant, alice, "vercel renewal price")
    ContextCall.objects.filter(pk=first.pk).update(latency_ms=40.96173500147415)
    call(tenant, alice, "vercel renewal price", repeat_of=first)
    page = admin_client.get("/admin/metrics/contextcall/").content.decode()
    assert ">41<" in page and "40.96" not in page  # whole milliseconds
    assert f'href="/admin/metrics/contextcall/{first.pk}/change/">#{first.pk}</a>' in page
    assert str(first) == f"#{first.pk} {first.at:%Y-%m-%d %H:%M} vercel renewal price"  # no bare user id
