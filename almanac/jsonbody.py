"""Request bodies as JSON, refused with a clear 400 before any of it is used.

`json.loads` accepts what the rest of the stack cannot store or process: a lone UTF-16
surrogate written as an escape (`"\\ud800"`) is a Python string that neither PostgreSQL
nor the embedder can encode, and deeply nested arrays overflow the recursion of whatever
walks them next. Refusing those here means a bad request fails whole, before any write.
"""

from __future__ import annotations

import json
import math
import re

from ninja.parser import Parser

from almanac.errors import ApplicationError

MAX_DEPTH = 100
_SURROGATE = re.compile(r"[\ud800-\udfff]")


def loads(body: bytes):
    try:
        data = json.loads(body or b"null")
    except RecursionError as exc:
        raise ApplicationError(f"the JSON is nested deeper than {MAX_DEPTH} levels", status_code=400) from exc
    except (ValueError, UnicodeDecodeError) as exc:
        raise ApplicationError("the body must be JSON (UTF-8)", status_code=400) from exc
    check(data)
    return data


def check(data) -> None:
    """Every string (and key) valid Unicode, nesting at most MAX_DEPTH; iterative, so a deep
    value cannot overflow the check itself."""
    stack = [(data, 1)]
    while stack:
        value, depth = stack.pop()
        if isinstance(value, str):
            if _SURROGATE.search(value):
                raise ApplicationError(
                    "the JSON contains a lone UTF-16 surrogate escape (such as \\ud800): not valid Unicode text",
                    status_code=400,
                )
            continue
        if isinstance(value, dict | list):
            if depth > MAX_DEPTH:
                raise ApplicationError(f"the JSON is nested deeper than {MAX_DEPTH} levels", status_code=400)
            if isinstance(value, dict):
                stack.extend((key, depth) for key in value)
                stack.extend((item, depth + 1) for item in value.values())
            else:
                stack.extend((item, depth + 1) for item in value)


class StrictParser(Parser):
    """django-ninja's JSON parser with `check`; its error becomes the reply (config.api)."""

    def parse_body(self, request):
        return loads(request.body)


def storable_problem(value, name: str) -> str | None:
    """Why PostgreSQL's jsonb would refuse `value` (a NUL character in a string or key, a
    number that is not finite), said about `name`; None when it stores as is."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            if "\x00" in item:
                return f"{name} contains a NUL character (\\u0000), which cannot be stored"
        elif isinstance(item, float):
            if not math.isfinite(item):
                return f"{name} contains a number that is not finite ({item}), which JSON cannot hold"
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list | tuple):
            stack.extend(item)
    return None
