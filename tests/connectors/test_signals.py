"""What ingest announces (`connectors.signals`, and `domain_event` for skills): sent inside
the ingest's transaction, for new events only; subscribers act after the commit."""

import pytest

from connectors.services.ingest import event_ingest
from connectors.signals import container_visibility_changed, event_ingested
from skills.models import SkillRun
from tests.connectors.conftest import make_event

pytestmark = pytest.mark.django_db

UPLOADED = "event:document.uploaded"  # the trigger of a skill run it caused


def _note(**over):
    container = {"key": "notes:meeting:ab12", "name": "Apollo sync", "members": ["alice@acme.com"]}
    return make_event(
        source="notes", external_id="apollo-sync.md", kind="meeting_note", container=container, **over
    )


@pytest.fixture
def heard():
    """The arguments of every `event_ingested` and `container_visibility_changed` sent."""
    calls = []

    def listen(sender, signal, **kwargs):
        calls.append((signal, kwargs))

    event_ingested.connect(listen, dispatch_uid="test.event_ingested")
    container_visibility_changed.connect(listen, dispatch_uid="test.container_visibility_changed")
    yield calls
    event_ingested.disconnect(dispatch_uid="test.event_ingested")
    container_visibility_changed.disconnect(dispatch_uid="test.container_visibility_changed")


@pytest.fixture
def document_uploaded(skill_subscribed):
    """A skill subscribed to `document.uploaded`; the payloads it ran on."""
    return skill_subscribed("document.uploaded")


def test_a_new_event_is_announced_and_a_duplicate_is_not(tenant, alice, heard):
    event, _ = event_ingest(tenant=tenant, payload=make_event())
    event_ingest(tenant=tenant, payload=make_event())
    ingested = [kwargs for signal, kwargs in heard if signal is event_ingested]
    assert ingested == [{"tenant_id": tenant.pk, "event_id": event.pk}]


def test_a_container_turned_private_is_announced_with_its_visibility(tenant, alice, heard):
    public = make_event(container={"key": "slack:channel:C123", "public": True})
    event_ingest(tenant=tenant, payload=public)
    heard.clear()
    event_ingest(tenant=tenant, payload=make_event(external_id="C123/2"))
    [changed] = [kwargs for signal, kwargs in heard if signal is container_visibility_changed]
    assert changed == {"tenant": tenant, "container_key": "slack:channel:C123", "public": False}


def test_a_new_meeting_note_runs_the_document_uploaded_skills_after_commit(
    settings, tenant, alice, document_uploaded, django_capture_on_commit_callbacks
):
    settings.LLM_BASE_URL = ""
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        event, _ = event_ingest(tenant=tenant, payload=_note())
    assert not SkillRun.objects.filter(trigger=UPLOADED).exists()  # nothing before the commit
    for callback in callbacks:
        callback()
    run = SkillRun.objects.get(trigger=UPLOADED)
    assert (run.skill_name, run.tenant) == ("summarize", tenant)
    [payload] = document_uploaded
    assert (payload["connector_event_id"], payload["source_id"]) == (event.pk, event.source_id)
    assert (payload["text"], payload["acl"], payload["user_id"]) == (event.text, ["notes:meeting:ab12"], None)


def test_messages_and_repeated_notes_upload_no_document(
    settings, tenant, alice, document_uploaded, django_capture_on_commit_callbacks
):
    settings.LLM_BASE_URL = ""
    event_ingest(tenant=tenant, payload=_note())
    with django_capture_on_commit_callbacks(execute=True):
        event_ingest(tenant=tenant, payload=_note())  # a duplicate
        event_ingest(tenant=tenant, payload=make_event())  # not a document
    assert not SkillRun.objects.filter(trigger=UPLOADED).exists() and document_uploaded == []
