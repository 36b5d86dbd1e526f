from unittest import mock

import pytest

from almanac.models import GroupMembership
from almanac.selectors import user_group_keys
from connectors.models import Event, ExternalIdentity, Source
from connectors.selectors import event_item_history, source_freshness
from connectors.services.ingest import event_ingest
from connectors.services.sources import source_ensure, source_reset_backoff, sync_failure, sync_success
from tests.connectors.conftest import make_event

pytestmark = pytest.mark.django_db


def test_push_one_event_is_accepted_and_applies_membership(push, alice, bob, charlie):
    response = push(make_event())
    assert response.status_code == 202
    assert response.json() == {"accepted": 1, "duplicates": 0}
    event = Event.objects.get()
    assert event.source.kind == Source.Kind.SLACK
    assert event.tags == {"customer": "Vercel", "project": "Apollo"}
    assert "slack:channel:C123" in user_group_keys(alice)
    assert "slack:channel:C123" in user_group_keys(bob)
    assert "slack:channel:C123" not in user_group_keys(charlie)


def test_push_same_triple_twice_is_a_duplicate(push, alice):
    assert push(make_event()).json() == {"accepted": 1, "duplicates": 0}
    assert push({"events": [make_event(), make_event(version=2, kind="message_changed")]}).json() == {
        "accepted": 1,
        "duplicates": 1,
    }
    assert Event.objects.count() == 2


def test_push_needs_connector_permission(api, alice):
    response = api.post("/connectors/events", make_event())
    assert response.status_code == 403
    assert Event.objects.count() == 0


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        ({"kind": "tweet"}, "kind"),
        ({"occurred_at": "yesterday-ish"}, "occurred_at"),
        ({"occurred_at": "9999-12-31T23:59:59-10:00"}, "between the years 1900 and 2999"),
        ({"occurred_at": "0001-01-01T00:00:00+10:00"}, "between the years 1900 and 2999"),
        ({"occurred_at": "9999-12-31T23:59:59Z"}, "between the years 1900 and 2999"),
        ({"occurred_at": "1899-12-31T23:59:59Z"}, "between the years 1900 and 2999"),
        ({"container": {"key": "dept:finance", "members": ["charlie@acme.com"]}}, "directory namespaces"),
        ({"text": "bad\x00text"}, "NUL"),
        ({"tags": {"colour": "red"}}, "tags"),
        ({"source": ""}, "source"),
        ({"source": "hubspot"}, "belongs to slack sources"),
        ({"kind": "membership_added", "container": {"key": "slack:channel:C1"}}, "needs container.members"),
    ],
)
def test_push_rejects_bad_event_with_reason(push, alice, change, reason):
    response = push(make_event(**change))
    assert response.status_code == 422
    assert reason in response.json()["detail"]
    assert Event.objects.count() == 0 and Source.objects.count() == 0


def test_bad_event_in_batch_rejects_batch_and_names_index(push, alice):
    response = push({"events": [make_event(), make_event(external_id="x", kind="nope")]})
    assert response.status_code == 422
    assert response.json()["index"] == 1
    assert "events[1]" in response.json()["detail"]
    assert Event.objects.count() == 0
    assert GroupMembership.objects.filter(group__key="slack:channel:C123").count() == 0


def test_push_rejects_non_json_body(client, connector_key):
    response = client.post(
        "/api/v1/connectors/events",
        "{not json",
        content_type="application/json",
        headers={"Authorization": f"Bearer {connector_key}"},
    )
    assert response.status_code == 400


def test_unknown_members_are_recorded_and_granted_nothing(tenant, alice):
    event = make_event(container={"key": "slack:channel:C9", "members": ["stranger@evil.example", "U999"]})
    event_ingest(tenant=tenant, payload=event)
    handles = set(ExternalIdentity.objects.filter(user=None).values_list("handle", flat=True))
    assert {"stranger@evil.example", "U999"} <= handles
    assert GroupMembership.objects.filter(group__key="slack:channel:C9").count() == 0


