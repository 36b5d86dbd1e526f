"""`Client`: one typed method per endpoint of the agent API (docs/api.md).

Every call sends the agent key; calls that act for a person take `user` (or the client's
default `user`). A 429 or 503 is retried after the server's `Retry-After` (seconds or an
HTTP date), at most `max_retries` times and never waiting longer than `retry_after_max`
at once; any other error status raises the `AlmanacError` subclass of its status."""

from __future__ import annotations

import email.utils
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx

from .errors import BY_STATUS, AlmanacError, RateLimited
from .types import (
    Context,
    Document,
    Feedback,
    Me,
    Memory,
    MemoryHit,
    MemoryList,
    MemoryType,
    Role,
    Scope,
    Session,
    Signal,
    SkillRun,
    Turn,
    Window,
)

RETRIED = (429, 503)


def retry_after_seconds(value: str | None, now: float | None = None) -> float | None:
    """`Retry-After` as seconds from now: a number of seconds or an HTTP date; None if absent
    or unreadable."""
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


def _drop_none(values: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in values.items() if v is not None}


class Client:
    """`Client("http://127.0.0.1:8000", key, user="alice")`; a context manager, or `close()`.

    `transport` is any httpx transport (e.g. `httpx.WSGITransport(app=...)` to talk to a
    Django app in-process); `sleep` is what waits between retries."""

    def __init__(
        self,
        base_url: str,
        key: str,
        *,
        user: str | None = None,
        timeout: float = 30.0,
        max_retries: int = 3,
        retry_after_max: float = 60.0,
        backoff: float = 0.5,
        transport: httpx.BaseTransport | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ):
        root = base_url.rstrip("/")
        if not root.endswith("/api/v1"):
            root += "/api/v1"
        self.user = user
        self.max_retries = max_retries
        self.retry_after_max = retry_after_max
        self.backoff = backoff
        self.sleep = sleep
        self.http = httpx.Client(
            base_url=root,
            headers={"Authorization": f"Bearer {key}"},
            timeout=timeout,
            transport=transport,
        )

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        self.http.close()

    # -- transport --------------------------------------------------------------------

    def request(self, method: str, path: str, *, retry: bool = True, **kwargs) -> Any:
        """One API call with the retries above; the decoded JSON (None for a 204)."""
        attempt = 0
        while True:
            response = self.http.request(method, path, **kwargs)
            if response.status_code < 400:
                return response.json() if response.content else None
            wait = self._wait(response, attempt) if retry else None
            if wait is None:
                raise self._error(response)
            self.sleep(wait)
            attempt += 1

    def _wait(self, response: httpx.Response, attempt: int) -> float | None:
        """Seconds to wait before retrying this answer, or None to give up."""
        if response.status_code not in RETRIED or attempt >= self.max_retries:
            return None
        wait = retry_after_seconds(response.headers.get("Retry-After"))
        if wait is None:
            wait = self.backoff * 2**attempt
        return wait if wait <= self.retry_after_max else None

    def _error(self, response: httpx.Response) -> AlmanacError:
        try:
            body = response.json()
        except ValueError:
            body = {"detail": response.text}
        if not isinstance(body, dict):
            body = {"detail": body}
        status = response.status_code
        cls = BY_STATUS.get(status, AlmanacError)
        if cls is RateLimited:
            retry_after = retry_after_seconds(response.headers.get("Retry-After"))
            return RateLimited(status, body.get("detail"), body, retry_after=retry_after)
        return cls(status, body.get("detail"), body)

    def _user(self, user: str | None) -> str | None:
        return user if user is not None else self.user

    # -- context ------------------------------------------------------------------------

    def context(
        self,
        task: str,
        *,
        user: str | None = None,
        max_tokens: int | None = None,
        session_id: int | None = None,
        lang: str | None = None,
        cursor: str | None = None,
    ) -> Context:
        body = {"user": self._user(user), "task": task, "max_tokens": max_tokens}
        body |= {"session_id": session_id, "lang": lang, "cursor": cursor}
        return self.request("POST", "/context", json=_drop_none(body))

    def context_pages(self, task: str, *, max_passes: int | None = None, **kwargs) -> Iterator[Context]:
        """Each pass of the context for `task` (the same arguments as `context`), the first
        and then one per `next_cursor`, until the server has nothing more (or `max_passes`)."""
        cursor = kwargs.pop("cursor", None)
        passes = 0
        while max_passes is None or passes < max_passes:
            page = self.context(task, cursor=cursor, **kwargs)
            passes += 1
            yield page
            cursor = page.get("next_cursor")
            if not cursor:
                return
            kwargs.pop("session_id", None)  # the working window comes in the first pass only

    # -- memories -----------------------------------------------------------------------

    def memory_create(
        self,
        content: str,
        *,
        user: str | None = None,
        memory_type: MemoryType = "semantic",
        scope: Scope = "user",
        scope_key: str | None = None,
        importance: float | None = None,
        meta: dict | None = None,
        kind: str | None = None,
        key: str | None = None,
        occurred_at: str | None = None,
    ) -> Memory:
        """A new memory (201), or the existing near-duplicate with `duplicate_of` (200)."""
        body = {"user": self._user(user), "content": content, "memory_type": memory_type, "scope": scope}
        body |= {"scope_key": scope_key, "importance": importance, "meta": meta, "kind": kind}
        body |= {"key": key, "occurred_at": occurred_at}
        return self.request("POST", "/memories", json=_drop_none(body))

    def memories(self, *, user: str | None = None, **filters: Any) -> MemoryList:
        """`GET /memories`: filters `memory_type`, `status`, `scope`, `kind`, `q`, `limit`, `offset`."""
        params = _drop_none({"user": self._user(user), **filters})
        return self.request("GET", "/memories", params=params)

    def memory(self, memory_id: int, *, user: str | None = None) -> Memory:
        return self.request("GET", f"/memories/{memory_id}", params=_drop_none({"user": self._user(user)}))

    def memory_update(self, memory_id: int, *, user: str | None = None, **fields: Any) -> Memory:
        """`PATCH /memories/{id}`: content, importance, status, scope, scope_key, meta, kind, occurred_at."""
        params = _drop_none({"user": self._user(user)})
        return self.request("PATCH", f"/memories/{memory_id}", params=params, json=fields)

    def memory_delete(self, memory_id: int, *, user: str | None = None, purge: bool = False) -> None:
        params = _drop_none({"user": self._user(user), "purge": "true" if purge else None})
        self.request("DELETE", f"/memories/{memory_id}", params=params)

    def memories_search(
        self,
        query: str,
        *,
        user: str | None = None,
        top_k: int | None = None,
        memory_types: list[MemoryType] | None = None,
    ) -> list[MemoryHit]:
        body = _drop_none(
            {"user": self._user(user), "query": query, "top_k": top_k, "memory_types": memory_types}
        )
        return self.request("POST", "/memories/search", json=body)["results"]

    def memory_feedback(self, memory_id: int, signal: Signal, *, user: str | None = None) -> Feedback:
        body = _drop_none({"user": self._user(user), "signal": signal})
        return self.request("POST", f"/memories/{memory_id}/feedback", json=body)

    # -- sessions -----------------------------------------------------------------------

    def session_create(self, *, user: str | None = None) -> Session:
        return self.request("POST", "/sessions", json=_drop_none({"user": self._user(user)}))

    def session_turn(self, session_id: int, role: Role, content: str, *, user: str | None = None) -> Turn:
        body = _drop_none({"user": self._user(user), "role": role, "content": content})
        return self.request("POST", f"/sessions/{session_id}/turns", json=body)

    def session_window(self, session_id: int, *, user: str | None = None) -> Window:
        params = _drop_none({"user": self._user(user)})
        return self.request("GET", f"/sessions/{session_id}/window", params=params)

    def session_end(self, session_id: int, *, user: str | None = None) -> Session:
        """Ends the session (202); extraction of long-term memories runs in the background."""
        return self.request(
            "POST", f"/sessions/{session_id}/end", json=_drop_none({"user": self._user(user)})
        )

    # -- wiki ---------------------------------------------------------------------------

    def wiki_pages(
        self, *, user: str | None = None, q: str | None = None, kind: str | None = None
    ) -> list[dict]:
        params = _drop_none({"user": self._user(user), "q": q, "kind": kind})
        return self.request("GET", "/wiki/pages", params=params)

    def wiki_page(self, slug: str, *, user: str | None = None) -> dict:
        return self.request("GET", f"/wiki/pages/{slug}", params=_drop_none({"user": self._user(user)}))

    def wiki_search(self, query: str, *, user: str | None = None, top_k: int | None = None) -> list[dict]:
        body = _drop_none({"user": self._user(user), "query": query, "top_k": top_k})
        return self.request("POST", "/wiki/search", json=body)["results"]

    def wiki_confirm(
        self, slug: str, section_ids: list[int], *, reason: str = "", user: str | None = None
    ) -> list[int]:
        body = _drop_none({"user": self._user(user), "section_ids": section_ids, "reason": reason})
        return self.request("POST", f"/wiki/pages/{slug}/confirm", json=body)["confirmed"]

    # -- connectors, skills, documents, me, health ----------------------------------------

    def events_push(self, events: list[dict]) -> dict:
        """`POST /connectors/events` (a key with the connector permission) → `{accepted, duplicates}`."""
        return self.request("POST", "/connectors/events", json={"events": events})

    def connectors(self) -> list[dict]:
        return self.request("GET", "/connectors")

    def skills(self, *, user: str | None = None) -> list[dict]:
        return self.request("GET", "/skills", params=_drop_none({"user": self._user(user)}))["skills"]

    def skill_run(self, name: str, input: dict | None = None, *, user: str | None = None) -> SkillRun:
        body = _drop_none({"user": self._user(user), "input": input or {}})
        return self.request("POST", f"/skills/{name}/run", json=body)

    def document_upload(
        self,
        file: bytes | str | Path,
        *,
        filename: str | None = None,
        user: str | None = None,
        scope: Scope = "user",
        scope_key: str | None = None,
    ) -> Document:
        """Upload bytes (with `filename`) or a file path; 202 while it is read, 200 if already there."""
        if isinstance(file, bytes):
            data, name = file, filename or "upload.txt"
        else:
            data, name = Path(file).read_bytes(), filename or Path(file).name
        form = _drop_none({"user": self._user(user), "scope": scope, "scope_key": scope_key})
        return self.request("POST", "/documents", data=form, files={"file": (name, data)})

    def document(self, document_id: int, *, user: str | None = None) -> Document:
        return self.request("GET", f"/documents/{document_id}", params=_drop_none({"user": self._user(user)}))

    def document_delete(self, document_id: int, *, user: str | None = None) -> None:
        self.request("DELETE", f"/documents/{document_id}", params=_drop_none({"user": self._user(user)}))

    def me(self, *, user: str | None = None) -> Me:
        return self.request("GET", "/me", params=_drop_none({"user": self._user(user)}))

    def health(self) -> dict:
        """`{"status", "database", "queue"}`; answered (not raised) when the server says 503."""
        response = self.http.get("/health")
        if response.status_code not in (200, 503):
            raise self._error(response)
        return response.json()
