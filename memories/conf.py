"""Settings of the memories app that the foundation does not define (env-driven)."""

from __future__ import annotations

from django.conf import settings

from almanac.env import env, envbool, envchoice, envfloat, envint

# Recall
RECALL_LANE_SIZE = envint("MEMORY_RECALL_LANE_SIZE", 50)
RECALL_FUSED_SIZE = envint("MEMORY_RECALL_FUSED_SIZE", 15)
RECALL_RRF_K = envint("MEMORY_RECALL_RRF_K", 60)
COMMON_TERM_SHARE = envfloat("MEMORY_COMMON_TERM_SHARE", 0.05)  # terms in more docs only score, never find
RECENCY_HALF_LIFE_DAYS = envfloat("MEMORY_RECENCY_HALF_LIFE_DAYS", 30.0)
EXACT_SCAN_MAX = envint("MEMORY_EXACT_SCAN_MAX", 5000)  # tenants with at most this many memories: exact scans
RERANK = env("MEMORY_RERANK")  # dotted path of a callable(query, hits) -> hits; empty = off
TOUCH_ON_RECALL = envbool("MEMORY_TOUCH_ON_RECALL", True)
# buffer: counted in-process, one UPDATE per flush (memories/touch.py) | task: a django-q2 task per search
TOUCH_MODE = envchoice("MEMORY_TOUCH_MODE", "buffer", ("buffer", "task"))
TOUCH_FLUSH_SECONDS = envfloat("MEMORY_TOUCH_FLUSH_SECONDS", 2.0)

# Write path
MAX_CONTENT_CHARS = envint("MEMORY_MAX_CONTENT_CHARS", 20000)
MAX_TURN_CHARS = envint("MEMORY_MAX_TURN_CHARS", 200000)
CHUNK_CHARS = envint("MEMORY_CHUNK_CHARS", 256)
CHUNK_OVERLAP = envint("MEMORY_CHUNK_OVERLAP", 32)

# Compression (memories/services/compression.py): a topic of more than COMPRESS_MIN active
# semantic memories in one scope becomes summaries of at most COMPRESS_MAX_TOKENS each (a
# summary may be as long as what it folds in: a bigger topic is split into groups that
# fit); originals a summary holds are kept KEEP_DAYS.
COMPRESS_MIN = envint("MEMORY_COMPRESS_MIN", 20)
TOPIC_SIMILARITY = envfloat("MEMORY_TOPIC_SIMILARITY", 0.75)
COMPRESS_MAX_TOKENS = envint("MEMORY_COMPRESS_MAX_TOKENS", 1000)
COMPRESSED_KEEP_DAYS = envint("MEMORY_COMPRESSED_KEEP_DAYS", 30)

# Quality (feedback)
QUALITY_MIN = 0.2
QUALITY_MAX = 2.0
QUALITY_STEP = {"adopted": 1.15, "ignored": 0.9, "corrected": 0.75}


def dedup_threshold() -> float:
    return settings.MEMORY_DEDUP_THRESHOLD
