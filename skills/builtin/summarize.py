"""`summarize`: a summary that never exceeds `max_tokens` (cl100k tokens, as everywhere)."""

from __future__ import annotations

from almanac.search.tokens import count_tokens
from almanac.text.extractive import extractive_summary
from skills.registry import BaseSkill, register

MAX_TEXT = 2_000_000

INPUT_SCHEMA = {
    "type": "object",
    "properties": {
        "text": {"type": "string", "maxLength": MAX_TEXT},
        "max_tokens": {"type": "integer", "minimum": 1, "maximum": 100_000},
        "title": {"type": ["string", "null"], "maxLength": 1000},
        "lang": {"type": ["string", "null"], "maxLength": 16},  # "zh", "en"; others mean auto
        "keep": {"type": "array", "items": {"type": "string", "maxLength": 200}, "maxItems": 500},
    },
    "required": ["text", "max_tokens"],
    "additionalProperties": False,
}
OUTPUT_SCHEMA = {
    "type": "object",
    "properties": {"summary": {"type": "string"}},
    "required": ["summary"],
    "additionalProperties": False,
}

PROMPT = """Summarize the text for another AI assistant that will rely on it.
Hard limit: at most {max_tokens} tokens (about {words} English words or {chars} Chinese
characters). Keep every name, date, amount, identifier (like PRD-2024-013) and technical
term that matters exactly as written{keep}. Write in {lang}. No preamble.
Reply with JSON only: {{"summary": "..."}}"""


@register
class Summarize(BaseSkill):
    name = "summarize"
    version = "1.3"
    description = "A summary within max_tokens that keeps names, dates, amounts, ids and terms."
    input_schema = INPUT_SCHEMA
    output_schema = OUTPUT_SCHEMA

    def messages(self, input: dict) -> list[dict]:
        budget = input["max_tokens"]
        keep = input.get("keep") or []
        lang = {"zh": "Chinese", "en": "English"}.get(input.get("lang") or "", "the language of the text")
        system = PROMPT.format(
            max_tokens=budget,
            words=max(int(budget * 0.7), 1),
            chars=max(int(budget * 1.2), 1),
            keep=(", especially: " + ", ".join(keep[:50])) if keep else "",
            lang=lang,
        )
        title = f"Title: {input['title']}\n\n" if input.get("title") else ""
        return [{"role": "system", "content": system}, {"role": "user", "content": title + input["text"]}]

    def output_token_limit(self, input: dict) -> int | None:
        return input["max_tokens"] * 2 + 64

    def normalize(self, input: dict, data):
        if isinstance(data, str):
            return {"summary": data.strip()}
        if isinstance(data, dict) and isinstance(data.get("summary"), str):
            return {"summary": data["summary"].strip()}
        if isinstance(data, dict) and len(data) == 1 and isinstance(next(iter(data.values())), str):
            return {"summary": next(iter(data.values())).strip()}  # {"摘要": "..."}, {"text": "..."}
        return data

    def check(self, input: dict, output: dict) -> str | None:
        used = count_tokens(output["summary"])
        if used > input["max_tokens"]:
            return f"The summary has {used} tokens; the limit is {input['max_tokens']}. Make it shorter."
        if not output["summary"] and input["text"].strip():
            return "The summary is empty."
        return None

    def run_offline(self, input: dict) -> dict:
        return {
            "summary": extractive_summary(
                input["text"], input["max_tokens"], input.get("keep"), input.get("title")
            )
        }
