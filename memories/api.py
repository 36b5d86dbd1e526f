"""Memories and Sessions endpoints (docs/api.md). Thin: resolve the acting user, call a selector/service."""

from __future__ import annotations

from typing import Literal

from django.http import Http404
from ninja import Query, Router
from ninja.responses import Status

from almanac.auth import acting_key, acting_user, user_ref
from memories import selectors
from memories.schemas import (
    FeedbackIn,
    FeedbackOut,
    Kind,
    MemoryIn,
    MemoryListOut,
    MemoryOut,
    MemoryPatch,
    MemorySearchIn,
    MemorySearchOut,
    MemoryType,
    Scope,
    SessionIn,
    SessionOut,
    SessionUserIn,
    TurnIn,
    TurnOut,
    WindowOut,
)
from memories.services.feedback import memory_feedback
from memories.services.memories import memory_create, memory_delete, memory_update
from memories.services.purge import memory_purge
from memories.services.sessions import session_create, session_end, turn_add
from memories.services.touches import memory_touch_later

router = Router(tags=["memories"])
sessions_router = Router(tags=["sessions"])


@router.post("", response={200: MemoryOut, 201: MemoryOut})
def create_memory(request, payload: MemoryIn):
    user = acting_user(request, payload.user)
    data = payload.dict(exclude={"user"})
    memory, duplicate = memory_create(owner=user, **data)
    if duplicate is not None:
        memory.duplicate_of = duplicate.pk
        return Status(200, memory)
    return Status(201, memory)


@router.get("", response=MemoryListOut)
def list_memories(
    request,
    user: str | None = None,
    memory_type: MemoryType | None = None,
    status: Literal["active", "compressed", "archived", "superseded", "all"] = "active",
    scope: Scope | None = None,
    kind: Kind | None = None,
    q: str = Query("", max_length=2000),
    limit: int = Query(50, ge=1, le=200),
    offset: int = Query(0, ge=0, le=1_000_000),
):
    acting = acting_user(request, user)
    filters = {
        "memory_type": memory_type,
        "status": None if status == "all" else status,
        "scope": scope,
        "kind": kind,
        "q": q,
    }
    qs = selectors.memory_list(user=acting, **filters)
    return {"items": list(qs[offset : offset + limit]), "count": qs.count()}


@router.post("/search", response=MemorySearchOut)
def search_memories(request, payload: MemorySearchIn):
    user = acting_user(request, payload.user)
    hits = selectors.memory_search(
        user=user, query=payload.query, top_k=payload.top_k, memory_types=payload.memory_types
    )
    memory_touch_later(memory_ids=[hit.memory.pk for hit in hits])
    return {"results": hits}


@router.get("/{memory_id}", response=MemoryOut)
def get_memory(request, memory_id: int, user: str | None = None):
    return selectors.memory_get_for_user(user=acting_user(request, user), memory_id=memory_id)


@router.patch("/{memory_id}", response=MemoryOut)
def update_memory(request, memory_id: int, payload: MemoryPatch):
    user = acting_user(request, payload.user)
    memory = selectors.memory_get_for_user(user=user, memory_id=memory_id)
    return memory_update(memory=memory, user=user, data=payload.dict(exclude={"user"}, exclude_unset=True))


@router.delete("/{memory_id}", response={204: None})
def delete_memory(request, memory_id: int, user: str | None = None, purge: bool = False):
    """Delete; `purge=true` also removes the text from its history and the skill-run log."""
    acting = acting_user(request, user)
    memory = selectors.memory_get_for_user(user=acting, memory_id=memory_id)
    if purge:
        memory_purge(memory=memory, user=acting)
    elif not memory_delete(memory=memory, user=acting):
        raise Http404("memory not found")  # deleted meanwhile
    return Status(204, None)


@router.post("/{memory_id}/feedback", response=FeedbackOut)
def feedback_memory(request, memory_id: int, payload: FeedbackIn):
    user = acting_user(request, payload.user)
    memory = selectors.memory_get_for_user(user=user, memory_id=memory_id, statuses=("active",))
    fb = memory_feedback(memory=memory, user=user, signal=payload.signal)
    return {
        "memory_id": memory.pk,
        "signal": fb.signal,
        "quality_before": fb.quality_before,
        "quality": fb.quality_after,
    }


# --- Sessions -------------------------------------------------------------------------


def _session(request, session_id: int, ref: str | None):
    """The session, as its user or (agent key without `user`) within the key's tenant; else 404.

    The act-for-user permission is checked first, so a key without it cannot even learn
    which session ids exist.
    """
    key = acting_key(request)
    ref = user_ref(request, ref)
    if ref or key is None:
        return selectors.session_get_for_user(user=acting_user(request, ref), session_id=session_id)
    return selectors.session_get_in_tenant(tenant=key.tenant, session_id=session_id)


@sessions_router.post("", response={201: SessionOut})
def create_session(request, payload: SessionIn | None = None):
    payload = payload or SessionIn()
    user = acting_user(request, payload.user)
    return Status(201, session_create(user=user, title=payload.title))


@sessions_router.post("/{session_id}/turns", response={201: TurnOut})
def add_turn(request, session_id: int, payload: TurnIn):
    session = _session(request, session_id, payload.user)
    return Status(201, turn_add(session=session, role=payload.role, content=payload.content))


@sessions_router.get("/{session_id}/window", response=WindowOut)
def get_window(request, session_id: int, user: str | None = None):
    session = _session(request, session_id, user)
    return selectors.session_window(user=session.user, session_id=session.pk)


@sessions_router.post("/{session_id}/end", response={202: SessionOut})
def end_session(request, session_id: int, payload: SessionUserIn | None = None):
    session = _session(request, session_id, payload.user if payload else None)
    return Status(202, session_end(session=session))
