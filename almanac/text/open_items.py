"""Open items: a sentence that says something is still to be done, waited for or decided
("待确认报价", "follow up with Globex", "still waiting on legal"). English and Chinese."""

from __future__ import annotations

import re

OPEN_ITEM = re.compile(
    # "open" before what is open: an open risk, question, point, issue, ticket, item…
    r"\b(?:todo|to-do|action items?|follow(?:[- ]up| up)|pending|open [a-z]+s?|still open|outstanding|unresolved|"
    r"still (?:need|needs|needed|waiting|open|to)|waiting (?:for|on)|blocked (?:on|by)|"
    r"not (?:yet )?(?:done|finished|decided|confirmed|signed|sent|answered))\b|"
    r"待办|待定|待确认|待跟进|待处理|待回复|待审批|跟进|尚未|未完成|还没(?:有)?(?:完成|确定|回复|收到|签|定|做|发)|"
    r"悬而未决|未决|未解决|待解决|未关闭|仍未|卡在|阻塞|等(?:待)?(?:对方|客户|法务|财务)?(?:回复|确认|审批)",
    re.IGNORECASE,
)


def is_open_item(sentence: str) -> bool:
    return bool(OPEN_ITEM.search(sentence or ""))
