import pytest
from django.db import DatabaseError, transaction

from almanac.models import AuditEvent
from almanac.services import audit_record

pytestmark = pytest.mark.django_db


def test_audit_events_are_recorded(tenant):
    event = audit_record(
        action="wiki.confirm", tenant=tenant, actor="alice", object_type="section", object_id=7
    )
    assert AuditEvent.objects.get(pk=event.pk).object_id == "7"


def test_the_database_refuses_updates_and_deletes(tenant):
    event = audit_record(action="memory.purge", tenant=tenant, actor="admin")
    with pytest.raises(DatabaseError, match="append-only"), transaction.atomic():
        AuditEvent.objects.filter(pk=event.pk).update(action="nothing happened")
    with pytest.raises(DatabaseError, match="append-only"), transaction.atomic():
        AuditEvent.objects.filter(pk=event.pk).delete()
    assert AuditEvent.objects.get(pk=event.pk).action == "memory.purge"
