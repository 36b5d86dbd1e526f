"""What connectors announce to the apps that read their events (the wiki).

Connectors sit below the wiki: they never import it. `event_ingest` sends these signals
from inside its transaction, and a subscriber (`wiki.receivers`) hands over to its own
service at once. A receiver that defers work to after the commit registers it with
`transaction.on_commit` itself, so a rolled-back ingest (a batch retried after a
concurrent write) announces nothing that lasts.
"""

from __future__ import annotations

from django.dispatch import Signal

# Sent (by `connectors.services.ingest`, inside its transaction) when a new event, or a new
# version of an item, is stored; never for a duplicate.
# Arguments: sender (the Event class), tenant_id, event_id.
event_ingested = Signal()

# Sent (by `connectors.services.ingest`, inside its transaction, when the container's
# group has been locked and its visibility recorded) when a container is observed to have
# turned private or public: by a new event or by a re-read duplicate. A revocation must not
# wait for a compile worker.
# Arguments: sender (the Event class), tenant (the Tenant instance), container_key, public.
container_visibility_changed = Signal()
