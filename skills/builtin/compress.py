"""`compress`: many memories on one topic → one consolidated memory within `max_tokens`."""

from __future__ import annotations

import re

from almanac.search.tokens import count_tokens
from almanac.text.extractive import extractive_summary
from almanac.text.normalize import is_cjk, normalize
from skills.builtin.summarize import OUTPUT_SCHEMA
from skills.registry import BaseSkill, register

INPUT_SCHEMA = {
    "type": "object",
    "properties": {
        "items": {
            "type": "array",
            "items": {"type": "string", "maxLength": 20_000},
            "minItems": 1,
            "maxItems": 1000,
        },
        "max_tokens": {"type": "integer", "minimum": 1, "maximum": 100_000},
        "topic": {"type": ["string", "null"], "maxLength": 1000},
        "lang": {"type": ["string", "null"], "maxLength": 16},
        "keep": {"type": "array", "items": {"type": "string", "maxLength": 200}, "maxItems": 500},
    },
    "required": ["items", "max_tokens"],
    "additionalProperties": False,
}

PROMPT = """You merge an agent's memories about one topic into one consolidated memory.
The memories are numbered oldest first. Keep every distinct fact, preference, decision and
dated event; merge duplicates; when two contradict, keep the newer one. Keep names, dates,
amounts, identifiers and first-person markers ("I", "我", "our team") as written. Write in
{lang}. Hard limit: {max_tokens} tokens. Reply with JSON only: {{"summary": "..."}}"""

_SPACE = re.compile(r"[\s\W_]+", re.UNICODE)


def _key(item: str) -> str:
    return _SPACE.sub("", item.lower())


def unique_items(items: list[str]) -> list[str]:
    """Drop empty items, exact duplicates and items contained in a longer one (order kept)."""
    cleaned = [normalize(i).strip() for i in items if i and i.strip()]
    keys = [_key(i) for i in cleaned]
    out = []
    for i, item in enumerate(cleaned):
        k = keys[i]
        if not k or k in keys[:i]:
            continue
        if any(k != other and k in other for other in keys):
            continue
        out.append(item)
    return out


@register
class Compress(BaseSkill):
    name = "compress"
    version = "1.0"
    description = "Consolidate many memories on one topic into one summary within max_tokens."
    input_schema = INPUT_SCHEMA
    output_schema = OUTPUT_SCHEMA

    def messages(self, input: dict) -> list[dict]:
        lang = {"zh": "Chinese", "en": "English"}.get(input.get("lang") or "", "the language of the memories")
        system = PROMPT.format(lang=lang, max_tokens=input["max_tokens"])
        items = unique_items(input["items"])
        numbered = "\n".join(f"{n}. {item}" for n, item in enumerate(items, start=1))
        topic = f"Topic: {input['topic']}\n" if input.get("topic") else ""
        return [{"role": "system", "content": system}, {"role": "user", "content": topic + numbered}]

    def output_token_limit(self, input: dict) -> int | None:
        return input["max_tokens"] * 2 + 64

    def normalize(self, input: dict, data):
        if isinstance(data, str):
            return {"summary": data.strip()}
        if isinstance(data, dict) and len(data) == 1 and isinstance(next(iter(data.values())), str):
            return {"summary": next(iter(data.values())).strip()}
        return data

    def check(self, input: dict, output: dict) -> str | None:
        used = count_tokens(output["summary"])
        if used > input["max_tokens"]:
            return f"The summary has {used} tokens; the limit is {input['max_tokens']}. Make it shorter."
        return None if output["summary"] else "The summary is empty."

    def run_offline(self, input: dict) -> dict:
        items = [
            item if item[-1:] in ".。!！?？" else item + ("。" if is_cjk(item) else ".")
            for item in unique_items(input["items"])
        ]
        text = "\n".join(items)
        return {
            "summary": extractive_summary(text, input["max_tokens"], input.get("keep"), input.get("topic"))
        }
