import json

import pytest

from almanac.search import count_tokens
from skills.llm import LLMClient, LLMInvalidOutput, LLMRejected, LLMUnavailable, ReplyError, extract_json
from skills.models import SkillRun
from skills.services import SkillFailed, skill_run

pytestmark = pytest.mark.django_db

GOOD = {
    "facts": [
        {"text": "I prefer window seats.", "type": "preference", "importance": 0.7, "occurred_at": None}
    ]
}
FACT_INPUT = {"text": "User: I prefer window seats.", "session_date": "2025-03-20"}


def test_good_reply(chat_server):
    chat_server.script = [json.dumps(GOOD)]
    assert skill_run(name="fact_extract", input=FACT_INPUT) == GOOD
    request = chat_server.requests[0]
    assert chat_server.paths == ["/v1/chat/completions"]
    assert chat_server.headers[0]["Authorization"] == "Bearer sk-test"
    assert (request["model"], request["temperature"]) == ("test-model", 0)
    assert request["response_format"] == {"type": "json_object"}
    assert "I prefer window seats." in chat_server.user_messages(0)[0]
    assert "2025-03-20" in chat_server.user_messages(0)[0]
    run = SkillRun.objects.get()
    assert (run.status, run.used_llm, run.attempts, run.error) == ("success", True, 1, "")


def test_fenced_reply_with_trailing_commas_is_repaired(chat_server):
    chat_server.script = [
        'Sure! Here are the facts:\n```json\n{"facts": [{"text": "我喜欢喝绿茶。", "type": "preference", '
        '"importance": 0.6, "occurred_at": null,},],}\n```\nLet me know if you need more.'
    ]
    out = skill_run(name="fact_extract", input={"text": "用户：我喜欢喝绿茶。"})
    assert out["facts"][0]["text"] == "我喜欢喝绿茶。"
    assert SkillRun.objects.get().attempts == 1


def test_invalid_reply_is_retried_with_the_validation_error(chat_server):
    chat_server.script = [json.dumps({"facts": "none"}), json.dumps(GOOD)]
    assert skill_run(name="fact_extract", input=FACT_INPUT) == GOOD
    assert len(chat_server.requests) == 2
    retry = chat_server.user_messages(1)[-1]
    assert "not usable" in retry and "facts" in retry and "is not of type 'array'" in retry
    assert chat_server.requests[1]["messages"][-2] == {
        "role": "assistant",
        "content": json.dumps({"facts": "none"}),
    }
    run = SkillRun.objects.get()
    assert (run.status, run.attempts) == ("success", 2)
    assert "attempt 1" in run.error and "is not of type 'array'" in run.error  # kept for the admin


def test_sloppy_fields_from_local_models_are_normalized(chat_server):
    reply = [
        {
            "text": "We met Acme on 2025-03-14.",
            "type": "Event",
            "importance": "0.9",
            "occurred_at": "2025-03-14",
        },
        {"content": "Budget is 30万元", "type": "unknown", "importance": 3},
    ]
    chat_server.script = [json.dumps(reply)]
    out = skill_run(name="fact_extract", input=FACT_INPUT)
    assert out["facts"] == [
        {
            "text": "We met Acme on 2025-03-14.",
            "type": "event",
            "importance": 0.9,
            "occurred_at": "2025-03-14",
        },
        {"text": "Budget is 30万元", "type": "fact", "importance": 0.3, "occurred_at": None},  # 3 of 10
    ]


def test_relative_dates_and_percentages_from_models_are_resolved(chat_server):
    reply = {
        "facts": [
            {
                "text": "We met Acme last Friday.",
                "type": "event",
                "importance": "80%",
                "occurred_at": "last Friday",
            },
            {"text": "上周五和王伟开会。", "type": "event", "importance": "high", "occurred_at": None},
            {"text": "I like tea.", "type": "preference", "importance": 60, "occurred_at": "someday"},
        ]
    }
    chat_server.script = [json.dumps(reply, ensure_ascii=False)]
    out = skill_run(name="fact_extract", input=FACT_INPUT)  # session date 2025-03-20
    assert [(f["importance"], f["occurred_at"]) for f in out["facts"]] == [
        (0.8, "2025-03-14"),
        (0.8, "2025-03-14"),
        (0.6, None),
    ]


def test_invalid_every_time_falls_back_to_offline(chat_server):
    chat_server.script = ["I cannot help with that."] * 3
    out = skill_run(name="fact_extract", input=FACT_INPUT)
    assert out["facts"][0]["type"] == "preference"  # the offline extractor's result
    run = SkillRun.objects.get()
    assert (run.status, run.used_llm, run.attempts) == ("fallback", False, 3)
    assert "no JSON" in run.error
    assert len(chat_server.requests) == 3  # 1 + LLM_MAX_RETRIES


