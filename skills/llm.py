"""OpenAI-compatible chat-completions client (vLLM, Ollama, llama.cpp server) for JSON output.

`LLMClient.complete_json(messages, schema=...)` asks for JSON, extracts it from whatever
came back (code fences, prose around it, a leading <think> block), repairs it (`json_repair`:
trailing commas, single quotes, truncation), validates it (`jsonschema`), and on a
validation failure retries with the error appended to the conversation. Timeouts,
connection errors and 5xx are retried with backoff; 429 honours Retry-After (bounded).
`timeout` bounds each attempt as a whole (a server trickling bytes cannot hold it open).
Every request is an attempt; `client.attempts` and `client.errors` say what happened; the API
key and any credentials in the base URL are redacted from every error text.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import math
import re
import time
from collections.abc import Callable
from typing import Any
from urllib.parse import unquote, urlsplit, urlunsplit

import httpx
import json_repair
import jsonschema
from django.conf import settings

FORMATS = ("json_schema", "json_object", "none")  # strongest first
# Reasoning at the very start of a reply; an unclosed one (cut off at max_tokens) is all of it.
# Only the start: a "<think>" inside the JSON is content ("strip the <think> block").
_THINK = re.compile(r"^\s*(?:<think>.*?(?:</think>|$)\s*)+", re.DOTALL | re.IGNORECASE)
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

    The reply is parsed as it came first; only when that fails is a leading <think> block
    dropped. Fenced blocks are tried before the whole text, so braces in the prose around a
    fence ("use the {name} field:") cannot win over the fenced JSON."""
    with contextlib.suppress(ValueError):
        return json.loads(content or "")
    text = _THINK.sub("", content or "", count=1).strip()
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


