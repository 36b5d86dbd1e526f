"""Set (a): long multi-session English conversations with questions and evidence turns.

Deterministic for a seed: `build(seed)` deals the storylines of `stories_en` to pairs of
speakers, spreads each story's beats over later and later sessions, pads every session
with greetings, small talk and goodbyes to about 20 turns, and writes the questions with
the ids of their evidence turns. Every turn becomes one episodic memory of the pair's
owner (`Name: text`, `occurred_at` = the session date).
"""

from __future__ import annotations

import random
import re
from datetime import date, timedelta

from bench.quality.stories_en import ADVERSARIAL, CLOSINGS, GREETINGS, SMALL_TALK, STORIES

PAIRS = [("Maya", "Daniel"), ("Priya", "Jonas"), ("Grace", "Omar"), ("Leo", "Sofia")]
AGO = [
    "yesterday",
    "last weekend",
    "on Saturday",
    "this morning",
    "two days ago",
    "last Friday",
    "a few days ago",
]
STOPWORDS = set(
    """a an the and or but of to in on at for with by from as is are was were be been being do does did
    what which who whom whose when where why how that this these those it its it's i me my you your he him
    his she her they them their we us our any some has have had not no yes into about after before than
    then there here up down out over again so very just also too can could would should will shall may might
    s t""".split()
)


def _stems():
    import Stemmer

    stemmer = Stemmer.Stemmer("english")
    return lambda text: {
        stemmer.stemWord(w)
        for w in re.findall(r"[a-z0-9]+", text.lower().replace("'s", ""))
        if w not in STOPWORDS
    }


def _fill(text: str, values: dict) -> str:
    return text.format(**values)


