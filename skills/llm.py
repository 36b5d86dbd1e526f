"""OpenAI-compatible chat-completions client (vLLM, Ollama, llama.cpp server) for JSON output.

`LLMClient.complete_json(messages, schema=...)` asks for JSON, extracts it from whatever
came back (code fences, prose around it, <think> blocks), repairs it (`json_repair`:
trailing commas, single quotes, truncation), validates it (`jsonschema`), and on a
validation failure retries with the error appended to the conversation. Timeouts,
connection errors and 5xx are retried with backoff; 429 honours Retry-After (bounded).
Every request is an attempt; `client.attempts` and `client.errors` say what happened.
"""

from __future__ import annotations

import contextlib
import json
import re
import time
from collections.abc import Callable
from typing import Any

import httpx
import json_repair
import jsonschema
from django.conf import settings

from skills import conf

FORMATS = ("json_schema", "json_object", "none")  # strongest first
_THINK = re.compile(r"<think>.*?(?:</think>|$)", re.DOTALL | re.IGNORECASE)
_FENCE = re.compile(r"```[a-zA-Z0-9_-]*\s*\n?(.*?)(?:```|$)", re.DOTALL)


class LLMError(Exception):
    """The LLM gave no valid answer (after retries)."""


class LLMUnavailable(LLMError):
    """Timeouts, connection errors, 5xx, 429 after retries."""


class LLMRejected(LLMError):
    """A 4xx other than 429: retrying the same request would not help."""


class LLMInvalidOutput(LLMError):
    """Replies that stayed unparseable or invalid against the schema after retries."""


class _Adapted(LLMError):
    """The server rejected an optional request field; the next attempt goes without it."""


class ReplyError(ValueError):
    """One reply that could not be used; the message goes back to the model."""


def extract_json(content: str) -> Any:
    """The JSON value in a model reply: strict parse first, then fences, prose, repair.

    Fenced blocks are tried before the whole text, so braces in the prose around a fence
    ("use the {name} field:") cannot win over the fenced JSON."""
    text = _THINK.sub("", content or "").strip()
    candidates = [m.group(1).strip() for m in _FENCE.finditer(text) if m.group(1).strip()] + [text]
    for candidate in candidates:
        try:
            return json.loads(candidate)
        except ValueError:
            pass
    for candidate in candidates:
        start = min((i for i in (candidate.find("{"), candidate.find("[")) if i >= 0), default=-1)
        if start < 0:
            continue
        try:
            return json.JSONDecoder().raw_decode(candidate[start:])[0]
        except ValueError:
            pass
        repaired = json_repair.loads(candidate[start:])
        if isinstance(repaired, dict | list) and repaired not in ({}, []):
            return repaired
    raise ReplyError("The reply contained no JSON object.")


def validation_message(error: jsonschema.ValidationError) -> str:
    where = "/".join(str(p) for p in error.absolute_path) or "(root)"
    return f"at {where}: {error.message}"


_validators: dict[str, jsonschema.Draft202012Validator] = {}


def _validator(schema: dict) -> jsonschema.Draft202012Validator:
    # Building a validator (and its format checker) costs more than most validations:
    # one per distinct schema, keyed by its content so an edited admin schema gets a new one.
    key = json.dumps(schema, sort_keys=True, default=str)
    validator = _validators.get(key)
    if validator is None:
        if len(_validators) >= 256:
            _validators.clear()
        validator = jsonschema.Draft202012Validator(schema, format_checker=jsonschema.FormatChecker())
        _validators[key] = validator
    return validator


def validate(data: Any, schema: dict) -> None:
    """Raise ReplyError with the first (most relevant) schema violation."""
    validator = _validator(schema)
    error = jsonschema.exceptions.best_match(validator.iter_errors(data))
    if error is not None:
        raise ReplyError(f"The JSON does not match the schema {validation_message(error)}")