def test_handle_linked_to_user_is_matched(tenant, alice):
    ExternalIdentity.objects.create(tenant=tenant, source_kind="slack", handle="U1", user=alice)
    event_ingest(tenant=tenant, payload=make_event(container={"key": "slack:channel:C5", "members": ["U1"]}))
    assert "slack:channel:C5" in user_group_keys(alice)


def test_membership_removed_takes_effect_on_next_read(tenant, alice, bob):
    event_ingest(tenant=tenant, payload=make_event())
    assert "slack:channel:C123" in user_group_keys(bob)
    removed = make_event(
        external_id="C123/member_left/bob",
        kind="membership_removed",
        container={"key": "slack:channel:C123", "members": ["bob@acme.com"]},
    )
    event_ingest(tenant=tenant, payload=removed)
    assert "slack:channel:C123" not in user_group_keys(bob)
    assert "slack:channel:C123" in user_group_keys(alice)


def test_content_event_members_replace_connector_memberships(tenant, alice, bob):
    event_ingest(tenant=tenant, payload=make_event())
    later = make_event(
        external_id="C123/2", container={"key": "slack:channel:C123", "members": ["alice@acme.com"]}
    )
    event_ingest(tenant=tenant, payload=later)
    assert "slack:channel:C123" not in user_group_keys(bob)
    omitted = make_event(external_id="C123/3", container={"key": "slack:channel:C123"})
    event_ingest(tenant=tenant, payload=omitted)
    assert "slack:channel:C123" in user_group_keys(alice)


def test_duplicate_changes_no_membership(tenant, alice, bob):
    event_ingest(tenant=tenant, payload=make_event())
    GroupMembership.objects.filter(user=bob, group__key="slack:channel:C123").delete()
    _, created = event_ingest(tenant=tenant, payload=make_event())
    assert created is False
    assert "slack:channel:C123" not in user_group_keys(bob)


def test_ingest_enqueues_compile_after_commit(tenant, alice, django_capture_on_commit_callbacks):
    with mock.patch("wiki.receivers.inbox_drain_enqueue") as enqueue:
        with django_capture_on_commit_callbacks(execute=True):
            event, created = event_ingest(tenant=tenant, payload=make_event())
        event_ingest(tenant=tenant, payload=make_event())
    assert created
    enqueue.assert_called_once_with(tenant.pk)


def test_event_item_history_orders_versions(tenant, alice):
    event_ingest(tenant=tenant, payload=make_event(version=3, kind="message_deleted"))
    first, _ = event_ingest(tenant=tenant, payload=make_event())
    event_ingest(tenant=tenant, payload=make_event(external_id="other"))
    assert [e.version for e in event_item_history(event=first)] == [1, 3]


def test_source_freshness_for_push_source(tenant, alice):
    assert source_freshness(tenant=tenant) == {}
    event_ingest(
        tenant=tenant,
        payload=make_event(
            source="hubspot", container={"key": "hubspot:deal:42", "members": ["alice@acme.com"]}
        ),
    )
    state = source_freshness(tenant=tenant)["hubspot"]
    assert state["state"] == "ok"
    assert state["last_synced_at"] is not None and state["lag_seconds"] >= 0
    assert Source.objects.get(name="hubspot").kind == Source.Kind.PUSH


def test_source_freshness_backoff_and_error(tenant):
    source = source_ensure(tenant=tenant, name="github")
    assert source_freshness(tenant=tenant)["github"]["state"] == "never"
    sync_failure(source=source, error="HTTP 429", retry_after=120)
    state = source_freshness(tenant=tenant)["github"]
    assert state["state"] == "backoff" and state["backoff_until"] and state["last_error"] == "HTTP 429"
    source_reset_backoff(source=source)
    assert source_freshness(tenant=tenant)["github"]["state"] == "error"
    sync_success(source=source)
    assert source_freshness(tenant=tenant)["github"]["state"] == "ok"


def test_list_sources_shows_sync_state(api, tenant, alice):
    event_ingest(tenant=tenant, payload=make_event())
    sync_failure(source=Source.objects.get(name="slack"), error="HTTP 503")
    rows = api.get("/connectors").json()
    assert rows[0]["name"] == "slack" and rows[0]["state"] == "backoff"
    assert rows[0]["last_error"] == "HTTP 503" and rows[0]["events"] == 1


