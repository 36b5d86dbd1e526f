"""How the prompt names sources and dates (shared by items, selection and the prompt)."""

from __future__ import annotations

from datetime import date, datetime


def day(value: date | datetime | str | None) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value[:10]
    return value.date().isoformat() if isinstance(value, datetime) else value.isoformat()


def single_line(text: str) -> str:
    return " ".join((text or "").split())


def source_labels(sources: list[dict]) -> list[str]:
    """One label per source and container, newest first: 'slack #sales 2026-11-30', or
    'slack #sales 2026-11-01..2026-11-30 ×29' when the container contributed several items."""
    groups: dict[tuple[str, str], list[str]] = {}
    for source in sources:
        key = (single_line(str(source.get("source") or "")), single_line(str(source.get("name") or "")))
        groups.setdefault(key, []).append(day(source.get("occurred_at")))
    labels = []
    for (source, name), days in sorted(groups.items(), key=lambda kv: max(kv[1]), reverse=True):
        known = sorted(d for d in days if d)
        when = known[-1] if known else ""
        if len(known) > 1 and known[0] != known[-1]:
            when = f"{known[0]}..{known[-1]}"
        count = f" ×{len(days)}" if len(days) > 1 else ""
        labels.append(" ".join(p for p in [source, name, when] if p) + count)
    return [label for label in labels if label.strip()]
