"""Versioned memory rows: what each `schema_version` adds and how an older row is brought
up to the current one (`Memory.SCHEMA_VERSION`).

Applied on every read (`Memory.from_db`: an older row is served as the current version,
in memory only) and written back in batches by `memories.tasks.memory_upgrade_task`. An
upgrade reads only the row itself, so both give the same result, and running it again
changes nothing.

- 1: the original rows (a row at 0 is read as 1: nothing was different).
- 2: `kind` (fact, preference, ...: `almanac.text.claims.kind_infer`; the migration that added
  it filled what the database alone could tell, from `meta` and the memory type) and
  `fact_key` (what it states a value of: `almanac.text.claims.claim`).
"""

from __future__ import annotations

from almanac.text.claims import claim, kind_infer

# The fields an upgrade may change (what the job writes back).
UPGRADE_FIELDS = ("kind", "fact_key", "schema_version")
# The fields it reads: a row loaded without one of them (`only()`, `defer()`) is left as read.
_READS = ("content", "meta", "memory_type", *UPGRADE_FIELDS)


def _to_v2(memory) -> None:
    if memory.kind in ("", "fact"):  # the migration's default: the text may say more
        memory.kind = kind_infer(content=memory.content, meta=memory.meta, memory_type=memory.memory_type)
    if not memory.fact_key and memory.memory_type == "semantic" and memory.kind not in ("summary", "event"):
        found = claim(memory.content)
        memory.fact_key = found.key if found is not None else ""


# {version: the step from it to the next}.
_STEPS = {0: lambda memory: None, 1: _to_v2}


def upgrade(memory) -> bool:
    """Bring `memory` (a Memory instance) to the current schema (`SCHEMA_VERSION` of its
    class) in place, without saving; False when it is current already or was loaded
    without a field the upgrade reads."""
    current = type(memory).SCHEMA_VERSION
    loaded = memory.__dict__
    if any(name not in loaded for name in _READS) or memory.schema_version >= current:
        return False
    for version in range(max(memory.schema_version, 0), current):
        _STEPS[version](memory)
    memory.schema_version = current
    return True
