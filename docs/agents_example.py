"""A minimal agent loop against Almanac (see docs/agents.md).

    ALMANAC_URL=http://127.0.0.1:8000 ALMANAC_KEY=<agent key> ALMANAC_USER=alice \
        python docs/agents_example.py "为 Vercel 起草续约提案"

Only needs `httpx`. The LLM call is left to you (`call_llm` prints the prompt instead).
"""

from __future__ import annotations

import os
import sys

import httpx

BASE = os.environ.get("ALMANAC_URL", "http://127.0.0.1:8000").rstrip("/") + "/api/v1"
KEY = os.environ.get("ALMANAC_KEY", "")
USER = os.environ.get("ALMANAC_USER", "alice")


def call_llm(system: str, user_message: str) -> str:
    """Replace with your model call; Almanac's prompt goes into the system message."""
    print("----- context for the LLM -----")
    print(system)
    print("-------------------------------")
    return "(the model's answer would be here)"


def main(task: str) -> None:
    with httpx.Client(base_url=BASE, headers={"Authorization": f"Bearer {KEY}"}, timeout=30) as api:
        run(api, task)


def run(api: httpx.Client, task: str) -> None:
    """One turn of an agent: context → LLM → record, feedback, memory, end."""
    # 1. One session per conversation: its turns become the working window.
    session = api.post("/sessions", json={"user": USER}).raise_for_status().json()
    api.post(f"/sessions/{session['id']}/turns", json={"user": USER, "role": "user", "content": task})

    # 2. Before every LLM call: ask for the context of this task.
    context = (
        api.post(
            "/context", json={"user": USER, "task": task, "max_tokens": 2000, "session_id": session["id"]}
        )
        .raise_for_status()
        .json()
    )
    for warning in context["warnings"]:
        print(f"note: {warning['code']}: {warning['detail']}", file=sys.stderr)
    answer = call_llm(context["prompt"], task)

    # 3. Record the answer; when the conversation is over, end the session so the
    #    facts in it become long-term memories (in the background).
    api.post(f"/sessions/{session['id']}/turns", json={"user": USER, "role": "assistant", "content": answer})

    # 4. Tell Almanac which memories helped (raises or lowers their weight next time).
    for block in context["blocks"]:
        if block["kind"] in {"semantic", "episodic"}:
            for item in block["items"][:1]:
                api.post(f"/memories/{item['id']}/feedback", json={"user": USER, "signal": "adopted"})

    # 5. Something the user said that should be remembered right away.
    api.post(
        "/memories",
        json={
            "user": USER,
            "content": "I want renewal proposals to lead with pricing.",
            "memory_type": "semantic",
        },
    ).raise_for_status()

    # 6. More context for the same task, if the agent needs it (never repeats items).
    if context["next_cursor"]:
        more = api.post(
            "/context", json={"user": USER, "task": task, "cursor": context["next_cursor"]}
        ).json()
        print(f"second pass: {sum(len(b['items']) for b in more['blocks'])} more items", file=sys.stderr)

    api.post(f"/sessions/{session['id']}/end", json={"user": USER}).raise_for_status()


if __name__ == "__main__":
    main(" ".join(sys.argv[1:]) or "Draft the Vercel renewal proposal")
