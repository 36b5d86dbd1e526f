"""Who owns, leads, runs, is the contact for, signs or approves something, as a text says
it: the one reader of people in a role, in English and Chinese.

The role is kept (`Owner.role`): "owner" (owner, lead, manager, 负责人, 主管, 牵头人, "由X负责"),
"contact" (point of contact, contact, 对接人, 联系人), "signer" (signer, signatory, "signed by",
签字人, 签约人) and "approver" (approver, "approved by", 审批人, 批准人). Two people in different
roles are two facts: the customer's contact is not our owner, and neither replaces the other.

Two ways of saying it, told apart because a wrong owner hides the right one:

- the text names what is owned, at its start ("Apollo's owner is Bob", "Bob leads the
  Apollo pilot", "Apollo由张三负责", "张三负责Apollo"): a memory's claim is of that thing;
- the text names no thing, only the role, anywhere in it ("owner: Maria Lopez", "account
  manager is now dana@acme.com", "Dana takes over", "改由王伟负责", "对接人是周凯"): it is the
  person in that role for what the text is filed under (a customer's page).

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
# The words that name each role; the first role whose words a match's `role` group holds is its role.
_ROLE_WORDS = [
    ("contact", r"point of contact|\bPOC\b|contact|对接人|联系人"),
    ("signer", r"signer|signatory|sign|签字人|签约人|签署人|签字|签署"),
    ("approver", r"approver|approv|审批人|批准人|审批|批准"),
]
_ROLE_RES = [(role, re.compile(words, re.I)) for role, words in _ROLE_WORDS]

# Each with a `subj` (the thing owned) and a `who` group.
_NAMED = [
    re.compile(rf"^(?P<subj>.+?)的?(?P<role>负责人|对接人|联系人|主管|牵头人|审批人|签字人|owner)(?:是|为|改为|换成|变成|变为|调整为|现在是|：|:)\s*(?P<who>{_ZH_NAME}){_ZH_STOP}"),
    re.compile(rf"^(?P<subj>.+?)(?:改|现在|今后|以后|目前)?由(?P<who>{_ZH_NAME})(?:来)?负责"),
    re.compile(r"^(?P<who>[^，,。；;\s]{2,4}?)(?:现在|目前|开始|来)?负责(?P<subj>[^，,。；;]+)$"),
    re.compile(rf"^(?:the\s+)?(?P<role>owner|lead|manager|point of contact|contact|approver|signer) (?:of|for) (?P<subj>.+?) {_IS} (?P<who>{_NAME})", re.I),
    re.compile(rf"^(?P<subj>.+?)(?:'s)? (?P<role>owner|lead|manager|point of contact|contact|approver|signer) {_IS} (?P<who>{_NAME})"),
    re.compile(rf"^(?P<subj>.+?) is (?:now )?(?:owned|led|run|handled|managed) by (?P<who>{_NAME})"),
    re.compile(rf"^(?P<who>{_NAME}) (?:now )?(?:owns|leads|runs|manages|is responsible for|is in charge of) (?P<subj>.+)"),
]  # fmt: skip
# Each with a `who` group only: the thing owned is the one the text is filed under.
_UNNAMED = [
    re.compile(
        r"(?P<role>(?i:owner|account (?:owner|manager)|point of contact|\bPOC|(?<![\w-])contact(?: person)?|"
        r"\blead|signer|signatory|approver)|负责人|对接人|联系人|签字人|签约人|签署人|审批人|批准人)\s*"
        r"(?i:is now|is|:|：|changed to|moves to|→|现在是|改为|换成|变更为|是|为)\s*"
        r"(?P<who>[A-Z][\w.-]*(?: [A-Z][\w.-]*)?|[\w.+-]+@[\w.-]+\w|[\u4e00-\u9fff]{2,3})",
    ),
    re.compile(  # a Chinese name in an English sentence too ("黄艳 now owns Globex")
        r"(?P<who>[A-Z][a-z]+(?: [A-Z][a-z]+)?|(?<![\u4e00-\u9fff])[\u4e00-\u9fff]{2,3}) "
        r"(?:now owns|will own|owns|takes over|is taking over)\b"
    ),
    re.compile(r"(?:改由|由|交给)(?P<who>[\u4e00-\u9fff]{2,3})(?:来)?(?:负责|接手|跟进)"),
    re.compile(r"\b(?P<role>(?:counter)?signed|approved) by (?P<who>[A-Z][a-z]+(?: [A-Z][a-z]+)?)"),
    re.compile(r"由(?P<who>[\u4e00-\u9fff]{2,3})(?P<role>签字|签署|审批|批准)"),
]


@dataclass(frozen=True)
class Owner:
    """`who` as written; `subject`: the thing owned as written, "" when the text names none;
    `role`: owner, contact, signer or approver."""

    who: str
    subject: str = ""
    role: str = "owner"


def _role(words: str) -> str:
    return next((role for role, cue in _ROLE_RES if cue.search(words)), "owner")


def owner(text: str, *, named: bool) -> Owner | None:
    """The person in a role `text` states (the first way of saying it that matches), with the
    thing owned when `named`; None when it states none."""
    for pattern in _NAMED if named else _UNNAMED:
        match = pattern.search(text)
        if match:
            subject = match.group("subj").strip(" ，,:：") if named else ""
            role = _role(match.group("role") or "") if "role" in pattern.groupindex else "owner"
            return Owner(who=match.group("who").strip(), subject=subject, role=role)
    return None