def _content_text(content: Any) -> str:
    """A message's content as text: a string, or the text parts of a list of content parts
    ([{"type": "text", "text": …}], as some servers send); anything else is a ReplyError."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for part in content:
            if isinstance(part, str):
                parts.append(part)
            elif isinstance(part, dict) and part.get("type", "text") == "text":
                if not isinstance(part.get("text"), str):
                    raise ReplyError("The reply has a text part without text.")
                parts.append(part["text"])
        return "".join(parts)
    raise ReplyError(f"The reply content is a {type(content).__name__}, not text.")


def _split_userinfo(base_url: str) -> tuple[str, str]:
    """(the URL without `user:pass@`, that raw `user:pass`). The credentials go to httpx as
    `auth` (the same Basic auth httpx derives from a URL), so its request log cannot show them."""
    try:
        parts = urlsplit(base_url)
    except ValueError:
        return base_url, ""
    userinfo, at, host = parts.netloc.rpartition("@")
    return (urlunsplit(parts._replace(netloc=host)), userinfo) if at else (base_url, "")


def _secrets(api_key: str, userinfo: str) -> list[str]:
    """What `LLMClient.redact` hides: the key, and the base URL's user:pass (raw and decoded)."""
    user, _, password = userinfo.partition(":")
    found = {api_key, userinfo, unquote(userinfo), password, unquote(password)}
    if not password:  # a token as the user name
        found |= {user, unquote(user)}
    return sorted((s for s in found if s), key=len, reverse=True)


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
        self.base_url, userinfo = _split_userinfo(base_url.rstrip("/"))
        user, _, password = userinfo.partition(":")
        self._auth = (unquote(user), unquote(password)) if userinfo else None
        self._secrets = _secrets(api_key, userinfo)
        self.model = model
        self.api_key = api_key
        self.timeout = timeout
        self.max_retries = max(int(max_retries), 0)
        self.response_format = settings.LLM_RESPONSE_FORMAT  # one of FORMATS (settings checks it)
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
            body["max_tokens"] = min(max_tokens, settings.LLM_MAX_OUTPUT_TOKENS)
        if self.response_format == "json_schema":
            body["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": "output", "schema": schema},
            }
        elif self.response_format == "json_object":
            body["response_format"] = {"type": "json_object"}
        return body

    def redact(self, text: str) -> str:
        """`text` without the API key or the credentials of the base URL (error bodies echo
        "Incorrect API key provided: sk-…"; errors end up in SkillRun.error and logs)."""
        for secret in self._secrets:
            text = text.replace(secret, "[redacted]")
        return text

    def _wait(self, response: httpx.Response | None, failure: int) -> None:
        delay = settings.LLM_BACKOFF * (2 ** (failure - 1))
        if response is not None and response.status_code == 429:
            with contextlib.suppress(ValueError):  # an HTTP date: keep the backoff
                asked = float(response.headers.get("Retry-After", delay))
                if math.isfinite(asked) and asked >= 0:  # "nan", "inf", "-1": keep the backoff
                    delay = asked
        time.sleep(min(max(delay, 0.0), settings.LLM_RETRY_AFTER_MAX))

    def _post(self, http: httpx.Client, messages: list[dict], max_tokens: int | None, schema: dict) -> str:
        """One request → the reply text. Raises LLMUnavailable/LLMRejected, or ReplyError.

        httpx timeouts are per step (connect, each read), so the body is streamed and the
        attempt is abandoned once `timeout` seconds have passed since it started."""
        self.attempts += 1
        deadline = time.monotonic() + self.timeout
        url = f"{self.base_url}/chat/completions"
        try:
            with http.stream("POST", url, json=self._body(messages, max_tokens, schema)) as response:
                body = self._read(response, deadline)
        except httpx.TimeoutException as exc:
            raise LLMUnavailable(f"timeout after {self.timeout}s ({type(exc).__name__})") from exc
        except httpx.HTTPError as exc:
            raise LLMUnavailable(self.redact(f"connection error: {exc}")) from exc
        status = response.status_code
        if status == 429 or status >= 500:
            error = LLMUnavailable(self._status_error(status, body))
            error.response = response
            raise error
        if status >= 400:
            self._adapt(status, body.decode("utf-8", errors="replace"))
            raise LLMRejected(self._status_error(status, body))
        try:
            choice = json.loads(body)["choices"][0]
            message = choice["message"]
        except (ValueError, KeyError, IndexError, TypeError) as exc:
            raise ReplyError("The response is not a chat completion.") from exc
        if not isinstance(choice, dict) or not isinstance(message, dict):
            raise ReplyError("The response is not a chat completion (no message object).")
        self.truncated = choice.get("finish_reason") == "length"
        return _content_text(message.get("content"))

    def _read(self, response: httpx.Response, deadline: float) -> bytes:
        """The whole body, or LLMUnavailable once the deadline has passed."""
        chunks = []
        for chunk in itertools.chain([b""], response.iter_bytes()):  # b"": headers came late
            chunks.append(chunk)
            if time.monotonic() > deadline:
                raise LLMUnavailable(f"timeout after {self.timeout}s (the reply did not finish in time)")
        return b"".join(chunks)

    def _status_error(self, status: int, body: bytes) -> str:
        # Redact before cutting: a cut could leave a prefix of the key that no longer matches.
        return f"HTTP {status}: {self.redact(body.decode('utf-8', errors='replace'))[:300]}"

    def _adapt(self, status: int, text: str) -> None:
        """A 400 about an optional field (JSON mode, or max_tokens over the context) → drop it."""
        if status != 400:
            return
        text = text.lower()
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
        with httpx.Client(timeout=self.timeout, headers=headers, auth=self._auth) as http:
            for attempt in range(1, self.max_retries + 2):
                content = None
                try:
                    content = self._post(http, conversation, max_tokens, schema)
                    return self._accept(content, schema, normalize, check)
                except _Adapted as exc:
                    self.errors.append(self.redact(f"attempt {attempt}: {exc}"))
                    last = exc
                except LLMRejected as exc:
                    self.errors.append(self.redact(f"attempt {attempt}: {exc}"))
                    raise
                except LLMUnavailable as exc:
                    self.errors.append(self.redact(f"attempt {attempt}: {exc}"))
                    last = exc
                    if attempt <= self.max_retries:
                        self._wait(getattr(exc, "response", None), attempt)
                except ReplyError as exc:
                    self.errors.append(self.redact(f"attempt {attempt}: {exc}"))
                    last = exc
                    conversation = [*messages, *self._correction(content, exc, schema)]
        if isinstance(last, ReplyError):
            raise LLMInvalidOutput(self.redact(f"no valid JSON after {self.attempts} attempts: {last}"))
        raise LLMUnavailable(self.redact(f"LLM unavailable after {self.attempts} attempts: {last}"))

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
