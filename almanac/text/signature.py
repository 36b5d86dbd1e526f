"""A person's role as their e-mail signature states it, read without an LLM: on the line of
their name after a separator ("Lena Berg | Head of Procurement", "王芳，采购经理") or on the
line below it ("Lena Berg" then "Head of Procurement, Globex"). Conservative: a line that
reads like a sentence, an address or a phone number is no role.
"""

from __future__ import annotations

import re

_AFTER_NAME = re.compile(r"^\s*[|,，/–—-]\s*(?P<role>.+)$")
_NOT_A_ROLE = re.compile(r"@|https?://|www\.|[.!?。！？:：]$|\d{3,}")


def _role_like(text: str) -> bool:
    text = text.strip()
    return 1 < len(text) <= 60 and len(text.split()) <= 8 and not _NOT_A_ROLE.search(text)


def signature_role(text: str, name: str) -> str:
    """The role stated next to `name` in `text` (an e-mail's body); "" when none is."""
    name = (name or "").strip()
    if not name or "@" in name:
        return ""
    lines = [line.strip() for line in (text or "").splitlines()]
    for i, line in enumerate(lines):
        if not line.casefold().startswith(name.casefold()):
            continue
        rest = line[len(name) :]
        match = _AFTER_NAME.match(rest)
        if match:
            candidate = match.group("role")
        elif rest.strip():
            continue  # the name begins a sentence
        else:
            candidate = next((later for later in lines[i + 1 :] if later), "")
        if _role_like(candidate):
            return candidate.strip()
    return ""
