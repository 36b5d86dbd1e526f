"""The plain data the context pipeline passes around (no ORM objects past selection)."""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from datetime import date, datetime

from context.labels import source_labels


@dataclass
class Item:
    """One candidate for the prompt: a wiki page, a memory, or a working-window turn.

    `text` is the full body; the budget fitter may replace it with a summary and set
    `summarized`. `refs` records what the item consumed, for the second-pass cursor
    (page id and section ids, or a memory id).
    """

    kind: str  # wiki | semantic | episodic | working
    id: str
    title: str
    text: str
    score: float = 0.0
    updated_at: datetime | None = None
    occurred_at: date | datetime | None = None  # wiki: when its newest section shown was said
    status: str = ""  # wiki: "open — 2 open issues, 1 open PR" as the reader sees it
    sources: list[dict] = field(default_factory=list)
    summarized: bool = False
    role: str = ""  # working turns: user / assistant / tool / summary
    digest: str = ""  # wiki: digest of the visible sections (summary cache key)
    refs: dict = field(default_factory=dict)
    # wiki: (text key, rendering) of each section the text is made of, so the fitter can
    # print a thread that several pages hold once (budget.print_once)
    parts: list[tuple[str | None, str]] = field(default_factory=list)
    # why selection chose it: "entity" (the task names it), "keyword" or "similarity" (how
    # its best relevant hit was found); only the web preview shows it
    reason: str = ""
    # wiki: the task names or describes this page's entity: it holds the answer more often
    # than a page the task's words hit, and weighs more when pages share the budget
    # (budget.water_fill); its title names a candidate, so it is never dropped as a repeat
    about_task: bool = False

    @functools.cached_property
    def source_labels(self) -> list[str]:
        """The sources as prompt labels (computed once: the fitter renders an item many times)."""
        return source_labels(self.sources)

    @property
    def label(self) -> str:
        """How a warning names this item: the page title, or the kind and id."""
        if self.kind == "wiki":
            return self.title or self.id
        return f"{self.kind} {self.id}"


@dataclass
class Fit:
    """What the budget fitter decided."""

    prompt: str
    used: int
    chosen: dict[str, list[Item]]
    block_tokens: dict[str, int]
    summarized: list[Item] = field(default_factory=list)
    left_out: list[Item] = field(default_factory=list)
