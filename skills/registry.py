"""The registry of Python (built-in) skills and of event subscriptions.

A built-in skill is a class with a `name`, a `version`, JSON-schema `input_schema` and
`output_schema`, `run_llm(input, client)` and `run_offline(input)`. Register it with
`@register`; `skills.services.skill_sync_builtins` upserts one `Skill` row per class so
admins see it. Subscriptions map a domain event to skills (see `skills.bus`).
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar

BUILTIN_MODULES = [
    "skills.builtin.fact_extract",
    "skills.builtin.summarize",
    "skills.builtin.compress",
    "skills.builtin.preference_extract",
    "skills.builtin.contract_clauses",
    "skills.builtin.weekly_report",
]


class NoOfflineFallback(Exception):
    """The skill has no deterministic offline path (prompt-only skills)."""


class BaseSkill:
    name: ClassVar[str]
    version: ClassVar[str] = "1"
    description: ClassVar[str] = ""
    input_schema: ClassVar[dict] = {"type": "object"}
    output_schema: ClassVar[dict] = {"type": "object"}
    events: ClassVar[tuple[str, ...]] = ()
    # Input fields the skill reads for the user it runs for (`skills.acting`), never from
    # the caller: {field: source}, each source answered through that user's access filter.
    reads: ClassVar[dict[str, str]] = {}
    # A user may opt in to have it run for them every so many days (`skills.tasks`, trigger `schedule`).
    schedule_days: ClassVar[int | None] = None
    has_offline: ClassVar[bool] = True
    max_output_tokens: ClassVar[int | None] = None

    def messages(self, input: dict) -> list[dict]:
        raise NotImplementedError

    def normalize(self, input: dict, data: Any) -> Any:
        """Coerce what a (local) model returned into the contract's shape, before validation."""
        return data

    def check(self, input: dict, output: dict) -> str | None:
        """A semantic check beyond the schema; a message here is sent back to the LLM."""
        return None

    def run_llm(self, input: dict, client) -> dict:
        return client.complete_json(
            self.messages(input),
            schema=self.output_schema,
            normalize=lambda data: self.normalize(input, data),
            check=lambda output: self.check(input, output),
            max_tokens=self.output_token_limit(input),
        )

    def output_token_limit(self, input: dict) -> int | None:
        return self.max_output_tokens

    def run_offline(self, input: dict) -> dict:
        raise NoOfflineFallback(f"skill {self.name!r} has no offline fallback")

    def reading(self, input: dict) -> dict:
        """What the sources of `reads` are asked for (e.g. since/until), from the caller's input."""
        return {}

    def memory_of(self, output) -> dict | None:
        """What a scheduled run (`skills.tasks`) keeps as a memory of its user: the arguments
        of `skills.signals.memory_for_skill` (content, memory_type, kind, occurred_at, meta), or None."""
        return None

    def caller_schema(self) -> dict:
        """The input schema a caller fills: `input_schema` without the fields in `reads`."""
        if not self.reads:
            return self.input_schema
        schema = dict(self.input_schema)
        schema["properties"] = {k: v for k, v in schema.get("properties", {}).items() if k not in self.reads}
        schema["required"] = [k for k in schema.get("required", []) if k not in self.reads]
        return schema


_SKILLS: dict[str, type[BaseSkill]] = {}


def register(cls: type[BaseSkill]) -> type[BaseSkill]:
    _SKILLS[cls.name] = cls
    return cls


@functools.cache
def _load_builtins() -> None:
    for module in BUILTIN_MODULES:
        importlib.import_module(module)


def builtin_names() -> list[str]:
    _load_builtins()
    return sorted(_SKILLS)


def scheduled_names() -> list[str]:
    """The built-ins a user may opt in to (`BaseSkill.schedule_days`)."""
    _load_builtins()
    return sorted(name for name, cls in _SKILLS.items() if cls.schedule_days)


def get_builtin(name: str) -> BaseSkill | None:
    _load_builtins()
    cls = _SKILLS.get(name)
    return cls() if cls else None


# --- Event subscriptions ---------------------------------------------------------------


@dataclass(frozen=True)
class Subscription:
    event: str
    skill: str
    to_input: Callable[[dict], dict | None] | None = None  # payload → skill input (None: skip)
    on_output: Callable[[dict, dict], None] | None = None  # (payload, output), must be idempotent


_SUBSCRIPTIONS: dict[tuple[str, str], Subscription] = {}


def subscribe(event: str, skill: str, *, to_input=None, on_output=None) -> Subscription:
    """Run `skill` whenever `event` is published (call from an AppConfig.ready)."""
    sub = Subscription(event=event, skill=skill, to_input=to_input, on_output=on_output)
    _SUBSCRIPTIONS[(event, skill)] = sub
    return sub


def unsubscribe(event: str, skill: str) -> None:
    _SUBSCRIPTIONS.pop((event, skill), None)


def code_subscriptions(event: str) -> list[Subscription]:
    _load_builtins()
    subs = {s.skill: s for (e, _), s in _SUBSCRIPTIONS.items() if e == event}
    for name, cls in _SKILLS.items():
        if event in cls.events and name not in subs:
            subs[name] = Subscription(event=event, skill=name)
    return [subs[name] for name in sorted(subs)]


def subscription(event: str, skill: str) -> Subscription:
    return _SUBSCRIPTIONS.get((event, skill)) or Subscription(event=event, skill=skill)
