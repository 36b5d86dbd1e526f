"""Topics (docs/design.md, Memories): the groups compression takes on, and the summary that says one.

A topic is a group of active semantic memories of one scope (one acl key, so the summary
is visible to exactly the readers of its originals; a user's private scope is theirs
alone) about one thing: the memories naming one entity or key subject, else sharing one
content word (`memories.topics.topic_terms`), the most specific such name first; then
smaller word groups whose centroids are close (one subject in several words: 报销, 发票,
差旅); then those whose embeddings are close to a topic join it, and the rest group by
embedding (each joins the first topic whose centroid it is at least MEMORY_TOPIC_SIMILARITY to).
A topic with more than MEMORY_COMPRESS_MIN members is cut into groups that fit one summary
of MEMORY_COMPRESS_MAX_TOKENS (`summary_groups`); the summary of a group (`summary_for`)
is the LLM's (`compress` skill), checked for coverage, else the structured one
(`memories.topics.structured_summary`: a heading and one short line per distinct fact).

`memories.topics` reads the texts (names, words, summary lines) without the database or
an LLM; this module groups the memories and asks the skill.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

import numpy as np
from django.conf import settings

from almanac.search.tokens import count_tokens
from memories.models import Memory
from memories.services.common import log
from memories.topics import covers, structured_summary, tokens_of, topic_terms
from skills.services import SkillFailed, skill_run


def _size(text: str) -> int:
    return count_tokens(text) + 2  # and the line break and full stop it is joined with


def summary_groups(memories: list[Memory]) -> list[list[Memory]]:
    """A topic cut, oldest first, into groups whose text fits one summary of at most
    COMPRESS_MAX_TOKENS, about equal in size; a memory longer than that alone, or a group of
    one, is left as it is (a summary of one memory is that memory again)."""
    cap = settings.MEMORY_COMPRESS_MAX_TOKENS
    sized = [(m, size) for m in memories if (size := _size(m.content)) <= cap]
    total = sum(size for _, size in sized)
    if not total:
        return []
    count = -(-total // cap)  # as few groups as fit
    target = -(-total // count)  # about equal in size
    groups: list[list[Memory]] = [[]]
    used = 0
    for memory, size in sized:
        if groups[-1] and (used >= target or used + size > cap):
            groups.append([])
            used = 0
        groups[-1].append(memory)
        used += size
    return [group for group in groups if len(group) > 1]


@dataclass
class Topic:
    """Memories of one scope about one thing; `term` names it ("" for one found by embedding)."""

    term: str
    memories: list[Memory] = field(default_factory=list)


def topics(memories: list[Memory], *, more_than: int | None = None) -> list[Topic]:
    """The topics of one scope's memories (oldest first): by shared name or word
    (`_term_topics`), then word groups that are about one thing (`_related_topics`: 报销,
    发票 and 差旅 rules are one expense topic), then by embedding for the rest
    (`_vector_topics`). `more_than`: the scope's tenant's COMPRESS_MIN (None: the setting)."""
    more_than = settings.MEMORY_COMPRESS_MIN if more_than is None else more_than
    named, rest = _term_topics(memories, more_than=more_than)
    related, rest = _related_topics(rest, more_than=more_than)
    named += related
    rest = _join_close(named, rest)
    return named + [Topic(term="", memories=group) for group in _vector_topics(rest)]


def _term_topics(memories: list[Memory], *, more_than: int) -> tuple[list[Topic], list[Memory]]:
    """Greedy: while a name (else a key subject or content word) is shared by more than
    `more_than` of the memories left, its memories are a topic. Names come first, the most
    specific (fewest memories) first; then words, the most shared first."""
    terms = {m.pk: topic_terms(m.content, m.fact_key) for m in memories}
    found: list[Topic] = []
    left = list(memories)
    while True:
        counts: Counter = Counter()
        named: set[str] = set()
        for memory in left:
            subjects, words = terms[memory.pk]
            counts.update(subjects | words)
            named |= subjects
        ranked = [
            (0, n, -len(term), term) if term in named else (1, -n, -len(term), term)
            for term, n in counts.items()
            if n > more_than
        ]
        if not ranked:
            return found, left
        term = min(ranked)[3]
        members = [m for m in left if term in terms[m.pk][0] or term in terms[m.pk][1]]
        found.append(Topic(term=term, memories=members))
        left = [m for m in left if m not in members]


def _related_topics(memories: list[Memory], *, more_than: int) -> tuple[list[Topic], list[Memory]]:
    """Word groups too small to be topics alone (each word shared by at least
    MEMORY_TOPIC_GROUP_MIN memories, after segmentation: `topic_terms`) merged by meaning:
    average linkage of the groups' centroids, the closest pair first, while the mean
    cosine between two clusters' groups is at least MEMORY_TOPIC_GROUP_SIMILARITY (a
    group's centroid averages away what each sentence says besides its subject). A cluster
    of more than COMPRESS_MIN memories is a topic named by its words; returns the rest."""
    groups, _ = _term_topics(memories, more_than=settings.MEMORY_TOPIC_GROUP_MIN - 1)
    if len(groups) < 2:
        return [], memories
    centroids = np.array([_centroid(g.memories) for g in groups])
    pairs = centroids @ centroids.T
    clusters = [[i] for i in range(len(groups))]
    while len(clusters) > 1:
        score, a, b = max(
            (float(pairs[np.ix_(x, y)].mean()), i, j)
            for i, x in enumerate(clusters)
            for j, y in enumerate(clusters)
            if i < j
        )
        if score < settings.MEMORY_TOPIC_GROUP_SIMILARITY:
            break
        clusters[a] += clusters.pop(b)
    found = []
    for cluster in clusters:
        members = [m for i in sorted(cluster) for m in groups[i].memories]
        if len(cluster) > 1 and len(members) > more_than:
            members.sort(key=lambda m: (m.created_at, m.pk))
            found.append(Topic(term=" / ".join(groups[i].term for i in sorted(cluster)), memories=members))
    taken = {m.pk for topic in found for m in topic.memories}
    return found, [m for m in memories if m.pk not in taken]


def _centroid(memories: list[Memory]) -> np.ndarray:
    total = np.sum([_unit(m) for m in memories], axis=0)
    return total / (np.linalg.norm(total) or 1.0)


def _unit(memory: Memory) -> np.ndarray:
    vector = np.asarray(memory.embedding, dtype=np.float32)
    return vector / (np.linalg.norm(vector) or 1.0)


def _join_close(named: list[Topic], rest: list[Memory]) -> list[Memory]:
    """Memories close to a named topic (cosine to its centroid at least TOPIC_SIMILARITY)
    join it, the closest; returns the others."""
    if not named or not rest:
        return rest
    centroids = [_centroid(topic.memories) for topic in named]
    left = []
    for memory in rest:
        scores = [float(c @ _unit(memory)) for c in centroids]
        best = int(np.argmax(scores))
        if scores[best] >= settings.MEMORY_TOPIC_SIMILARITY:
            named[best].memories.append(memory)
        else:
            left.append(memory)
    for topic in named:
        topic.memories.sort(key=lambda m: (m.created_at, m.pk))
    return left


def _vector_topics(memories: list[Memory]) -> list[list[Memory]]:
    """Greedy single pass, oldest first: a memory joins the first topic whose (running)
    centroid it is at least TOPIC_SIMILARITY to, else starts a new one."""
    groups: list[list[Memory]] = []
    sums: list[np.ndarray] = []
    for memory in memories:
        vector = np.asarray(memory.embedding, dtype=np.float32)
        best = None
        for index, total in enumerate(sums):
            centroid = total / (np.linalg.norm(total) or 1.0)
            if float(centroid @ vector) >= settings.MEMORY_TOPIC_SIMILARITY:
                best = index
                break
        if best is None:
            groups.append([memory])
            sums.append(vector.copy())
        else:
            groups[best].append(memory)
            sums[best] += vector
    return groups


@dataclass(frozen=True)
class Summary:
    """A summary of some memories that says all of them in fewer tokens: its text, how it
    was made ("llm", "extractive": the `compress` skill with or without an LLM;
    "structured") and the tokens of the memories and of the summary."""

    text: str
    method: str
    tokens_before: int
    tokens_after: int


def summary_for(texts: list[str], *, tenant, reason: str, use_skill: bool = True) -> Summary | None:
    """The summary of `texts` to write, or None when none is shorter than they are.

    Only a summary that says every memory (`covers`: their numbers with what they are of,
    dates, ids, names, words and negation) in fewer tokens than they take counts: the
    `compress` skill's (`use_skill`) with an LLM, its abstractive summary when it passes;
    else the shorter of the skill's offline extractive one and the structured one (a
    heading and one line per distinct fact)."""
    before = tokens_of(texts)
    candidates = []
    if use_skill and before > 1:
        text, by_llm = skill_summary(texts, tenant=tenant, reason=reason, limit=before - 1)
        missing = covers(text, texts) if text else list(texts)
        if text and not missing and by_llm and count_tokens(text) < before:
            return Summary(text=text, method="llm", tokens_before=before, tokens_after=count_tokens(text))
        if text and not missing:
            candidates.append((text, "extractive"))
        elif text and by_llm:
            log.info("compress: the LLM summary leaves out %s of %s memories", len(missing), len(texts))
    candidates.append((structured_summary(texts), "structured"))
    best = min(candidates, key=lambda c: count_tokens(c[0]))  # min() keeps the first of equals
    after = count_tokens(best[0])
    if after >= before:
        return None
    return Summary(text=best[0], method=best[1], tokens_before=before, tokens_after=after)


def skill_summary(texts: list[str], *, tenant, reason: str, limit: int) -> tuple[str, bool]:
    """The `compress` skill's summary ("" when it failed) and whether an LLM wrote it (not
    when the offline extractive one stood in for a failing LLM)."""
    budget = max(1, min(settings.MEMORY_COMPRESS_MAX_TOKENS, limit))
    try:
        out = skill_run(
            name="compress",
            input={"items": texts, "max_tokens": budget},
            trigger=reason,
            tenant=tenant,
        )
    except SkillFailed:
        log.warning("compress skill failed: the structured summary instead")
        return "", False
    return (out.get("summary") or "").strip(), out.used_llm