def test_timeout_is_recorded_and_falls_back(chat_server, settings):
    settings.LLM_TIMEOUT = 0.2
    settings.LLM_MAX_RETRIES = 1
    chat_server.script = [{"sleep": 0.6, "content": json.dumps(GOOD)}] * 2
    out = skill_run(name="summarize", input={"text": "Acme renewed for $1.2M.", "max_tokens": 20})
    assert out == {"summary": "Acme renewed for $1.2M."}
    run = SkillRun.objects.get()
    assert (run.status, run.attempts) == ("fallback", 2)
    assert "timeout" in run.error


def test_timeout_of_a_prompt_only_skill_is_a_failed_run(chat_server, settings):
    from skills.models import Skill

    settings.LLM_TIMEOUT = 0.2
    settings.LLM_MAX_RETRIES = 0
    Skill.objects.create(
        name="weekly_report",
        prompt="Write a weekly report for {team}.",
        output_schema={
            "type": "object",
            "properties": {"report": {"type": "string"}},
            "required": ["report"],
        },
    )
    chat_server.script = [{"sleep": 0.6, "content": '{"report": "late"}'}]
    with pytest.raises(SkillFailed) as info:
        skill_run(name="weekly_report", input={"team": "Sales"}, trigger="test")
    run = SkillRun.objects.get(id=info.value.run_id)
    assert (run.status, run.attempts, run.output) == ("failed", 1, None)
    assert "timeout" in run.error


def test_prompt_only_skill_renders_its_prompt(chat_server):
    from skills.models import Skill

    Skill.objects.create(
        name="weekly_report",
        prompt="Write a weekly report for {team}.",
        output_schema={
            "type": "object",
            "properties": {"report": {"type": "string"}},
            "required": ["report"],
        },
    )
    chat_server.script = ['{"report": "All good."}']
    assert skill_run(name="weekly_report", input={"team": "Sales"}) == {"report": "All good."}
    system, user = (m["content"] for m in chat_server.requests[0]["messages"])
    # The input is data in the user message; the system prompt only refers to the field.
    assert system.startswith('Write a weekly report for the input field "team".') and '"report"' in system
    assert "Sales" not in system and user == '<input>\n{"team": "Sales"}\n</input>'


def test_server_errors_are_retried(chat_server):
    chat_server.script = [{"status": 503, "body": "overloaded"}, json.dumps(GOOD)]
    assert skill_run(name="fact_extract", input=FACT_INPUT) == GOOD
    run = SkillRun.objects.get()
    assert (run.status, run.attempts) == ("success", 2)


def test_rate_limit_honours_retry_after_bounded(chat_server, llm_sleeps):
    chat_server.script = [
        {"status": 429, "body": "slow down", "headers": {"Retry-After": "0.01"}},
        {"status": 429, "body": "slow down", "headers": {"Retry-After": "30"}},
        json.dumps(GOOD),
    ]
    assert skill_run(name="fact_extract", input=FACT_INPUT) == GOOD
    # 0.01 s as asked; 30 s is bounded by LLM_RETRY_AFTER_MAX (0.05 s in these tests).
    assert llm_sleeps == [0.01, 0.05]
    assert len(chat_server.requests) == 3


def test_client_error_is_not_retried(chat_server):
    chat_server.script = [{"status": 401, "body": "bad key"}]
    out = skill_run(name="fact_extract", input=FACT_INPUT)
    assert out["facts"]  # offline fallback
    run = SkillRun.objects.get()
    assert (run.status, run.attempts) == ("fallback", 1) and "401" in run.error


def test_server_without_json_mode_is_retried_without_it(chat_server):
    chat_server.script = [
        {"status": 400, "body": '{"error": "unknown field response_format"}'},
        json.dumps(GOOD),
    ]
    assert skill_run(name="fact_extract", input=FACT_INPUT) == GOOD
    assert "response_format" in chat_server.requests[0] and "response_format" not in chat_server.requests[1]


def test_llm_summary_over_budget_is_retried_then_extractive(chat_server):
    long = "word " * 100
    chat_server.script = [json.dumps({"summary": long})] * 3
    text = (
        "Acme renewed the contract for $1.2M on 2025-03-12. The lunch was nice and the weather was fine too."
    )
    out = skill_run(name="summarize", input={"text": text, "max_tokens": 20})
    assert count_tokens(out["summary"]) <= 20 and "$1.2M" in out["summary"]
    assert "limit is 20" in chat_server.user_messages(1)[-1]
    assert SkillRun.objects.get().status == "fallback"


def test_llm_summary_within_budget_is_used(chat_server):
    chat_server.script = ['{"summary": "Acme renewed for $1.2M."}']
    text = (
        "Acme renewed the contract for $1.2M on 2025-03-12. The lunch was nice and the weather was fine too."
    )
    assert skill_run(name="summarize", input={"text": text, "max_tokens": 20}) == {
        "summary": "Acme renewed for $1.2M."
    }
    assert chat_server.requests[0]["max_tokens"] == 20 * 2 + 64


