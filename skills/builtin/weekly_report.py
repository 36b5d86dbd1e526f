"""`weekly_report`: a user's week → highlights, decisions, open items and upcoming dates.

What it reads (`reads`) is never the caller's: `skills.acting` fills `memories` (the
memories the user may see, written or dated in the period) and `pages` (the wiki pages with
a section the user may see that changed in the period, `mine` where the user wrote in it)
through the user's access filter. Offline, by rules (`almanac.text`): an episodic memory is
a highlight, a page that changed is one too; a `decision` memory or a sentence the fact
extractor reads as a decision is a decision; a sentence that says something is still to do
(`almanac.text.open_items`) or a section about open work is an open item; a date after the
period's end is upcoming. With an LLM, the same items from the model, each citing the
memory or page it comes from (checked), with the period set by code.
"""

from __future__ import annotations

import datetime as dt
import json

from django.utils import timezone

from almanac.search.text import detect_lang
from almanac.text.dates import find_date, parse_iso
from almanac.text.open_items import is_open_item
from almanac.text.sentences import split_sentences
from skills.builtin.fact_extract import extract_offline
from skills.prompt_skill import DATA_RULE, delimit
from skills.registry import BaseSkill, register

DATE = {"type": "string", "format": "date", "pattern": r"^(?:19|20)\d{2}-\d{2}-\d{2}$"}
MAX_ITEMS = 20
MAX_HIGHLIGHTS = 10
_MEMORY = {
    "type": "object",
    "properties": {
        "id": {"type": "integer"},
        "text": {"type": "string", "maxLength": 20_000},
        "type": {"type": "string", "maxLength": 20},
        "kind": {"type": ["string", "null"], "maxLength": 20},
        "occurred_at": {"anyOf": [DATE, {"type": "null"}]},
        "created_at": {"type": "string", "maxLength": 40},
        "importance": {"type": "number"},
        "mine": {"type": "boolean"},
    },
    "required": ["id", "text"],
}
_SECTION = {
    "type": "object",
    "properties": {
        "title": {"type": "string", "maxLength": 500},
        "text": {"type": "string", "maxLength": 20_000},
        "occurred_at": {"type": ["string", "null"], "maxLength": 40},
        "open": {"type": ["boolean", "null"]},
        "mine": {"type": "boolean"},
    },
    "required": ["text"],
}
_PAGE = {
    "type": "object",
    "properties": {
        "slug": {"type": "string", "minLength": 1, "maxLength": 200},
        "title": {"type": "string", "maxLength": 300},
        "sections": {"type": "array", "items": _SECTION, "maxItems": 50},
    },
    "required": ["slug", "title"],
}
INPUT_SCHEMA = {
    "type": "object",
    "properties": {
        "days": {"type": "integer", "minimum": 1, "maximum": 31, "description": "period length (default 7)"},
        "until": {**DATE, "description": "the period's last day (default today)"},
        "lang": {"enum": ["zh", "en", None], "description": "language of an LLM's report"},
        "memories": {"type": "array", "items": _MEMORY, "maxItems": 1000},
        "pages": {"type": "array", "items": _PAGE, "maxItems": 200},
    },
    "additionalProperties": False,
}
_ITEM_PROPS = {
    "text": {"type": "string", "minLength": 1, "maxLength": 2000},
    "source": {"type": "string", "pattern": r"^(?:memory:\d+|page:\S+)$"},
}
_ITEM = {
    "type": "object",
    "properties": _ITEM_PROPS,
    "required": ["text", "source"],
    "additionalProperties": False,
}
_UPCOMING = {
    "type": "object",
    "properties": {"date": DATE, **_ITEM_PROPS},
    "required": ["date", "text", "source"],
    "additionalProperties": False,
}
OUTPUT_SCHEMA = {
    "type": "object",
    "properties": {
        "period": {
            "type": "object",
            "properties": {"start": DATE, "end": DATE},
            "required": ["start", "end"],
            "additionalProperties": False,
        },
        "highlights": {"type": "array", "items": _ITEM, "maxItems": MAX_ITEMS},
        "decisions": {"type": "array", "items": _ITEM, "maxItems": MAX_ITEMS},
        "open_items": {"type": "array", "items": _ITEM, "maxItems": MAX_ITEMS},
        "upcoming": {"type": "array", "items": _UPCOMING, "maxItems": MAX_ITEMS},
    },
    "required": ["period", "highlights", "decisions", "open_items", "upcoming"],
    "additionalProperties": False,
}
LISTS = ("highlights", "decisions", "open_items", "upcoming")

