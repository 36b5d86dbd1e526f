"""Context settings (env-driven; listed in docs/agents.md, Configuration).

CONTEXT_TOP_PAGES and CONTEXT_DEFAULT_MAX_TOKENS live in almanac.settings; the rest are
specific to this package and read here.
"""

from __future__ import annotations

from django.core.exceptions import ImproperlyConfigured

from almanac.env import env, envfloat, envint

BLOCK_KINDS = ("wiki", "semantic", "episodic", "working")


def _shares(raw: str) -> dict[str, float]:
    shares: dict[str, float] = {}
    for part in raw.split(","):
        if not part.strip():
            continue
        kind, _, value = part.partition(":")
        kind = kind.strip()
        if kind not in BLOCK_KINDS:
            raise ImproperlyConfigured(f"CONTEXT_BLOCK_SHARES: unknown block {kind!r}")
        try:
            shares[kind] = float(value)
        except ValueError as exc:
            raise ImproperlyConfigured(f"CONTEXT_BLOCK_SHARES: bad share for {kind!r}") from exc
    total = sum(shares.values())
    if total <= 0 or any(v < 0 for v in shares.values()):
        raise ImproperlyConfigured("CONTEXT_BLOCK_SHARES must be non-negative and not all zero")
    return {kind: shares.get(kind, 0.0) / total for kind in BLOCK_KINDS}


# Share of the budget each block may use before spill-over (normalized to sum to 1).
BLOCK_SHARES = _shares(env("CONTEXT_BLOCK_SHARES", "wiki:0.5,semantic:0.2,episodic:0.15,working:0.15"))
# Input limits: a task longer than this, or max_tokens outside 1..MAX, is refused (422).
TASK_MAX_CHARS = envint("CONTEXT_TASK_MAX_CHARS", 8000)
MAX_TOKENS_LIMIT = envint("CONTEXT_MAX_TOKENS_LIMIT", 32000)
# How many memories of each kind one pass considers.
SEMANTIC_TOP_K = envint("CONTEXT_SEMANTIC_TOP_K", 8)
EPISODIC_TOP_K = envint("CONTEXT_EPISODIC_TOP_K", 6)
# Wiki sections fetched to rank pages.
SECTION_TOP_K = envint("CONTEXT_SECTION_TOP_K", 50)
# A page summary shorter than this is not worth it: the page is left out (and reported).
MIN_SUMMARY_TOKENS = envint("CONTEXT_MIN_SUMMARY_TOKENS", 24)
# A page summary's token target is rounded down to a multiple of this, so that calls with
# slightly different budgets share the cached summary.
SUMMARY_TARGET_STEP = envint("CONTEXT_SUMMARY_TARGET_STEP", 32)
# Page summaries are cached (Django cache) for this long; the key changes with the page.
SUMMARY_CACHE_SECONDS = envint("CONTEXT_SUMMARY_CACHE_SECONDS", 7 * 24 * 3600)
# A cursor older than this is refused (400).
CURSOR_MAX_AGE_SECONDS = envint("CONTEXT_CURSOR_MAX_AGE_SECONDS", 24 * 3600)
# A wiki section found only by the vector lane (no keyword match) must be at least this
# similar to the task to pull its page in; pages named by an entity always count.
MIN_VECTOR_SIMILARITY = envfloat("CONTEXT_MIN_VECTOR_SIMILARITY", 0.15)
# Source freshness is read at most this often per tenant (it aggregates the event inbox);
# lag thresholds are in hours, so a few seconds of caching changes no warning.
FRESHNESS_CACHE_SECONDS = envint("CONTEXT_FRESHNESS_CACHE_SECONDS", 10)
# A page's text is its newest visible sections up to this many, plus the sections that
# matched the task (up to PAGE_MATCHED_SECTIONS); older ones are left out and reported.
PAGE_MAX_SECTIONS = envint("CONTEXT_PAGE_MAX_SECTIONS", 40)
PAGE_MATCHED_SECTIONS = envint("CONTEXT_PAGE_MATCHED_SECTIONS", 10)
