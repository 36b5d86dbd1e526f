"""Webhook receivers, one module per tool (`slack`, `github`), as for importers and pollers.

Each verifies the request's signature before reading it and feeds the same normalized events
to `event_ingest_batch`. What they share lives here: reading the body, refusing a payload of
the wrong shape with a 400 that names the field, and finding the source a webhook is for.
"""

from __future__ import annotations

import logging

from almanac import jsonbody
from almanac.errors import ApplicationError
from connectors.models import Source

# What a signed payload of an unexpected shape raises while it is read (a field of the
# wrong type, a missing key, a timestamp that is no number): the sender's error, a 400.
SHAPE_ERRORS = (TypeError, ValueError, KeyError, AttributeError, OverflowError, OSError)

log = logging.getLogger(__name__)


def field_error(what: str, field: str, expected: str) -> ApplicationError:
    log.warning("refused a %s: %s is not %s", what, field, expected)
    return ApplicationError(
        f"the {what} is not in the expected shape: {field} must be {expected}", status_code=400
    )


def json_body(request) -> dict:
    data = jsonbody.loads(request.body)
    if not isinstance(data, dict):
        raise ApplicationError("the body must be a JSON object", status_code=400)
    return data


def shape_error(what: str, exc: Exception) -> ApplicationError:
    log.warning("refused a %s of an unexpected shape: %s: %s", what, type(exc).__name__, exc)
    return ApplicationError(
        f"the {what} is not in the expected shape (a field is missing or of the wrong type)", status_code=400
    )


def source_for(kind: str, *, field: str, value: str, contains: bool = False) -> Source:
    """The source a webhook belongs to: the one whose config names this workspace/repo;
    else the only source of that kind, provided it names none (a single-tenant setup)."""
    sources = Source.objects.select_related("tenant").filter(kind=kind, enabled=True)
    if value:
        lookup = {f"config__{field}__contains": [value]} if contains else {f"config__{field}": value}
        found = list(sources.filter(**lookup).order_by("pk"))
        if len({source.tenant_id for source in found}) > 1:  # the admin refuses a second claim
            raise ApplicationError(
                f"{value} is claimed by more than one tenant's {kind} source", status_code=409
            )
        if found:
            return found[0]
    candidates = list(sources[:2])
    if len(candidates) == 1 and not candidates[0].config.get(field):
        return candidates[0]
    raise ApplicationError(f"no {kind} source is configured for {value or 'this webhook'}", status_code=404)
