"""The LLM client (skills.llm) and skills run through it: parsing, repair, retries, backoff,
deadlines, redaction, and the fallback to the offline path."""

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from almanac.search.tokens import count_tokens
from skills.llm import LLMClient, LLMInvalidOutput, LLMRejected, LLMUnavailable, ReplyError, extract_json
from skills.models import SkillRun
from skills.services import skill_run

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


SCHEMA = {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]}
ASK = [{"role": "user", "content": "x"}]


def completion(message) -> str:
    return json.dumps({"choices": [{"index": 0, "finish_reason": "stop", "message": message}]})


# --- LLM_TIMEOUT bounds the whole request ---------------------------------------------


@pytest.fixture
def trickle_server():
    """Sends the headers at once, then one space every 0.3 s (3 s in all), then a reply."""
    reply = completion({"role": "assistant", "content": '{"a": 1}'}).encode()

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_POST(self):
            self.rfile.read(int(self.headers.get("Content-Length", 0)))
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(10 + len(reply)))
            self.end_headers()
            try:
                for _ in range(10):
                    self.wfile.write(b" ")
                    self.wfile.flush()
                    time.sleep(0.3)
                self.wfile.write(reply)
            except (BrokenPipeError, ConnectionResetError):
                pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True).start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    httpd.shutdown()
    httpd.server_close()


def test_timeout_bounds_a_trickling_reply(trickle_server):
    client = LLMClient(base_url=trickle_server, timeout=1.0, max_retries=0)
    started = time.monotonic()
    with pytest.raises(LLMUnavailable):
        client.complete_json(ASK, schema=SCHEMA)
    assert time.monotonic() - started < 2.0  # not the 3 s the server takes
    assert "timeout after 1.0s" in client.errors[0]


# --- malformed completions are retried; odd Retry-After values are ignored -------------


def test_message_that_is_not_an_object_is_retried(chat_server):
    chat_server.script = [{"body": completion("oops")}, '{"a": 1}']
    client = LLMClient.from_settings()
    assert client.complete_json(ASK, schema=SCHEMA) == {"a": 1}
    assert client.attempts == 2 and "not a chat completion" in client.errors[0]


def test_content_as_a_list_of_text_parts_is_joined(chat_server):
    parts = [
        {"type": "text", "text": '{"a": '},
        {"type": "image_url", "image_url": {}},
        {"type": "text", "text": "1}"},
    ]
    chat_server.script = [{"body": completion({"role": "assistant", "content": parts})}]
    client = LLMClient.from_settings()
    assert client.complete_json(ASK, schema=SCHEMA) == {"a": 1}


@pytest.mark.parametrize("content", [{"text": '{"a": 1}'}, 42, [{"type": "text", "text": None}]])
def test_content_of_another_shape_is_an_invalid_reply(chat_server, content):
    chat_server.script = [{"body": completion({"role": "assistant", "content": content})}] * 3
    client = LLMClient.from_settings()
    with pytest.raises(LLMInvalidOutput):
        client.complete_json(ASK, schema=SCHEMA)
    assert client.attempts == 3  # retried, not an AttributeError/TypeError on the first


@pytest.mark.parametrize("value", ["nan", "inf", "-5"])
def test_unusable_retry_after_keeps_the_backoff(chat_server, llm_sleeps, value):
    chat_server.script = [{"status": 429, "body": "slow down", "headers": {"Retry-After": value}}, '{"a": 1}']
    client = LLMClient.from_settings()
    assert client.complete_json(ASK, schema=SCHEMA) == {"a": 1}
    assert llm_sleeps == [0.0]  # LLM_BACKOFF is 0 in these tests


# --- secrets stay out of errors and logs --------------------------------------------------


def test_api_key_is_redacted_from_the_run_error(chat_server, settings):
    settings.LLM_API_KEY = "sk-live-0123456789abcdef"
    body = '{"error": {"message": "Incorrect API key provided: sk-live-0123456789abcdef."}}'
    chat_server.script = [{"status": 401, "body": body}]
    skill_run(name="summarize", input={"text": "Acme renewed for $1.2M.", "max_tokens": 20})
    run = SkillRun.objects.get()
    assert run.status == "fallback" and "401" in run.error and "Incorrect API key" in run.error
    assert "sk-live-0123456789abcdef" not in run.error and "[redacted]" in run.error
    assert chat_server.headers[0]["Authorization"] == "Bearer sk-live-0123456789abcdef"  # still sent


def test_base_url_credentials_are_redacted_and_sent_as_basic_auth(chat_server, caplog):
    url = chat_server.url.replace("http://", "http://bob:s3cr%40t@")
    chat_server.script = [{"status": 503, "body": "bob:s3cr@t and s3cr%40t rejected"}, '{"a": 1}']
    client = LLMClient(base_url=url, timeout=2, max_retries=1)
    with caplog.at_level("INFO"):
        assert client.complete_json(ASK, schema=SCHEMA) == {"a": 1}
    assert "s3cr" not in " ".join(client.errors) and "[redacted]" in client.errors[0]
    assert "s3cr" not in caplog.text  # httpx logs the URL of every request
    assert chat_server.headers[0]["Authorization"] == "Basic Ym9iOnMzY3JAdA=="  # bob:s3cr@t


# --- a literal <think> inside the JSON is content ----------------------------------------


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        (
            '{"summary": "Engineers strip the <think> block before parsing; Acme paid $1.2M"}',
            {"summary": "Engineers strip the <think> block before parsing; Acme paid $1.2M"},
        ),
        (
            '```json\n{"summary": "the <think> tag, then $1.2M",}\n```',
            {"summary": "the <think> tag, then $1.2M"},
        ),
        ('<think>maybe {"b": 2}</think>\n<think>no</think> {"a": 1}', {"a": 1}),
    ],
)
def test_think_is_stripped_only_at_the_start(reply, expected):
    assert extract_json(reply) == expected


def test_unfinished_leading_think_has_no_json():
    with pytest.raises(ValueError):
        extract_json('<think>the user wants {"b": 2} or maybe')