def build(seed: int = 0, pairs: int = 4, sessions: int = 10, stories_per_pair: int = 11) -> dict:
    """{"conversations": [...], "questions": [...]} for `pairs` speaker pairs."""
    rng = random.Random(seed)
    stems = _stems()
    deck = [s for s in STORIES for _ in range((pairs * stories_per_pair) // len(STORIES) + 1)]
    rng.shuffle(deck)
    option_use: dict[str, int] = {}
    conversations, questions = [], []
    for c, (a_name, b_name) in enumerate(PAIRS[:pairs]):
        conv_id = f"c{c}"
        chosen: list[dict] = []
        while len(chosen) < stories_per_pair and deck:
            story = deck.pop()
            if any(s["id"] == story["id"] for s in chosen):
                deck.insert(0, story)
                continue
            chosen.append(story)
        start = date(2025, 1, 6) + timedelta(days=rng.randint(0, 90))
        dates = [start]
        for _ in range(sessions - 1):
            dates.append(dates[-1] + timedelta(days=rng.randint(4, 21)))
        # beats per session: (story index, beat index)
        placed: list[list[tuple[int, int]]] = [[] for _ in range(sessions)]
        story_vals = []
        for si, story in enumerate(chosen):
            n = option_use.get(story["id"], 0)
            option_use[story["id"]] = n + 1
            x_first = rng.random() < 0.5
            x, y = (a_name, b_name) if x_first else (b_name, a_name)
            values = dict(story["options"][n % len(story["options"])], X=x, Y=y)
            story_vals.append(values)
            for bi, s in enumerate(sorted(rng.sample(range(sessions), len(story["beats"])))):
                placed[s].append((si, bi))
        turn_ids: dict[tuple[int, int, int], str] = {}  # (story, beat, turn) -> turn id
        agos: dict[str, str] = {}
        conv_sessions = []
        for s in range(sessions):
            turns: list[tuple[str, str, tuple | None]] = []  # speaker, text, key

            def add_exchange(lines, first: str, second: str, turns=turns):
                for role, text in lines:
                    speaker = first if role == "A" else second
                    turns.append((speaker, text.format(B=second if role == "A" else first), None))

            pair = (a_name, b_name) if rng.random() < 0.5 else (b_name, a_name)
            add_exchange(rng.choice(GREETINGS), *pair)
            beats = placed[s][:]
            rng.shuffle(beats)
            fillers = rng.sample(SMALL_TALK, k=min(len(SMALL_TALK), 6))
            for si, bi in beats:
                values = dict(story_vals[si], ago=rng.choice(AGO))
                for ti, (role, text) in enumerate(chosen[si]["beats"][bi]):
                    speaker = values["X"] if role == "X" else values["Y"]
                    turns.append((speaker, _fill(text, values), (si, bi, ti)))
                    if "{ago}" in text:
                        agos[f"{si}:{bi}:{ti}"] = values["ago"]
                if fillers and rng.random() < 0.6:
                    p = (a_name, b_name) if rng.random() < 0.5 else (b_name, a_name)
                    add_exchange(fillers.pop(), *p)
            while len(turns) < 18 and fillers:
                p = (a_name, b_name) if rng.random() < 0.5 else (b_name, a_name)
                add_exchange(fillers.pop(), *p)
            add_exchange(rng.choice(CLOSINGS), *pair)
            session_turns = []
            for i, (speaker, text, key) in enumerate(turns):
                tid = f"{conv_id}:s{s}:t{i}"
                if key is not None:
                    turn_ids[key] = tid
                session_turns.append({"id": tid, "speaker": speaker, "text": text})
            conv_sessions.append({"date": dates[s].isoformat(), "turns": session_turns})
        conversations.append(
            {
                "id": conv_id,
                "owner": f"conv_{a_name.lower()}",
                "speakers": [a_name, b_name],
                "sessions": conv_sessions,
            }
        )
        texts = {t["id"]: t["text"] for sess in conv_sessions for t in sess["turns"]}
        names = {a_name.lower(), b_name.lower()}

        def ask(category: str, text: str, evidence: list[str], texts=texts, names=names, conv_id=conv_id):
            if category == "paraphrase":
                shared = set().union(*(stems(texts[e]) for e in evidence)) & stems(text) - names
                if shared:
                    category = "single"
            questions.append(
                {"id": f"{conv_id}-q{len([q for q in questions if q['conv'] == conv_id])}", "conv": conv_id,
                 "category": category, "question": text, "evidence": evidence}
            )  # fmt: skip

        for si, story in enumerate(chosen):
            values = story_vals[si]
            for category, text, refs in story["questions"]:
                ask(category, _fill(text, values), [turn_ids[(si, b, t)] for b, t in refs])
            # relative-time questions anchored on the session date, as an agent would ask
            for (ssi, b, t), tid in turn_ids.items():
                ago = agos.get(f"{ssi}:{b}:{t}")
                if ssi == si and ago and story["beats"][b][t][0] == "X" and rng.random() < 0.35:
                    day = conv_sessions[int(tid.split(":s")[1].split(":")[0])]["date"]
                    ask("temporal", f"On {_long(day)}, what did {values['X']} say happened {ago}?", [tid])
        # ordering across stories: which came first
        events = [
            (si, turn_ids[(si, *story.get("event_at", (0, 0)))], _fill(story["event"], story_vals[si]))
            for si, story in enumerate(chosen)
        ]
        for _ in range(4):
            (s1, t1, e1), (s2, t2, e2) = rng.sample(events, 2)
            x = story_vals[s1]["X"]
            if story_vals[s2]["X"] != x:
                continue
            ask("temporal", f"Which happened first: {x} decided to {e1}, or {x} decided to {e2}?", [t1, t2])
        for text in rng.sample(ADVERSARIAL, 5):
            x, y = (a_name, b_name) if rng.random() < 0.5 else (b_name, a_name)
            ask("adversarial", text.format(X=x, Y=y), [])
    return {"conversations": conversations, "questions": questions}


def _long(day: str) -> str:
    d = date.fromisoformat(day)
    return f"{d.day} {d.strftime('%B %Y')}"


if __name__ == "__main__":
    from collections import Counter

    data = build()
    turns = sum(len(s["turns"]) for c in data["conversations"] for s in c["sessions"])
    print(f"{len(data['conversations'])} conversations, {turns} turns, {len(data['questions'])} questions")
    print(Counter(q["category"] for q in data["questions"]))
    for q in data["questions"][:12]:
        print(q)
    sess = data["conversations"][0]["sessions"][1]
    print(sess["date"])
    for t in sess["turns"]:
        print(f"  {t['speaker']}: {t['text']}")
