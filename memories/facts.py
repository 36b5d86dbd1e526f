"""What a memory's text says, read without the database: `skills.builtin.facts`, where the
extractor (`fact_extract`) reads it too. Memories' modules name it from here."""

from skills.builtin.facts import (
    CALENDAR_WORDS,
    KEPT_WORDS_SHARE,
    NEGATION_WORDS_ZH,
    NUMBER_WITH_UNIT,
    ZH_RELATIVE_DATE,
    SummaryTerms,
    codes,
    fact_signature,
    is_negated,
    key_facts,
    name_tokens,
    number_roles,
    reordered,
    same_facts,
    sentences,
    summary_holds,
    summary_terms,
    without_reminder,
)

__all__ = [
    "KEPT_WORDS_SHARE",
    "CALENDAR_WORDS",
    "NEGATION_WORDS_ZH",
    "NUMBER_WITH_UNIT",
    "ZH_RELATIVE_DATE",
    "SummaryTerms",
    "codes",
    "fact_signature",
    "is_negated",
    "key_facts",
    "name_tokens",
    "number_roles",
    "reordered",
    "same_facts",
    "sentences",
    "summary_holds",
    "summary_terms",
    "without_reminder",
]
