"""Recurring meetings as one line: a calendar series, its cadence, the last and the next
occurrence, and the notes of its meetings under it.

The compiler writes a calendar thread (`calendar:event:<uid>`: every occurrence of a
series shares it) as one section per access group with a line per occurrence, so a weekly
series inside the importer's window is a dozen near-identical lines. Each occurrence keeps
its own readers: those of the series' group (`calendar:event:<uid>`) share its section, one
that lists other people is a section of its own (`calendar:event:<uid>/<recurrence id>`).
Pages are folded when they are read (`series_fold`), for every reader path (page API, web
page, context items, summaries), from the sections that reader may read: the series'
sections become one line, built from the occurrences the reader may read (so whoever may
read one of them reads the series, and learns nothing of the others), its content time the
last occurrence (the next one when none has happened yet), and the meeting-notes sections
of the same page dated on one of its occurrences, whose title shares a word with the
series' (beyond the page's own name), move under it, each a line dated by its meeting.

An occurrence is an item of the calendar thread, its time its source's `occurred_at`; its
`ref` is `<uid>/<recurrence id>`, with `@<start>` when it was moved earlier
(`connectors.calendar.normalize`); one moved earlier or later (its recurrence id is not its
start) is marked moved, and named on the line even when it is neither the last nor the
next meeting.
Works on model instances (`PageSection`) and on the plain rows of `page_texts_for_reader`
alike; nothing here reads the database.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from datetime import UTC, datetime

from almanac.search.text import is_cjk, segment

SERIES_PREFIX = "calendar:event:"
NOTES_PREFIX = "notes:"
# A series line shows the description of its last meeting up to this many characters.
DESCRIPTION_CHARS = 300
# At most this many moved meetings besides the last and the next are named on the line.
MOVED_SHOWN = 3
_ITEM_START = re.compile(r"^\[(\d{4}-\d{2}-\d{2})\] ([^:\n]{1,300}): ?", re.MULTILINE)
# What an occurrence with readers of its own adds to its series' container: its recurrence id.
_ISO = r"\d{4}-\d{2}-\d{2}[T ][0-9:.]+(?:Z|[+-]\d{2}:?\d{2})?"
# `/<recurrence id>`, and `@<start>` for one that moved (`connectors.calendar.normalize`).
_OCCURRENCE_KEY = re.compile(rf"/{_ISO}(?:@{_ISO})?$")
_EN_DAYS = ("Mondays", "Tuesdays", "Wednesdays", "Thursdays", "Fridays", "Saturdays", "Sundays")
_ZH_DAYS = "一二三四五六日"


@dataclass(frozen=True)
class Occurrence:
    start: datetime
    moved: bool


def series_key(section) -> str:
    """The calendar series a section is of: its container, less the part an occurrence with
    readers of its own adds (`<series>/<recurrence id>[@<start>]`, `connectors.calendar.normalize`);
    "" for a section of another source."""
    key = getattr(section, "container_key", "") or ""
    return _OCCURRENCE_KEY.sub("", key) if key.startswith(SERIES_PREFIX) else ""


def occurrences(*sections) -> list[Occurrence]:
    """The occurrences in these sections of one series, by start (empty for anything else: a
    section of another source, or a calendar event that does not recur). Every item of a
    calendar thread is an occurrence (the ICS importer's or pushed ones alike); two at one
    time are one."""
    found: dict[datetime, bool] = {}
    for section in sections:
        if not series_key(section):
            continue
        for source in section.sources:
            ref, when = source.get("ref") or "", source.get("occurred_at")
            if not when:
                continue
            start = when if isinstance(when, datetime) else datetime.fromisoformat(str(when))
            start = start.astimezone(UTC)
            found[start] = found.get(start, False) or _moved(ref, start)
    if len(found) < 2:
        return []
    return [Occurrence(start, moved) for start, moved in sorted(found.items())]


def _moved(ref: str, start: datetime) -> bool:
    """Was this occurrence moved? Its ref says so (`<uid>/<recurrence id>@<start>`: moved
    earlier), or its recurrence id (its time in the series) is not its start (moved later)."""
    if "/" not in ref:
        return False
    tail = ref.rpartition("/")[2]
    if "@" in tail:
        return True
    try:
        planned = datetime.fromisoformat(tail)
    except ValueError:
        return False
    if planned.tzinfo is None:  # an all-day series: moved if on another day
        return planned.date() != start.date()
    return planned.astimezone(UTC) != start


def cadence(starts: list[datetime], *, zh: bool) -> str:
    """How often a series meets, from its starts: "weekly on Tuesdays at 10:00 UTC" /
    "每周二 10:00（UTC）". The most common gap, weekday and time decide, so one moved
    meeting does not change what the series is."""
    days = sorted({s.date() for s in starts})
    gaps = Counter((b - a).days for a, b in zip(days, days[1:], strict=False))
    if not gaps:
        return ""
    gap = gaps.most_common(1)[0][0]
    weekday = Counter(s.weekday() for s in starts).most_common(1)[0][0]
    clock = Counter(s.strftime("%H:%M") for s in starts).most_common(1)[0][0]
    at = f" {clock}（UTC）" if zh else f" at {clock} UTC"
    if gap % 7 == 0:
        weeks = gap // 7
        if zh:
            return ("每周" if weeks == 1 else f"每{weeks}周的周") + _ZH_DAYS[weekday] + at
        return ("weekly" if weeks == 1 else f"every {weeks} weeks") + f" on {_EN_DAYS[weekday]}" + at
    if gap == 1 or (gap <= 3 and all(s.weekday() < 5 for s in starts)):
        workdays = all(s.weekday() < 5 for s in starts)
        if zh:
            return ("每个工作日" if workdays else "每天") + at
        return ("every weekday" if workdays else "daily") + at
    if 28 <= gap <= 31:
        day = Counter(s.day for s in starts).most_common(1)[0][0]
        return f"每月{day}日{at}" if zh else f"monthly on day {day}{at}"
    return "定期" if zh else "recurring"


def _when(occurrence: Occurrence, *, zh: bool) -> str:
    start = occurrence.start
    if zh:
        # The date and the time side by side ("2026-12-08 10:00"), as in English.
        moved = "，已改期" if occurrence.moved else ""
        return f"{start:%Y-%m-%d %H:%M}（周{_ZH_DAYS[start.weekday()]}{moved}）"
    return f"{_EN_DAYS[start.weekday()][:3]} {start:%Y-%m-%d %H:%M}" + (
        " (moved)" if occurrence.moved else ""
    )


def _items(content: str) -> list[tuple[str, str, str]]:
    """(date, author, text) of each line the compiler wrote (an item's text may run on over
    several lines: a calendar event's "When:", "Attendees:")."""
    marks = list(_ITEM_START.finditer(content or ""))
    return [
        (
            m.group(1),
            m.group(2),
            content[m.end() : marks[i + 1].start() if i + 1 < len(marks) else None].strip(),
        )
        for i, m in enumerate(marks)
    ]


def _description(text: str, title: str) -> str:
    """What an occurrence's line says besides its title and the importer's When/Location/
    Attendees lines: the event's description."""
    if title and text.startswith(f"{title}:"):
        text = text[len(title) + 1 :]
    elif title and text == title:
        return ""
    lines = [line.strip() for line in text.splitlines()]
    kept = [line for line in lines if line and not line.startswith(("When: ", "Location: ", "Attendees: "))]
    return " ".join(kept)[:DESCRIPTION_CHARS]


def series_text(
    section, occs: list[Occurrence], *, now: datetime, content: str | None = None
) -> tuple[str, datetime]:
    """The series' one line (and the description of its last meeting under it), and its
    content time: the last occurrence, else the next. `content`: the lines of all the
    series' sections being folded (default: this section's)."""
    title = (section.title or getattr(section, "container_name", "") or "").strip()
    zh = is_cjk(title)
    past = [o for o in occs if o.start <= now]
    future = [o for o in occs if o.start > now]
    last, upcoming = (past[-1] if past else None), (future[0] if future else None)
    shown = last or upcoming
    items = _items(section.content if content is None else content)
    organizer = items[0][1] if items else ""
    # A moved meeting other than the last and the next is said too (the nearest few): the
    # cadence would otherwise put it at its old time.
    others = [o for o in occs if o.moved and o is not last and o is not upcoming]
    others = sorted(sorted(others, key=lambda o: abs(o.start - now))[:MOVED_SHOWN], key=lambda o: o.start)
    when = []
    if zh:
        if last:
            when.append(f"上次：{_when(last, zh=True)}")
        if upcoming:
            when.append(f"下次：{_when(upcoming, zh=True)}")
        if others:
            when.append("另有改期：" + "、".join(_when(o, zh=True) for o in others))
        line = f"{title} — 系列会议，{cadence([o.start for o in occs], zh=True)}；{'，'.join(when)}"
    else:
        if last:
            when.append(f"last: {_when(last, zh=False)}")
        if upcoming:
            when.append(f"next: {_when(upcoming, zh=False)}")
        if others:
            when.append("also " + ", ".join(_when(o, zh=False) for o in others))
        line = f"{title} — recurring meeting, {cadence([o.start for o in occs], zh=False)}; {', '.join(when)}"
    text = f"[{shown.start:%Y-%m-%d}] {organizer or 'unknown'}: {line}"
    day = f"{shown.start:%Y-%m-%d}"
    description = next((_description(t, title) for d, _, t in reversed(items) if d == day), "")
    if description:
        text += f"\n  {description}"
    return text, shown.start


def _words(title: str, page_words: set[str]) -> set[str]:
    return {w for w in segment(title or "") if len(w) > 1 or is_cjk(w)} - page_words


def _notes_for(series_title: str, occs: list[Occurrence], notes: list, page_words: set[str]) -> list:
    """The notes sections dated on one of the series' days whose title shares a word with the
    series' (other than the page's own name; any, when the series' title is only that)."""
    days = {o.start.date() for o in occs}
    wanted = _words(series_title, page_words)
    return [
        n
        for n in notes
        if n.occurred_at.astimezone(UTC).date() in days
        and (not wanted or wanted & _words(n.title, page_words))
    ]


def _add_sources(section, extra: list) -> None:
    if hasattr(type(section), "source_list"):  # a model instance: `sources` is read from it
        section.source_list = [*section.source_list, *(s for n in extra for s in n.source_list)]
    else:
        section.sources = [*section.sources, *(s for n in extra for s in n.sources)]


def _series(sections: list) -> list[tuple[object, list, list[Occurrence]]]:
    """(the section that shows the series, all its sections given, its occurrences) for each
    series among the sections, per page (search hits span pages). A series' occurrences
    with readers of their own are sections of their own; the series' own group's section, if
    given, shows it."""
    groups: dict[tuple, list] = {}
    for section in sections:
        if key := series_key(section):
            groups.setdefault((getattr(section, "page_id", None), key), []).append(section)
    found = []
    for (_, key), group in groups.items():
        if occs := occurrences(*group):
            shown = min(group, key=lambda s: (s.container_key != key, s.occurred_at, s.id))
            found.append((shown, group, occs))
    return found


def _notes_text(notes: list) -> str:
    """The notes of a series' meetings as lines of their own under it, each dated by its
    meeting (the notes are of one of the series' days) and by its author, as the compiler
    wrote it: a reader of lines (the page summary, the context) dates a note's facts by
    the occurrence, not by the series' line. Their continuation lines are indented."""
    return "".join(
        "\n" + note.content.strip().replace("\n", "\n  ")
        for note in sorted(notes, key=lambda n: (n.occurred_at, n.id))
    )


def series_fold(
    sections: list, *, page_title: str = "", now: datetime | None = None, notes: bool = True
) -> list:
    """The sections with each recurring series as one line (and, with `notes`, the notes of
    its meetings under it), in the order given; the series' other sections (its occurrences
    with readers of their own) and the notes are taken out of the list. Pass only sections
    one reader may read: the line then tells no more than they may read. The objects are
    changed in place (content, occurred_at, sources): pass what was read for this rendering
    only."""
    now = now or datetime.now(UTC)
    series = _series(sections)
    if not series:
        return sections
    page_words = set(segment(page_title or ""))
    pool = [s for s in sections if (getattr(s, "container_key", "") or "").startswith(NOTES_PREFIX)]
    pool = pool if notes else []
    taken: set[int] = set()
    for section, group, occs in series:
        others = [s for s in group if s is not section]
        content = "\n".join(s.content for s in [section, *others])
        text, shown = series_text(section, occs, now=now, content=content)
        mine = [n for n in _notes_for(section.title, occs, pool, page_words) if id(n) not in taken]
        taken.update(id(s) for s in [*others, *mine])
        section.content, section.occurred_at = text + _notes_text(mine), shown
        if others or mine:
            _add_sources(section, [*others, *mine])
    return [s for s in sections if id(s) not in taken]