def test_list_sources_of_other_tenant_not_shown(client, mallory, tenant, alice):
    event_ingest(tenant=tenant, payload=make_event())
    client.force_login(mallory)
    assert client.get("/api/v1/connectors").json() == []


def test_list_sources_needs_auth_and_a_tenant(client, tenant):
    from django.contrib.auth import get_user_model

    assert client.get("/api/v1/connectors").status_code == 401
    loner = get_user_model().objects.create_user("loner")
    client.force_login(loner)
    assert client.get("/api/v1/connectors").status_code == 404


def test_list_sources_query_count_is_flat(api, tenant, alice, django_assert_num_queries):
    for name in ("slack", "hubspot", "crm"):
        key = "slack:channel:C1" if name == "slack" else f"{name}:x:1"
        event_ingest(tenant=tenant, payload=make_event(source=name, container={"key": key}))
    sync_failure(source=Source.objects.get(name="crm"), error="HTTP 500")
    with django_assert_num_queries(
        3
    ):  # the agent key, its last-use stamp, one for sources + cursors + counts
        rows = api.get("/connectors").json()
    assert [r["name"] for r in rows] == ["crm", "hubspot", "slack"]


def test_same_new_event_twice_in_one_batch(push, alice):
    assert push({"events": [make_event(), make_event()]}).json() == {"accepted": 1, "duplicates": 1}
    assert Event.objects.count() == 1


def test_member_of_another_tenant_is_never_matched(tenant, alice, mallory):
    from connectors.models import ExternalIdentity as Identity

    Identity.objects.create(
        tenant=tenant, source_kind="slack", handle="U-MAL", user=mallory
    )  # a bad admin link
    event = make_event(container={"key": "slack:channel:C7", "members": ["mallory@globex.com", "U-MAL"]})
    event_ingest(tenant=tenant, payload=event)
    assert GroupMembership.objects.filter(group__key="slack:channel:C7").count() == 0
    assert "slack:channel:C7" not in user_group_keys(mallory)


def test_public_flag_is_recorded(tenant, alice):
    event, _ = event_ingest(
        tenant=tenant,
        payload=make_event(container={"key": "slack:channel:C1", "name": "#general", "public": True}),
    )
    assert event.container_public is True and event.container_members is None


def test_long_source_name_membership_replace(tenant, alice, bob):
    name = "crm-" + "x" * 90
    first = make_event(
        source=name, container={"key": "crm:a:1", "members": ["alice@acme.com", "bob@acme.com"]}
    )
    event_ingest(tenant=tenant, payload=first)
    event_ingest(
        tenant=tenant,
        payload={**first, "external_id": "2", "container": {"key": "crm:a:1", "members": ["alice@acme.com"]}},
    )
    assert "crm:a:1" in user_group_keys(alice) and "crm:a:1" not in user_group_keys(bob)


# --- validation: reserved source names, link URLs ------------------------------------------


@pytest.mark.parametrize("name", ["builtin", "admin", "Builtin"])
def test_reserved_source_name_is_refused(push, alice, name):
    response = push(make_event(source=name, container={"key": "crm:deal:1", "members": ["alice@acme.com"]}))
    assert response.status_code == 422
    assert "reserved" in response.json()["detail"]
    assert not GroupMembership.objects.filter(group__key="crm:deal:1").exists()


@pytest.mark.parametrize(
    "url", ["javascript:alert(1)", " JavaScript:alert(1)", "data:text/html,x", "//evil.example/x", "https://"]
)
def test_event_url_must_be_http(push, alice, url):
    response = push(make_event(url=url))
    assert response.status_code == 422
    assert "url" in response.json()["detail"]
    assert not Event.objects.exists()


def test_event_url_http_or_empty_is_stored(push, alice):
    assert push(make_event(url="https://acme.slack.com/archives/C123/p1")).status_code == 202
    assert push(make_event(external_id="C123/2", url="")).status_code == 202
