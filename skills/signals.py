"""The domain events that skills subscribe to (docs/design.md, Skills and the LLM).

The apps above skills (memories, wiki, connectors) announce what happened by sending
`domain_event`; they never call the bus themselves. The one receiver (`skills.receivers`)
hands the event to `skills.bus.publish`, which enqueues every subscribed skill after the
sender's transaction commits. Send it with `event` (one of `skills.bus.EVENTS`), `payload`
(a JSON-able dict; ids, never instances) and `tenant_id`.
"""

from __future__ import annotations

from django.dispatch import Signal

domain_event = Signal()
