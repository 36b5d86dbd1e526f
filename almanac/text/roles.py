"""Who owns, leads or runs something, as a text says it: the one reader of owners, in
English and Chinese.

Two ways of saying it, told apart because a wrong owner hides the right one:

- the text names what is owned, at its start ("Apollo's owner is Bob", "Bob leads the
  Apollo pilot", "Apollo由张三负责", "张三负责Apollo"): a memory's claim is of that thing;
- the text names no thing, only the role, anywhere in it ("owner: Maria Lopez", "account
  manager is now dana@acme.com", "Dana takes over", "改由王伟负责"): it is the owner of
  what the text is filed under (a customer's page).

`owner(text, named=True)` reads the first, `owner(text, named=False)` the second. The page
does not read the first kind: "Bob leads the pilot" on a customer's page would replace its
account owner. A memory does not read the second: an owner of nothing said is no claim.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_NAME = r"[A-Z][\w.'-]*(?:\s[A-Z][\w.'-]*)?"
_ZH_NAME = r"[^，,。；;：:\s的]{2,10}?"
_ZH_STOP = r"(?=[，,。；;！!？?\s]|$)"
_IS = r"(?:is|is now|now is|has become|changed to|became|will be)"

# Each with a `subj` (the thing owned) and a `who` group.
_NAMED = [
    re.compile(rf"^(?P<subj>.+?)的?(?:负责人|对接人|主管|牵头人|owner)(?:是|为|改为|换成|变成|变为|调整为|现在是|：|:)\s*(?P<who>{_ZH_NAME}){_ZH_STOP}"),
    re.compile(rf"^(?P<subj>.+?)(?:改|现在|今后|以后|目前)?由(?P<who>{_ZH_NAME})(?:来)?负责"),
    re.compile(r"^(?P<who>[^，,。；;\s]{2,4}?)(?:现在|目前|开始|来)?负责(?P<subj>[^，,。；;]+)$"),
    re.compile(rf"^(?:the\s+)?(?:owner|lead|manager|point of contact) (?:of|for) (?P<subj>.+?) {_IS} (?P<who>{_NAME})", re.I),
    re.compile(rf"^(?P<subj>.+?)(?:'s)? (?:owner|lead|manager|point of contact) {_IS} (?P<who>{_NAME})"),
    re.compile(rf"^(?P<subj>.+?) is (?:now )?(?:owned|led|run|handled|managed) by (?P<who>{_NAME})"),
    re.compile(rf"^(?P<who>{_NAME}) (?:now )?(?:owns|leads|runs|manages|is responsible for|is in charge of) (?P<subj>.+)"),
]  # fmt: skip
# Each with a `who` group only: the thing owned is the one the text is filed under.
_UNNAMED = [
    re.compile(
        r"(?i:owner|account (?:owner|manager)|point of contact|\bPOC|\blead|负责人|对接人)\s*"
        r"(?i:is now|is|:|：|changed to|moves to|→|现在是|改为|换成|变更为|是|为)\s*"
        r"(?P<who>[A-Z][\w.-]*(?: [A-Z][\w.-]*)?|[\w.+-]+@[\w.-]+\w|[\u4e00-\u9fff]{2,3})",
    ),
    re.compile(
        r"(?P<who>[A-Z][a-z]+(?: [A-Z][a-z]+)?) (?:now owns|will own|owns|takes over|is taking over)\b"
    ),
    re.compile(r"(?:改由|由|交给)(?P<who>[\u4e00-\u9fff]{2,3})(?:来)?(?:负责|接手|跟进)"),
]


@dataclass(frozen=True)
class Owner:
    """`who` as written; `subject`: the thing owned as written, "" when the text names none."""

    who: str
    subject: str = ""


def owner(text: str, *, named: bool) -> Owner | None:
    """The owner `text` states (the first way of saying it that matches), with the thing
    owned when `named`; None when it states none."""
    for pattern in _NAMED if named else _UNNAMED:
        match = pattern.search(text)
        if match:
            subject = match.group("subj").strip(" ，,:：") if named else ""
            return Owner(who=match.group("who").strip(), subject=subject)
    return None
