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

# A skill that reads a user's rows (`BaseSkill.reads`, run through `skills.acting`) asks
# for them: sent with `source` ("memories", "pages"), `user`, `since` and `until` (aware
# datetimes). The app that owns the source answers with its rows read through that user's
# access filter (a list of JSON-able dicts); the others answer None.
rows_for_skill = Signal()

# A skill's result to keep as a memory of a user (the scheduled weekly report): sent with
# `user`, `content`, `memory_type`, `kind`, `occurred_at`, `meta` and `reason`. The memories
# app writes it (deduplicated in the user's scope as any memory) and answers its id.
memory_for_skill = Signal()
