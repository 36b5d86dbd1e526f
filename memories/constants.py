"""Vocabularies and fixed numbers of the memories app (what operators tune is in settings)."""

from __future__ import annotations

import re


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


# Replies that carry no fact (compared after lower-casing and stripping punctuation).
JUNK_PHRASES = _words(
    """你好 您好 大家好 谢谢 谢谢你 谢谢您 多谢 感谢 好的 好 好吧 行 可以 收到 嗯 嗯嗯 哦 哈哈 哈哈哈 再见 拜拜 没问题 明白 了解 知道了
    hi hello hey thanks thank thx ty ok okay k bye goodbye sure great cool yes no yep nope nice got it noted"""
)
JUNK_WORDS = _words(
    "hi hello hey thanks thank you thx ok okay bye goodbye sure great cool got it noted much so very a lot yes no "
    "please welcome good morning night"
)
MIN_FACT_CHARS = 5

# Nearest memories of the scope checked for a duplicate (the nearest may state another fact).
DEDUP_CANDIDATES = 3

# Quality (feedback): each signal multiplies it, kept within [QUALITY_MIN, QUALITY_MAX].
QUALITY_MIN = 0.2
QUALITY_MAX = 2.0
QUALITY_STEP = {"adopted": 1.15, "ignored": 0.9, "corrected": 0.75}

# First person plural only: "他们项目组", "华为的项目组" are someone else's team.
PROJECT_CUES_ZH = (
    "我们项目",
    "我们的项目",
    "咱们项目",
    "咱们的项目",
    "我们团队",
    "我们的团队",
    "咱们团队",
    "我们组",
    "我们小组",
)
PROJECT_CUES_EN = re.compile(r"\bour (project|team|squad)\b", re.I)
DEPT_CUES_ZH = ("我们部门", "我们的部门", "本部门", "咱们部门")
DEPT_CUES_EN = re.compile(r"\bour (department|dept|division)\b", re.I)
# The speaker about themselves ("I am pregnant", "我的绩效", "personally"), whatever team it
# mentions: their own, never shared with the team.
PERSONAL_CUES_ZH = re.compile(r"我(?!们)|个人认为|个人觉得")
PERSONAL_CUES_EN = re.compile(r"\b(i|i'm|i've|i'd|i'll|me|my|mine|myself|personally)\b", re.I)
