"""Offline extraction quality: precision and recall of the facts extracted from a labelled
set of short zh + en conversations (bench/quality/extraction/conversations.json).

    .venv/bin/python bench/quality/extraction.py             # prints the figures
    .venv/bin/python bench/quality/extraction.py --details   # and every miss and false positive

No database and no LLM: it runs what `session_extract` runs for each chunk (the user's
turns, chunked; the `fact_extract` skill's offline path; the extraction's junk filter).
A labelled fact is found when all its key strings appear (case-insensitively) in one
extracted memory: its text, plus its date (`occurred_at`) when it has one. An extracted
memory that holds no labelled fact counts against precision. Also reported: labelled junk
that became a memory, and preferences marked `kind: preference`.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from datetime import date
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DATA = Path(__file__).resolve().parent / "extraction" / "conversations.json"


def _setup() -> None:
    sys.path.insert(0, str(ROOT))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django

    django.setup()


def extract(conversation: dict) -> list[dict]:
    """The memories the offline pipeline writes for one conversation (no database)."""
    from memories.services import extraction
    from skills.builtin.fact_extract import FactExtract

    day = date.fromisoformat(conversation["session_date"])
    user_turns = [t.split(":", 1)[1].strip() for t in conversation["turns"] if t.startswith("user:")]
    text = "\n".join(user_turns)
    if hasattr(extraction, "skill_inputs"):  # the pipeline's own chunk → skill input step
        inputs = extraction.skill_inputs(text, day)
    else:  # before it existed: chunks of the text, nothing else
        inputs = [
            {"text": chunk, "session_date": day.isoformat(), "lang": None}
            for chunk in extraction.chunk_text(text, 256, 32)
        ]
    memories = []
    for skill_input in inputs:
        for fact in FactExtract().run_offline(skill_input)["facts"]:
            if not extraction.is_junk(fact["text"]):
                memories.append(fact)
    return memories


def _holds(memory: dict, keys: list[str]) -> bool:
    said = f"{memory['text']} {memory.get('occurred_at') or ''}".casefold()
    return all(key.casefold() in said for key in keys)


def score(conversations: list[dict], details: bool = False) -> dict:
    found = labelled = extracted = true_pos = junk_leaks = pref_total = pref_marked = 0
    misses, false_pos, leaks = [], [], []
    per_lang: dict[str, list[int]] = {}
    for conv in conversations:
        memories = extract(conv)
        extracted += len(memories)
        lang = per_lang.setdefault(conv["lang"], [0, 0, 0, 0])  # found, labelled, tp, extracted
        lang[1] += len(conv["facts"])
        lang[3] += len(memories)
        for fact in conv["facts"]:
            labelled += 1
            match = next((m for m in memories if _holds(m, fact["keys"])), None)
            if match is None:
                misses.append((conv["id"], fact["keys"], [m["text"] for m in memories]))
                continue
            found += 1
            lang[0] += 1
            if fact.get("kind") == "preference":
                pref_total += 1
                pref_marked += match.get("kind") == "preference" or match.get("type") == "preference"
        for memory in memories:
            if any(_holds(memory, f["keys"]) for f in conv["facts"]):
                true_pos += 1
                lang[2] += 1
            else:
                false_pos.append((conv["id"], memory["text"]))
        for junk in conv["junk"]:
            if any(junk.casefold() in m["text"].casefold() for m in memories):
                junk_leaks += 1
                leaks.append((conv["id"], junk))
    result = {
        "conversations": len(conversations),
        "labelled_facts": labelled,
        "extracted": extracted,
        "recall": round(found / labelled, 3) if labelled else None,
        "precision": round(true_pos / extracted, 3) if extracted else None,
        "junk_leaked": f"{junk_leaks} of {sum(len(c['junk']) for c in conversations)}",
        "preferences_marked": f"{pref_marked} of {pref_total} found",
        "by_lang": {
            k: {"recall": round(v[0] / v[1], 3), "precision": round(v[2] / v[3], 3) if v[3] else None}
            for k, v in sorted(per_lang.items())
        },
    }
    if details:
        result["misses"] = misses
        result["false_positives"] = false_pos
        result["junk_leaks"] = leaks
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--details", action="store_true")
    args = parser.parse_args()
    _setup()
    conversations = json.loads(DATA.read_text())
    print(json.dumps(score(conversations, args.details), ensure_ascii=False, indent=1))


if __name__ == "__main__":
    main()
