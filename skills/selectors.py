"""Reads of the skills app: a skill's run statistics (the admin's per-skill panel)."""

from __future__ import annotations

from django.db.models import Count, Q

from skills.models import SkillRun


def skill_run_stats(name: str) -> dict:
    """Skill `name`'s runs: {"total", "failed", "failure_rate" (0..1, None with no runs),
    "by_trigger": [{"trigger", "runs", "failed"}] most runs first, "last_error": the newest
    failed run's {"id", "created_at", "trigger", "error"} or None}. Skipped runs (an event a
    prompt skill made) are counted by trigger but are not failures."""
    runs = SkillRun.objects.filter(skill_name=name).order_by()
    failed = Q(status=SkillRun.Status.FAILED)
    rows = runs.values("trigger").annotate(runs=Count("id"), failed=Count("id", filter=failed))
    by_trigger = sorted(rows, key=lambda r: (-r["runs"], r["trigger"]))
    total = sum(r["runs"] for r in by_trigger)
    failures = sum(r["failed"] for r in by_trigger)
    last = (
        runs.filter(failed)
        .order_by("-created_at", "-id")
        .values("id", "created_at", "trigger", "error")
        .first()
    )
    return {
        "total": total,
        "failed": failures,
        "failure_rate": failures / total if total else None,
        "by_trigger": by_trigger,
        "last_error": last,
    }
