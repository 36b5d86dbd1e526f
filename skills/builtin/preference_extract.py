"""`preference_extract`: only the user's preferences and habits (likes, dislikes, ways of working)."""

from __future__ import annotations

import copy

from almanac.text.dates import parse_iso
from skills.builtin.fact_extract import INPUT_SCHEMA, OUTPUT_SCHEMA, PROMPT, FactExtract, extract_offline
from skills.registry import register

PREFERENCE_PROMPT = PROMPT.replace(
    "Return every preference, event, fact and decision worth remembering",
    "Return ONLY the preferences, habits, likes, dislikes and ways of working worth remembering",
).replace('- type: "preference" (likes', '- type: always "preference" (likes')

_OUTPUT = copy.deepcopy(OUTPUT_SCHEMA)
_OUTPUT["properties"]["facts"]["items"]["properties"]["type"] = {"const": "preference"}


@register
class PreferenceExtract(FactExtract):
    name = "preference_extract"
    version = "1.0"
    description = "Preferences and habits only (same shape as fact_extract, type always 'preference')."
    input_schema = INPUT_SCHEMA
    output_schema = _OUTPUT

    def messages(self, input: dict) -> list[dict]:
        messages = super().messages(input)
        messages[0] = {"role": "system", "content": PREFERENCE_PROMPT}
        return messages

    def normalize(self, input: dict, data):
        data = super().normalize(input, data)
        if isinstance(data, dict) and isinstance(data.get("facts"), list):
            # A model that also returned other kinds: keep the preferences only.
            data = {
                "facts": [f for f in data["facts"] if isinstance(f, dict) and f.get("type") == "preference"]
            }
        return data

    def run_offline(self, input: dict) -> dict:
        facts = extract_offline(input["text"], parse_iso(input.get("session_date")))
        return {"facts": [f for f in facts if f["type"] == "preference"]}
