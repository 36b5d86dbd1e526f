"""The base app's endpoints: the health check and who a call acts for."""

from __future__ import annotations

import logging

from django.db import DatabaseError, connection
from ninja import Router, Schema

from almanac.auth import acting_user
from almanac.selectors import user_group_keys, user_tenant
from almanac.services.users import user_name

log = logging.getLogger(__name__)

router = Router()


class QueueOut(Schema):
    pending: int | None


class HealthOut(Schema):
    status: str
    database: str
    queue: QueueOut


@router.get("/health", auth=None, tags=["health"], response={200: HealthOut, 503: HealthOut})
def health(request):
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT count(*) FROM django_q_ormq")
            pending = cursor.fetchone()[0]
    except DatabaseError:
        log.exception("health check failed")
        return 503, {"status": "error", "database": "error", "queue": {"pending": None}}
    return {"status": "ok", "database": "ok", "queue": {"pending": pending}}


@router.get("/me", tags=["auth"])
def whoami(request, user: str = ""):
    """Who a call acts for and which access groups that user is in right now."""
    person = acting_user(request, user)
    return {
        "username": user_name(person),
        "email": person.email,
        "tenant": user_tenant(person).slug,
        "groups": user_group_keys(person),
    }
