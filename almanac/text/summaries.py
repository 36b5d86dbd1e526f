"""Does a summary still say what an original said (`summary_holds`): its key facts, nine
in ten of its words, and each sentence as negated as the summary's closest one. What
compression checks before an original is folded into a summary."""

from __future__ import annotations

from dataclasses import dataclass

from almanac.search.text import segment
from almanac.text.facts import fact_signature, is_negated, key_facts
from almanac.text.filler import without_reminder
from almanac.text.sentences import split_sentences

# Of the words of an original, the share a summary must still use (stemmed, stopwords
# left out): "allergic to peanuts, shellfish and sesame" is not held by "allergic to peanuts".
KEPT_WORDS_SHARE = 0.9


@dataclass(frozen=True)
class SummaryTerms:
    """What `summary_holds` looks things up in: every term of a summary (its words and its
    facts, spelt as `key_facts` spells them) and, per sentence, its words and whether it is
    negated."""

    terms: frozenset[str]
    sentences: tuple[tuple[frozenset[str], bool], ...]


def summary_terms(text: str) -> SummaryTerms:
    parts = []
    for sentence in split_sentences(text):
        tokens = segment(sentence)
        parts.append((frozenset(tokens), is_negated(sentence, tokens)))
    return SummaryTerms(terms=frozenset(segment(text)) | fact_signature(text)[0], sentences=tuple(parts))


def summary_holds(original: str, summary: SummaryTerms) -> bool:
    """Does a summary (its `summary_terms`) still say `original`: all its key facts (ids,
    amounts with their units, dates, names), nine in ten of its words, and each of its
    sentences as negated as the summary sentences closest to it ("does not eat pork" is not
    held by "eats pork")?"""
    original = without_reminder(original)
    if not key_facts(original) <= summary.terms:
        return False
    words = set(segment(original))
    if len(words & summary.terms) < KEPT_WORDS_SHARE * len(words):
        return False
    return all(_said_alike(sentence, summary) for sentence in split_sentences(original))


def _said_alike(sentence: str, summary: SummaryTerms) -> bool:
    """Is one of the summary sentences sharing most words with `sentence` negated as it is?"""
    words = segment(sentence)
    negated = is_negated(sentence, words)
    if not summary.sentences:
        return not negated
    overlap = [(len(summary_words.intersection(words)), neg) for summary_words, neg in summary.sentences]
    best = max(n for n, _ in overlap)
    return any(neg == negated for n, neg in overlap if n == best)