PROMPT = """You write a person's weekly report from their memories and the wiki pages that
changed, for {start} to {end}. Use only the items given; never invent. Each item you write
cites where it comes from in "source": "memory:<id>" or "page:<slug>" of that item.
- highlights: what happened or was done in the period, most important first (at most 10)
- decisions: what was decided or agreed
- open_items: what is still to be done, waited for or decided
- upcoming: dated things after {end}, with "date" as YYYY-MM-DD
Write the texts in {lang}, short and self-contained. Reply with JSON only:
{{"highlights": [{{"text": "...", "source": "..."}}], "decisions": [...], "open_items": [...],
"upcoming": [{{"date": "YYYY-MM-DD", "text": "...", "source": "..."}}]}}"""


MEMORY_CHARS = 8000
HEADINGS = {
    "zh": ("周报 {start} 至 {end}", "要点", "决定", "待办", "即将到来", "（无）"),
    "en": ("Weekly report {start} to {end}", "Highlights", "Decisions", "Open items", "Upcoming", "(none)"),
}


def report_text(output: dict) -> str:
    """The report as text, in the language its items are written in."""
    texts = " ".join(item["text"] for name in LISTS for item in output[name])
    title, *names, none = HEADINGS[detect_lang(texts)]
    lines = [title.format(**output["period"])]
    for heading, name in zip(names, LISTS, strict=True):
        items = [f"{i['date']} {i['text']}" if name == "upcoming" else i["text"] for i in output[name]]
        lines.append(f"{heading}: " + ("; ".join(items) if items else none))
    return "\n".join(lines)


def period(input: dict) -> tuple[dt.date, dt.date]:
    """(first day, last day) of the report: `days` days up to `until` (default today)."""
    end = parse_iso(input.get("until")) or timezone.localdate()
    return end - dt.timedelta(days=int(input.get("days") or 7) - 1), end


def sources(input: dict) -> set[str]:
    return {f"memory:{m['id']}" for m in input.get("memories", [])} | {
        f"page:{p['slug']}" for p in input.get("pages", [])
    }


class _Report:
    def __init__(self, start: dt.date, end: dt.date):
        self.start, self.end = start, end
        self.lists: dict[str, list[dict]] = {name: [] for name in LISTS}
        self.seen: set[tuple[str, str]] = set()

    def add(self, name: str, text: str, source: str, **extra) -> None:
        text = " ".join(text.split())[:2000]
        if not text or (name, text.lower()) in self.seen:
            return
        self.seen.add((name, text.lower()))
        self.lists[name].append({**extra, "text": text, "source": source})

    def read(self, text: str, source: str, base: dt.date) -> None:
        """Open items and upcoming dates in `text`, sentence by sentence."""
        for sentence in split_sentences(text):
            when = find_date(sentence, base)
            if when is not None and when > self.end:
                self.add("upcoming", sentence, source, date=when.isoformat())
            if is_open_item(sentence):
                self.add("open_items", sentence, source)

    def decisions(self, text: str, source: str, base: dt.date) -> None:
        for fact in extract_offline(text, base):
            if fact["type"] == "decision":
                self.add("decisions", fact["text"], source)

    def output(self) -> dict:
        lists = {name: items[:MAX_ITEMS] for name, items in self.lists.items()}
        lists["highlights"] = lists["highlights"][:MAX_HIGHLIGHTS]
        lists["upcoming"] = sorted(lists["upcoming"], key=lambda item: item["date"])
        return {"period": {"start": self.start.isoformat(), "end": self.end.isoformat()}, **lists}


def _day(value, default: dt.date) -> dt.date:
    return parse_iso(str(value or "")[:10]) or default


