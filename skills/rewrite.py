"""The latest turn of a dialogue rewritten as a standalone search query, when an LLM is configured.

"And when is it due?" says nothing a search can find; "When is the Vercel renewal due?"
does. With LLM_BASE_URL set, `standalone_query(dialogue)` asks the model for that rewrite in
the dialogue's language, bounded by SEARCH_REWRITE_TIMEOUT with no retry; recall searches it
as one more query form (memories.selectors.memory_search). Answers are cached per dialogue,
and a model that failed is left alone for SEARCH_REWRITE_PAUSE seconds, so a slow or absent
server costs a search at most one timeout now and then. Without an LLM, or with
SEARCH_REWRITE off, nothing is asked and recall is the offline one.
"""

from __future__ import annotations

import functools
import logging
import threading
import time

from django.conf import settings

from almanac.search.query import conversational, turns
from almanac.search.text import is_cjk
from skills.llm import LLMClient, LLMError

log = logging.getLogger(__name__)

SCHEMA = {
    "type": "object",
    "properties": {"query": {"type": "string", "maxLength": 500}},
    "required": ["query"],
}
PROMPTS = {
    "en": (
        "Rewrite the user's last message as one standalone search query: resolve what "
        "'it', 'that' or 'they' refer to from the earlier turns and keep the names, dates "
        'and figures. Answer with JSON {"query": "..."} in English.'
    ),
    "zh": (
        "把用户的最后一句话改写成一条可以单独检索的查询：根据前面的对话补全“它”“那个”“他们”等"
        '指代，保留名称、日期和数字。用中文回答 JSON {"query": "..."}。'
    ),
}
MAX_DIALOGUE_CHARS = 4000

_down_until = [0.0]
_lock = threading.Lock()


def standalone_query(text: str) -> str | None:
    """The dialogue's latest turn as a standalone query, or None: no LLM configured, rewriting
    off, a text that is no dialogue nor long (`conversational`), or a model that failed or
    is paused after a failure."""
    if not (settings.SEARCH_REWRITE and settings.LLM_BASE_URL) or not conversational(text):
        return None
    if time.monotonic() < _down_until[0]:
        return None
    dialogue = "\n".join(f"{role or 'user'}: {said}" for role, said in turns(text))[-MAX_DIALOGUE_CHARS:]
    try:
        return _rewrite(settings.LLM_BASE_URL, settings.LLM_MODEL, dialogue)
    except _Failed:
        return None


@functools.lru_cache(maxsize=1024)
def _rewrite(base_url: str, model: str, dialogue: str) -> str | None:
    lang = "zh" if is_cjk(dialogue) else "en"
    client = LLMClient(
        base_url=base_url,
        model=model,
        api_key=settings.LLM_API_KEY,
        timeout=settings.SEARCH_REWRITE_TIMEOUT,
        max_retries=0,
    )
    messages = [{"role": "system", "content": PROMPTS[lang]}, {"role": "user", "content": dialogue}]
    try:
        query = client.complete_json(messages, schema=SCHEMA, max_tokens=120)["query"].strip()
    except LLMError as exc:
        with _lock:
            _down_until[0] = time.monotonic() + settings.SEARCH_REWRITE_PAUSE
        log.warning("query rewrite failed; searching without it: %s", exc)
        raise _Failed from exc
    return query or None


class _Failed(Exception):
    """A failed rewrite, raised through the cache so that it is not remembered."""
