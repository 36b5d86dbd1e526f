"""Prompt assembly: neutral labelled blocks, no persona prefix (docs/design.md, Context).

The fitter measures exactly these strings, so any change to the layout here is covered
by the budget guarantee automatically.
"""

from __future__ import annotations

import re
import unicodedata

from context.items import Item
from context.labels import day, single_line

LABELS = {
    "zh": {
        "wiki": "[公司知识]",
        "semantic": "[长期记忆]",
        "episodic": "[相关历史事件]",
        "working": "[当前会话]",
    },
    "en": {
        "wiki": "[Company knowledge]",
        "semantic": "[Long-term memory]",
        "episodic": "[Related past events]",
        "working": "[Current session]",
    },
}
SOURCES_LABEL = {"zh": ("（来源：", "；", "）"), "en": (" (sources: ", "; ", ")")}
ROLE_LABELS = {
    "zh": {"user": "用户", "assistant": "助手", "tool": "工具", "summary": "此前摘要"},
    "en": {"user": "user", "assistant": "assistant", "tool": "tool", "summary": "earlier summary"},
}
BLOCK_SEPARATOR = "\n\n"


def sources_suffix(labels: list[str], lang: str, limit: int = 4) -> str:
    if not labels:
        return ""
    opening, joiner, closing = SOURCES_LABEL[lang]
    more = len(labels) - limit
    shown = labels[:limit] + ([f"+{more}"] if more > 0 else [])
    return opening + joiner.join(shown) + closing


# What opens a block or a page in the prompt. Stored text (a Slack message, an e-mail) is
# anyone's: a line of it that looks like one of these would read as a block of its own (a
# stranger's message as the user's "[Long-term memory]"), so it is escaped with a backslash.
_MARKERS = ("#", *sorted({label for labels in LABELS.values() for label in labels.values()}))


# Whatever a reader (or a model's tokenizer) may take for a line break becomes one, so no
# line hides behind a CR, a form feed or U+2028; invisible characters do not shield a marker.
_LINE_BREAKS = re.compile("\r\n|[\r\v\f\x1c\x1d\x1e\x85\u2028\u2029]")
_INVISIBLE = "\u200b\u200c\u200d\u200e\u200f\u2060\ufeff\u00ad"


def inert(text: str) -> str:
    """`text` with every line that would read as a block label or a page header escaped
    (also in fullwidth forms: "＃", "［Long-term memory］")."""
    lines = _LINE_BREAKS.sub("\n", text).split("\n")
    for i, line in enumerate(lines):
        bare = line.lstrip(" \t" + _INVISIBLE)
        if unicodedata.normalize("NFKC", bare[:64]).lstrip().startswith(_MARKERS):
            lines[i] = "\\" + bare
    return "\n".join(lines)


def render_item(item: Item, lang: str) -> str:
    if item.kind == "wiki":
        return wiki_header(item, lang) + inert(item.text.strip())
    if item.kind == "episodic":
        when = day(item.occurred_at or item.updated_at)
        return f"- {when} {single_line(item.text)}".rstrip() if when else f"- {single_line(item.text)}"
    if item.kind == "working":
        role = ROLE_LABELS[lang].get(item.role, item.role or "note")
        return f"{role}: {single_line(item.text)}"
    return f"- {single_line(item.text)}"


# A summarized page names its two newest sources and how many more: its header must not eat
# the budget its summary was cut to (four long labels cost ~90 tokens).
SUMMARY_SOURCE_LABELS = 2


STATUS_LABEL = {"zh": ("（状态：", "）"), "en": (" (status: ", ")")}
AS_OF_LABEL = {"zh": ("（最新：", "）"), "en": (" (latest: ", ")")}


def wiki_header(item: Item, lang: str, *, compact: bool | None = None) -> str:
    """A page's header: its title, its status as the reader sees it, its content time (when
    its newest section shown was said) and its sources, e.g.
    `## Orion (status: open — 2 open issues, 1 open PR) (latest: 2026-11-30) (sources: …)`."""
    compact = item.summarized if compact is None else compact
    limit = SUMMARY_SOURCE_LABELS if compact else 4
    status = (
        f"{STATUS_LABEL[lang][0]}{single_line(item.status)}{STATUS_LABEL[lang][1]}" if item.status else ""
    )
    when = day(item.occurred_at)
    latest = f"{AS_OF_LABEL[lang][0]}{when}{AS_OF_LABEL[lang][1]}" if when else ""
    sources = sources_suffix(item.source_labels, lang, limit=limit)
    return f"## {single_line(item.title)}{status}{latest}{sources}\n"


def render_block(kind: str, items: list[Item], lang: str) -> str:
    if not items:
        return ""
    joiner = "\n\n" if kind == "wiki" else "\n"
    return LABELS[lang][kind] + "\n" + joiner.join(render_item(item, lang) for item in items)


def assemble(blocks: list[str]) -> str:
    return BLOCK_SEPARATOR.join(b for b in blocks if b)
