"""The domain events that skills subscribe to (docs/design.md, Skills and the LLM).

The apps above skills (memories, wiki, connectors) announce what happened by sending
`domain_event`; they never call the bus themselves. The one receiver (`skills.receivers`)
hands the event to `skills.bus.publish`, which enqueues every subscribed skill after the
sender's transaction commits. Send it with `event` (one of `skills.bus.EVENTS`), `payload`
(a JSON-able dict, never instances: what happened, with `event_id` its identity, the acting
user, the scope and readers, the text bounded; docs/llm.md, Events; `skills.events` builds
the shared fields) and `tenant_id`.
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
# `user`, `content`, `memory_type`, `kind`, `occurred_at`, `meta` and `reason`, and optionally
# `scope` and `scope_key` (a prompt skill's declared scope; default the user's own). The
# memories app writes it (deduplicated in its scope as any memory; a scope the user is not a
# member of is refused) and answers its id.
memory_for_skill = Signal()

# A prompt skill's result to keep as a page section (skills.prompt_skill.output_keep): sent
# with `user` (the event's acting user), `page` (its title), `title`, `content`, `readers`
# (the event's group keys: who may read it, never wider than the user's own keys),
# `thread_key` (the same key rewrites the same section) and `reason`. The wiki writes it and
# answers the section's id.
section_for_skill = Signal()