def test_connection_refused_is_unavailable(settings):
    import socket

    with socket.socket() as sock:  # a port that was free a moment ago: nothing listens there
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    client = LLMClient(base_url=f"http://127.0.0.1:{port}/v1", timeout=1, max_retries=1)
    settings.LLM_BACKOFF = 0.0
    with pytest.raises(LLMUnavailable):
        client.complete_json([{"role": "user", "content": "x"}], schema={"type": "object"})
    assert client.attempts == 2 and "connection error" in client.errors[0]


def test_client_raises_typed_errors(chat_server):
    client = LLMClient.from_settings()
    chat_server.script = [{"status": 404, "body": "no such model"}]
    with pytest.raises(LLMRejected):
        client.complete_json([{"role": "user", "content": "x"}], schema={"type": "object"})
    client = LLMClient.from_settings()
    chat_server.script = ["nope", "still nope", "no"]
    with pytest.raises(LLMInvalidOutput):
        client.complete_json([{"role": "user", "content": "x"}], schema={"type": "object"})


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ('{"a": 1}', {"a": 1}),
        ('```json\n{"a": 1}\n```', {"a": 1}),
        ('```\n{"a": [1, 2,],}\n```', {"a": [1, 2]}),
        ("Here you go: {'a': 'x'} hope this helps", {"a": "x"}),
        ('<think>the user wants {"b": 2}</think>{"a": 1}', {"a": 1}),
        ('The answer is {"a": 1} and {"b": 2}', {"a": 1}),
        ('{"a": {"b": "trunc', {"a": {"b": "trunc"}}),
        ('[{"text": "x"}]', [{"text": "x"}]),
        ('Use the {name} field like this:\n```json\n{"a": 1}\n```', {"a": 1}),
    ],
)
def test_extract_json(reply, expected):
    assert extract_json(reply) == expected


@pytest.mark.parametrize("reply", ["", "no json at all", "```\n```"])
def test_extract_json_without_json(reply):
    with pytest.raises(ReplyError):
        extract_json(reply)


def test_truncated_reply_drops_the_cut_off_fact(chat_server):
    reply = '{"facts": [{"text": "I prefer tea.", "type": "preference", "importance": 0.6, "occurred_at": null}, {"text": "We met Ac'
    chat_server.script = [{"content": reply, "finish_reason": "length"}]
    out = skill_run(name="fact_extract", input=FACT_INPUT)
    assert out == {
        "facts": [{"text": "I prefer tea.", "type": "preference", "importance": 0.6, "occurred_at": None}]
    }


def test_max_tokens_over_the_context_is_dropped(chat_server, settings):
    settings.LLM_MAX_OUTPUT_TOKENS = 100
    chat_server.script = [
        {
            "status": 400,
            "body": '{"error": "max_tokens is too large: 100. This model\'s maximum context length is 64"}',
        },
        '{"summary": "Acme renewed."}',
    ]
    assert skill_run(name="summarize", input={"text": "Acme renewed the deal. " * 20, "max_tokens": 300}) == {
        "summary": "Acme renewed."
    }
    assert chat_server.requests[0]["max_tokens"] == 100  # capped by LLM_MAX_OUTPUT_TOKENS
    assert "max_tokens" not in chat_server.requests[1]


def test_json_schema_response_format_degrades_step_by_step(chat_server, settings):
    from skills.builtin.summarize import OUTPUT_SCHEMA

    settings.LLM_RESPONSE_FORMAT = "json_schema"
    chat_server.script = [
        {"status": 400, "body": '{"error": "json_schema is not supported"}'},
        {"status": 400, "body": '{"error": "unknown field: response_format"}'},
        '{"summary": "Acme renewed."}',
    ]
    assert skill_run(name="summarize", input={"text": "Acme renewed the deal. " * 20, "max_tokens": 30}) == {
        "summary": "Acme renewed."
    }
    formats = [r.get("response_format") for r in chat_server.requests]
    assert formats == [
        {"type": "json_schema", "json_schema": {"name": "output", "schema": OUTPUT_SCHEMA}},
        {"type": "json_object"},
        None,
    ]


@pytest.mark.parametrize(
    "reply",
    [
        '{"result": {"facts": [{"text": "I prefer tea.", "type": "preference", "importance": 0.6, "occurred_at": null}]}}',
        '{"memories": [{"text": "I prefer tea.", "type": "preference", "importance": 0.6, "occurred_at": null}]}',
    ],
)
def test_wrapped_facts_are_unwrapped(chat_server, reply):
    chat_server.script = [reply]
    assert skill_run(name="fact_extract", input=FACT_INPUT)["facts"][0]["text"] == "I prefer tea."


def test_summary_under_another_key_is_accepted(chat_server):
    chat_server.script = ['{"摘要": "Acme 续约。"}']
    assert skill_run(name="summarize", input={"text": "Acme 续约了合同。" * 30, "max_tokens": 30}) == {
        "summary": "Acme 续约。"
    }