def _memories(report: _Report, memories: list[dict]) -> None:
    ranked = sorted(memories, key=lambda m: (-float(m.get("importance") or 0.5), -m["id"]))
    for memory in ranked:
        source = f"memory:{memory['id']}"
        base = _day(memory.get("occurred_at"), _day(memory.get("created_at"), report.end))
        if memory.get("kind") == "decision":
            report.add("decisions", memory["text"], source)
        else:
            report.decisions(memory["text"], source, base)
        if memory.get("type") == "episodic" and base <= report.end:
            report.add("highlights", memory["text"], source)
        elif memory.get("type") == "episodic":
            report.add("upcoming", memory["text"], source, date=base.isoformat())
        report.read(memory["text"], source, base)


def _pages(report: _Report, pages: list[dict]) -> None:
    for page in pages:
        source = f"page:{page['slug']}"
        sections = page.get("sections", [])
        titles = [s["title"] for s in sections if s.get("title")]
        report.add("highlights", f"{page['title']}: {'; '.join(titles)}" if titles else page["title"], source)
        for section in sections:
            base = _day(section.get("occurred_at"), report.end)
            if section.get("open"):
                report.add(
                    "open_items", f"{page['title']}: {section.get('title') or section['text'][:200]}", source
                )
            report.decisions(section["text"], source, base)
            report.read(section["text"], source, base)


@register
class WeeklyReport(BaseSkill):
    name = "weekly_report"
    version = "1.0"
    description = (
        "A user's last 7 days (memories they may see, wiki pages that changed in their scopes) → "
        "highlights, decisions, open items and upcoming dates. Reads for the acting user only."
    )
    input_schema = INPUT_SCHEMA
    output_schema = OUTPUT_SCHEMA
    reads = {"memories": "memories", "pages": "pages"}
    schedule_days = 7
    max_output_tokens = 3000

    def reading(self, input: dict) -> dict:
        start, end = period(input)
        zone = timezone.get_current_timezone()
        since = dt.datetime.combine(start, dt.time.min, tzinfo=zone)
        return {
            "since": since,
            "until": dt.datetime.combine(end + dt.timedelta(days=1), dt.time.min, tzinfo=zone),
        }

    def messages(self, input: dict) -> list[dict]:
        start, end = period(input)
        texts = " ".join(m["text"] for m in input.get("memories", [])[:50])
        lang = input.get("lang") or detect_lang(texts)
        system = PROMPT.format(start=start, end=end, lang="Chinese" if lang == "zh" else "English")
        data = {k: input.get(k, []) for k in ("memories", "pages")}
        return [
            {"role": "system", "content": f"{system}\n\n{DATA_RULE}"},
            {"role": "user", "content": delimit(data)},
        ]

    def normalize(self, input: dict, data):
        if not isinstance(data, dict):
            return data
        start, end = period(input)
        out = {"period": {"start": start.isoformat(), "end": end.isoformat()}}
        for name in LISTS:
            items = data.get(name) or []
            out[name] = (
                items[: MAX_HIGHLIGHTS if name == "highlights" else MAX_ITEMS]
                if isinstance(items, list)
                else items
            )
        return out

    def check(self, input: dict, output: dict) -> str | None:
        known = sources(input)
        end = output["period"]["end"]
        for name in LISTS:
            for item in output[name]:
                if item["source"] not in known:
                    return f"{name}: source {item['source']!r} is none of the given items ({json.dumps(sorted(known)[:20])})"
        late = [item["date"] for item in output["upcoming"] if item["date"] <= end]
        return f"upcoming: {late[0]} is not after {end}" if late else None

    def memory_of(self, output) -> dict:
        """The report as an episodic memory of its user, dated its last day."""
        return {
            "content": report_text(output)[:MEMORY_CHARS],
            "memory_type": "episodic",
            "kind": "summary",
            "occurred_at": parse_iso(output["period"]["end"]),
            "meta": {
                "source": "skill",
                "skill": self.name,
                "run_id": getattr(output, "run_id", None),
                "method": "llm" if getattr(output, "used_llm", False) else "offline",
                "period": output["period"],
            },
        }

    def run_offline(self, input: dict) -> dict:
        report = _Report(*period(input))
        _memories(report, input.get("memories", []))
        _pages(report, input.get("pages", []))
        return report.output()
