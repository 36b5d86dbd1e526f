import json

import numpy as np
import pytest
from django.conf import settings

from almanac.services.users import user_create
from memories.models import ConversationSession, Memory, Turn
from memories.services.memories import memory_create
from memories.services.sessions import session_create, turn_add
from skills.models import SkillRun


def unit(seed: int) -> np.ndarray:
    v = np.random.default_rng(seed).standard_normal(settings.EMBEDDING_DIM).astype(np.float32)
    return v / np.linalg.norm(v)


def at_cosine(base: np.ndarray, cos: float, seed: int = 99) -> np.ndarray:
    """A unit vector whose cosine similarity to `base` is exactly `cos`."""
    other = unit(seed)
    other = other - other.dot(base) * base
    other /= np.linalg.norm(other)
    return (cos * base + np.sqrt(1 - cos**2) * other).astype(np.float32)


@pytest.fixture
def sam(tenant):
    """Another Sales member (alice's department), no projects."""
    return user_create(tenant=tenant, username="sam", email="sam@acme.com", departments=["Sales"])


@pytest.fixture
def remember():
    def make(owner, content, **kw):
        memory, duplicate = memory_create(owner=owner, content=content, **kw)
        assert duplicate is None, f"unexpected duplicate of {duplicate}"
        return memory

    return make


@pytest.fixture
def ended_session():
    """A finished session of `user` with the given user turns, dated `day`."""

    def make(user, turns: list[str], day: str = "2026-03-20"):
        session = session_create(user=user, title="test")
        for text in turns:
            turn_add(session=session, role="user", content=text)
            turn_add(session=session, role="assistant", content="好的，我记下了。I can help with that.")
        ConversationSession.objects.filter(pk=session.pk).update(started_at=f"{day}T09:00:00Z")
        Turn.objects.filter(session=session).update(created_at=f"{day}T09:00:00Z")  # said that day
        session.refresh_from_db()
        ConversationSession.objects.filter(pk=session.pk).update(status="ended")
        return session

    return make


@pytest.fixture
def offline_llm(settings):
    """The skills' offline fallbacks (the compress skill's extractive one quotes the items)."""
    settings.LLM_BASE_URL = ""


def quoting(needle: str) -> list[SkillRun]:
    """The skill runs whose input, output or error quote `needle` (JSON-escaped or not)."""
    return [
        r
        for r in SkillRun.objects.all()
        if needle in json.dumps([r.input, r.output, r.error], ensure_ascii=False)
    ]


# One topic: memories close to this vector, and a filler that fills it past MEMORY_COMPRESS_MIN.
TOPIC = unit(43)
FILLER = [f"Apollo release checklist item {i}: verify build {i} before stage {i % 4 + 1}" for i in range(21)]


def on_topic(owner, texts: list[str], seed: int = 700, **kw) -> list[Memory]:
    return [
        memory_create(owner=owner, content=text, embedding=at_cosine(TOPIC, 0.9, seed=seed + i), **kw)[0]
        for i, text in enumerate(texts)
    ]
