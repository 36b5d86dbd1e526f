"""A local OpenAI-compatible chat-completions server (real HTTP on 127.0.0.1, random port)."""

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest


class ChatServer:
    """Replies from a script: each item is a reply text, or a dict
    {"status": int, "body": str, "headers": {...}, "sleep": seconds, "content": str}."""

    def __init__(self):
        self.script: list = []
        self.requests: list[dict] = []
        self.headers: list[dict] = []
        self.paths: list[str] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                length = int(self.headers.get("Content-Length", 0))
                server.requests.append(json.loads(self.rfile.read(length) or b"{}"))
                server.headers.append(dict(self.headers))
                server.paths.append(self.path)
                step = server.script.pop(0) if server.script else {"status": 500, "body": "script exhausted"}
                if isinstance(step, str):
                    step = {"content": step}
                if step.get("sleep"):
                    time.sleep(step["sleep"])
                status = step.get("status", 200)
                if "content" in step:
                    body = json.dumps(
                        {
                            "id": "chatcmpl-test",
                            "object": "chat.completion",
                            "model": "test-model",
                            "choices": [
                                {
                                    "index": 0,
                                    "finish_reason": step.get("finish_reason", "stop"),
                                    "message": {"role": "assistant", "content": step["content"]},
                                }
                            ],
                        }
                    )
                else:
                    body = step.get("body", "")
                data = body.encode()
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    for key, value in step.get("headers", {}).items():
                        self.send_header(key, value)
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (timeout test)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self.thread = threading.Thread(
            target=self.httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )

    def user_messages(self, index: int) -> list[str]:
        return [m["content"] for m in self.requests[index]["messages"] if m["role"] == "user"]


@pytest.fixture
def chat_server(settings):
    server = ChatServer()
    server.thread.start()
    settings.LLM_BASE_URL = server.url
    settings.LLM_MODEL = "test-model"
    settings.LLM_API_KEY = "sk-test"
    settings.LLM_TIMEOUT = 5.0
    settings.LLM_MAX_RETRIES = 2
    settings.LLM_BACKOFF = 0.0
    settings.LLM_RETRY_AFTER_MAX = 0.05
    yield server
    server.httpd.shutdown()
    server.httpd.server_close()


@pytest.fixture
def llm_sleeps(monkeypatch):
    """What the LLM client sleeps, recorded instead of slept. Only skills.llm's view of `time`
    changes: test servers' threads (still trickling after their test) sleep for real."""
    import types

    import skills.llm

    slept: list[float] = []
    monkeypatch.setattr(
        skills.llm, "time", types.SimpleNamespace(sleep=slept.append, monotonic=time.monotonic)
    )
    return slept