class LLMClient:
    def __init__(
        self,
        *,
        base_url: str,
        model: str = "",
        api_key: str = "",
        timeout: float = 60.0,
        max_retries: int = 2,
    ):
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.api_key = api_key
        self.timeout = timeout
        self.max_retries = max(int(max_retries), 0)
        fmt = str(conf.get("LLM_RESPONSE_FORMAT") or "none").strip().lower()
        self.response_format = fmt if fmt in FORMATS else "json_object"
        self.send_max_tokens = True
        self.truncated = False  # the last reply stopped at max_tokens (finish_reason "length")
        self.attempts = 0
        self.errors: list[str] = []

    @classmethod
    def from_settings(cls) -> LLMClient:
        return cls(
            base_url=settings.LLM_BASE_URL,
            model=settings.LLM_MODEL,
            api_key=settings.LLM_API_KEY,
            timeout=settings.LLM_TIMEOUT,
            max_retries=settings.LLM_MAX_RETRIES,
        )

    # --- HTTP -------------------------------------------------------------------------

    def _body(self, messages: list[dict], max_tokens: int | None, schema: dict) -> dict:
        body: dict[str, Any] = {"model": self.model, "messages": messages, "temperature": 0, "stream": False}
        if max_tokens and self.send_max_tokens:
            body["max_tokens"] = min(max_tokens, int(conf.get("LLM_MAX_OUTPUT_TOKENS")))
        if self.response_format == "json_schema":
            body["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": "output", "schema": schema},
            }
        elif self.response_format == "json_object":
            body["response_format"] = {"type": "json_object"}
        return body

    def _wait(self, response: httpx.Response | None, failure: int) -> None:
        delay = float(conf.get("LLM_BACKOFF")) * (2 ** (failure - 1))
        if response is not None and response.status_code == 429:
            with contextlib.suppress(ValueError):  # an HTTP date: keep the backoff
                delay = float(response.headers.get("Retry-After", delay))
        time.sleep(min(max(delay, 0.0), float(conf.get("LLM_RETRY_AFTER_MAX"))))

    def _post(self, http: httpx.Client, messages: list[dict], max_tokens: int | None, schema: dict) -> str:
        """One request → the reply text. Raises LLMUnavailable/LLMRejected, or ReplyError."""
        self.attempts += 1
        try:
            response = http.post(
                f"{self.base_url}/chat/completions", json=self._body(messages, max_tokens, schema)
            )
        except httpx.TimeoutException as exc:
            raise LLMUnavailable(f"timeout after {self.timeout}s ({type(exc).__name__})") from exc
        except httpx.HTTPError as exc:
            raise LLMUnavailable(f"connection error: {exc}") from exc
        if response.status_code == 429 or response.status_code >= 500:
            error = LLMUnavailable(f"HTTP {response.status_code}: {response.text[:300]}")
            error.response = response
            raise error
        if response.status_code >= 400:
            self._adapt(response)
            raise LLMRejected(f"HTTP {response.status_code}: {response.text[:300]}")
        try:
            choice = response.json()["choices"][0]
            message = choice["message"]
        except (ValueError, KeyError, IndexError, TypeError) as exc:
            raise ReplyError("The response is not a chat completion.") from exc
        self.truncated = choice.get("finish_reason") == "length"
        return message.get("content") or ""

    def _adapt(self, response: httpx.Response) -> None:
        """A 400 about an optional field (JSON mode, or max_tokens over the context) → drop it."""
        if response.status_code != 400:
            return
        text = response.text.lower()
        if self.response_format != "none" and any(
            k in text for k in ("response_format", "json_object", "json_schema")
        ):
            rejected = self.response_format
            self.response_format = FORMATS[FORMATS.index(rejected) + 1]  # the prompt asks for JSON anyway
            raise _Adapted(
                f"server rejected response_format {rejected}; retrying with {self.response_format}"
            )
        if self.send_max_tokens and (
            "max_tokens" in text or "context length" in text or "maximum context" in text
        ):
            self.send_max_tokens = False
            raise _Adapted("server rejected max_tokens; retrying without it")

    # --- JSON -------------------------------------------------------------------------

    def complete_json(
        self,
        messages: list[dict],
        *,
        schema: dict,
        normalize: Callable[[Any], Any] | None = None,
        check: Callable[[Any], str | None] | None = None,
        max_tokens: int | None = None,
    ) -> Any:
        """A reply that validates against `schema` (and passes `check`), or LLMError."""
        conversation = list(messages)
        last: Exception | None = None
        headers = {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}
        with httpx.Client(timeout=self.timeout, headers=headers) as http:
            for attempt in range(1, self.max_retries + 2):
                content = None
                try:
                    content = self._post(http, conversation, max_tokens, schema)
                    return self._accept(content, schema, normalize, check)
                except _Adapted as exc:
                    self.errors.append(f"attempt {attempt}: {exc}")
                    last = exc
                except LLMRejected as exc:
                    self.errors.append(f"attempt {attempt}: {exc}")
                    raise
                except LLMUnavailable as exc:
                    self.errors.append(f"attempt {attempt}: {exc}")
                    last = exc
                    if attempt <= self.max_retries:
                        self._wait(getattr(exc, "response", None), attempt)
                except ReplyError as exc:
                    self.errors.append(f"attempt {attempt}: {exc}")
                    last = exc
                    conversation = [*messages, *self._correction(content, exc, schema)]
        if isinstance(last, ReplyError):
            raise LLMInvalidOutput(f"no valid JSON after {self.attempts} attempts: {last}")
        raise LLMUnavailable(f"LLM unavailable after {self.attempts} attempts: {last}")

    def _accept(self, content: str, schema: dict, normalize, check) -> Any:
        data = extract_json(content)
        if normalize is not None:
            data = normalize(data)
        validate(data, schema)
        problem = check(data) if check is not None else None
        if problem:
            raise ReplyError(problem)
        return data

    @staticmethod
    def _correction(content: str | None, error: Exception, schema: dict) -> list[dict]:
        turns = [{"role": "assistant", "content": content}] if content else []
        note = (
            f"Your previous reply was not usable: {error}\n"
            f"Reply again with JSON only, matching this JSON schema: {json.dumps(schema, ensure_ascii=False)}"
        )
        return [*turns, {"role": "user", "content": note}]
