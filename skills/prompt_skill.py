"""Prompt-only skills: a `Skill` row (prompt + schemas) run through the LLM, no offline path."""

from __future__ import annotations

import json
import re

from skills.registry import BaseSkill

_FIELD = re.compile(r"\{(\w+)\}")


def render(prompt: str, input: dict) -> str:
    """`{field}` → that input value (other braces are left alone, so JSON examples survive)."""

    def value(match: re.Match) -> str:
        key = match.group(1)
        if key not in input:
            return match.group()
        item = input[key]
        return item if isinstance(item, str) else json.dumps(item, ensure_ascii=False)

    return _FIELD.sub(value, prompt)


class PromptSkill(BaseSkill):
    has_offline = False

    def __init__(self, row):
        self.row = row
        self.name = row.name
        self.version = row.version
        self.description = row.description
        self.input_schema = row.input_schema or {"type": "object"}
        self.output_schema = row.output_schema or {"type": "object"}
        self.events = tuple(row.events or ())

    def messages(self, input: dict) -> list[dict]:
        system = (
            f"{render(self.row.prompt, input)}\n\nReply with JSON only, matching this JSON schema: "
            f"{json.dumps(self.output_schema, ensure_ascii=False)}"
        )
        return [
            {"role": "system", "content": system},
            {"role": "user", "content": json.dumps(input, ensure_ascii=False)},
        ]
