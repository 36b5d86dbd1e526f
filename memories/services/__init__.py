"""Writes of the memories app (docs/style.md, Where code goes): memories, feedback, sessions, extraction.

Modules depend one way: `rows` (row primitives) ← `compression` ← `memories` ← `extraction`;
`scopes` and `common` below them all; `sessions`, `touches` (recall hits) and `users` beside them.
"""

from memories.services.compression import (
    compressed_expire,
    memories_compress,
    memory_compress_topic,
    memory_restore,
)
from memories.services.extraction import session_extract
from memories.services.memories import (
    memory_create,
    memory_delete,
    memory_feedback,
    memory_find_duplicate,
    memory_purge,
    memory_update,
)
from memories.services.rows import memory_set_status
from memories.services.scopes import scope_resolve
from memories.services.sessions import session_create, session_end, tool_output_truncate, turn_add
from memories.services.touches import memory_touch, memory_touch_counts, memory_touch_later

__all__ = [
    "compressed_expire",
    "memories_compress",
    "memory_compress_topic",
    "memory_restore",
    "memory_create",
    "memory_delete",
    "memory_purge",
    "memory_feedback",
    "memory_find_duplicate",
    "memory_set_status",
    "memory_touch",
    "memory_touch_counts",
    "memory_touch_later",
    "memory_update",
    "scope_resolve",
    "session_create",
    "session_end",
    "session_extract",
    "tool_output_truncate",
    "turn_add",
]
