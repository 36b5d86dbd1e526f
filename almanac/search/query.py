"""The forms a query is searched in.

An agent's query is often a whole dialogue (the turns before the one it must answer) or a
long task. Searched whole, its latest turn — what the next answer is about — weighs no
more than small talk ten turns earlier, and the keyword lane reads only its first terms.
`query_forms` returns the text itself and, for a dialogue or a long text, its latest turn:
the lanes run on each form and everything is fused together.
"""

from __future__ import annotations

from collections.abc import Callable

from almanac.search.text import NON_USER_ROLES, ROLE_PREFIX

# A text at least this long (characters), or one of at least two speaker turns, also gets
# its latest turn searched on its own.
LONG_QUERY_CHARS = 300
# The latest turn is widened with the turns before it up to this many characters: a short
# "and how about that?" needs what it refers to.
LATEST_MIN_CHARS = 40
# Each form is searched (and embedded) at most this long: the same text for the memory
# recall and the wiki search of one context call, so the encoder runs once for both.
MAX_QUERY_CHARS = 4000


def turns(text: str) -> list[tuple[str, str]]:
    """(role, text) of each non-empty line; role is "" for a line with no speaker label."""
    out = []
    for line in text.splitlines():
        line = line.strip()
        if not line:
            continue
        match = ROLE_PREFIX.match(line)
        role = match.group("role").lower() if match else ""
        out.append((role, line[match.end() :].strip() if match else line))
    return [(role, said) for role, said in out if said]


def conversational(text: str) -> bool:
    """A dialogue (two speaker turns or more) or a long text: what gets its latest turn
    searched apart, and rewritten standalone when an LLM is configured."""
    return sum(1 for role, _ in turns(text) if role) >= 2 or len(text) >= LONG_QUERY_CHARS


def latest_turn(text: str) -> str | None:
    """The last thing the user said (with what came just before when it is short), or None
    for a text that is neither a dialogue nor long."""
    if not conversational(text):
        return None
    lines = turns(text)
    users = [i for i, (role, _) in enumerate(lines) if role not in NON_USER_ROLES]
    if not users:
        return None
    end = users[-1]
    start = end
    while start > 0 and sum(len(said) for _, said in lines[start : end + 1]) < LATEST_MIN_CHARS:
        start -= 1
    latest = " ".join(said for _, said in lines[start : end + 1])
    # Nothing apart to search when the latest turn is the whole text (labels aside).
    return latest if latest != " ".join(said for _, said in lines) else None


def query_forms(text: str, rewrite: Callable[[str], str | None] | None = None) -> list[str]:
    """The query itself, then its latest turn when it has one worth searching apart, each
    stripped and cut at MAX_QUERY_CHARS (the latest turn is taken from the whole text, so a
    long dialogue keeps its end); none for a blank query. `rewrite` (the LLM's standalone
    form of the latest turn, or None) adds one more form when it gives a new text."""
    text = (text or "").strip()
    if not text:
        return []
    latest = latest_turn(text)
    lines = turns(text)
    # A dialogue is searched without its speaker labels: "用户：" / "Assistant:" on every
    # line are words of every query and no part of what it is about.
    whole = "\n".join(said for _, said in lines) if any(role for role, _ in lines) else text
    forms = [whole[:MAX_QUERY_CHARS].strip()]
    if latest and latest[:MAX_QUERY_CHARS] != forms[0]:
        forms.append(latest[:MAX_QUERY_CHARS].strip())
    standalone = rewrite(text) if rewrite is not None and conversational(text) else None
    if standalone and standalone[:MAX_QUERY_CHARS].strip() not in forms:
        forms.append(standalone[:MAX_QUERY_CHARS].strip())
    return forms
