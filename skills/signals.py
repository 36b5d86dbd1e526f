"""The domain events that skills subscribe to (docs/design.md, Skills and the LLM).

The apps above skills (memories, wiki, connectors) announce what happened by sending
`domain_event`; they never call the bus themselves. The one receiver here hands the event to
`skills.bus.publish`, which enqueues every subscribed skill after the sender's transaction
commits. Send it with `event` (one of `skills.bus.EVENTS`), `payload` (a JSON-able dict;
ids, never instances) and `tenant_id`.
"""

from __future__ import annotations

from django.dispatch import Signal, receiver

domain_event = Signal()


@receiver(domain_event, dispatch_uid="skills.domain_event")
def _publish(sender, *, event: str, payload: dict, tenant_id: int | None = None, **kwargs) -> list[str]:
    from skills import bus

    return bus.publish(event, payload, tenant_id=tenant_id)
