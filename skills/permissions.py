"""Permission rules of the skills app (the base rules are `almanac.permissions`')."""

from __future__ import annotations

from almanac.permissions import sees_everything


def reads_run_contents(user) -> bool:
    """A skill run's input, output and error quote what people said: superusers only."""
    return sees_everything(user)


def may_delete_runs(user) -> bool:
    """Skill runs are an append-only log: superusers delete them, for retention clean-up only."""
    return sees_everything(user)


def may_test_run(user) -> bool:
    """A Test run sends sample text to the configured LLM with a skill's prompt: those who
    manage the installation's skills (superusers)."""
    return sees_everything(user)
