"""Template filters of the employee web UI: safe links, translated enum labels, lists in
the reader's language, marked passages and rendered Markdown."""

from __future__ import annotations

from urllib.parse import urlsplit

import nh3
from django import template
from django.utils.html import escape, format_html
from django.utils.safestring import mark_safe
from django.utils.translation import gettext_lazy as _
from django.utils.translation import pgettext
from markdown_it import MarkdownIt

from almanac.text.passages import Passage

register = template.Library()

# Stored values (model choices, source states, warning codes) as readers see them. The
# models keep their plain values: the API returns those, and changing choices would need a
# migration for a label.
LABELS = {
    "kind": {
        "customer": _("customer"),
        "project": _("project"),
        "person": _("person"),
        "topic": _("topic"),
    },
    "page_status": {
        "active": _("active"),
        "open": _("open"),
        "closed": _("closed"),
    },
    # what kind of thing a memory holds, in an employee's words (not semantic / episodic)
    "memory_type": {
        "working": _("a working note"),
        "episodic": _("an event"),
        "semantic": _("a fact or preference"),
    },
    "scope": {
        "user": _("personal"),
        "dept": _("department"),
        "project": _("project"),
        "tenant": _("company"),
    },
    # why the context call chose an item (context.selection: page_reasons, memory_reason)
    "reason": {
        "entity": _("the task names it"),
        "keyword": _("matches the task's words"),
        "similarity": _("close in meaning to the task"),
    },
    "block": {
        "wiki": _("Wiki pages"),
        "semantic": _("Facts and preferences"),
        "episodic": _("Past events"),
        "working": _("This session"),
    },
    "freshness": {
        "ok": _("up to date"),
        "backoff": _("retrying"),
        "error": _("failing"),
        "never": _("never synced"),
    },
}


@register.filter
def label(value, group: str):
    """`{{ page.kind|label:"kind" }}`: the translated label, or the value itself if unknown."""
    return LABELS.get(group, {}).get(value, value)


@register.simple_tag
def list_separator() -> str:
    """What goes between the names of a list in the reader's language: "、" in Chinese,
    ", " in English (the catalogue says it, as it says any other word)."""
    return pgettext("between the names of a list", ", ")


@register.filter
def listing(items) -> str:
    """`{{ labels|listing }}`: the names joined with the language's list separator (each
    escaped by the template, as any text)."""
    return list_separator().join(str(item) for item in items or [])


@register.filter
def safe_url(value) -> str:
    """The URL if it is an absolute http(s) link, else "" (a source URL comes from connector
    input; `javascript:` or `data:` in an href would run in the reader's session)."""
    url = str(value or "").strip()
    try:
        parts = urlsplit(url)
    except ValueError:
        return ""
    if parts.scheme.lower() not in {"http", "https"} or not parts.netloc:
        return ""
    return url


@register.filter
def source_groups(sources) -> list[dict]:
    """Sources as a reader lists them: each source (and container, when named) once, in
    order, with how many of its messages there are and their safe links ("slack #sales (3)"
    rather than "slack #sales, slack #sales, slack #sales")."""
    groups: dict[tuple[str, str], dict] = {}
    for src in sources or []:
        key = (str(src.get("source") or ""), str(src.get("name") or ""))
        group = groups.setdefault(key, {"source": key[0], "name": key[1], "count": 0, "urls": []})
        group["count"] += 1
        url = safe_url(src.get("url"))
        if url and url not in group["urls"]:
            group["urls"].append(url)
    return list(groups.values())


@register.filter
def highlight(passage: Passage | None) -> str:
    """A passage with the query's words in `<mark>`: each piece is escaped first, then the
    marked ones wrapped (a section's text is connector input); "…" where the text goes on."""
    if passage is None:
        return ""
    pieces = [
        format_html("<mark>{}</mark>", text) if marked else escape(text) for text, marked in passage.pieces()
    ]
    return mark_safe(("…" if passage.before else "") + "".join(pieces) + ("…" if passage.after else ""))


# Markdown as people write it in messages and notes: CommonMark with tables, a newline kept
# as a line break (one message a line), raw HTML shown as text. No images: a remote image
# in a section would be fetched by every reader's browser.
_MARKDOWN = MarkdownIt("commonmark", {"breaks": True, "html": False}).enable(["table", "strikethrough"])
_MARKDOWN.disable("image")
MARKDOWN_TAGS = {
    "p", "br", "strong", "em", "s", "del", "code", "pre", "blockquote", "ul", "ol", "li", "a", "hr",
    "h1", "h2", "h3", "h4", "h5", "h6", "table", "thead", "tbody", "tr", "th", "td",
}  # fmt: skip


@register.filter
def markdown(text) -> str:
    """A section's text as sanitised HTML: rendered, then cleaned to `MARKDOWN_TAGS` with
    http(s) and mailto links only (a section's text is connector input)."""
    html = _MARKDOWN.render(str(text or ""))
    clean = nh3.clean(
        html,
        tags=MARKDOWN_TAGS,
        attributes={"a": {"href", "title"}, "ol": {"start"}, "th": {"align"}, "td": {"align"}},
        url_schemes={"http", "https", "mailto"},
        link_rel="noopener noreferrer nofollow",
    )
    return mark_safe(clean)
