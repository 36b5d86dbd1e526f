"""The web server's own refusals in the API's JSON (docs/api.md, Errors: every error is JSON).

gunicorn refuses some requests before Django sees them: a request line (method, URL and
version) over `--limit-request-line` is a 414, a header over `--limit-request-field_size`
or more than `--limit-request-fields` headers a 431, a malformed request line or header a
400. It answers those with a small HTML page. This worker answers them with the same
status and `{"detail": ...}`, as the application answers everything else.

gunicorn writes those pages through `gunicorn.util.write_error` (from
`Worker.handle_error`); the worker replaces it in its own process only, when it starts.
"""

from __future__ import annotations

import json

from gunicorn import util
from gunicorn.workers.gthread import ThreadWorker


def write_json_error(sock, status_int: int, reason: str, mesg: str) -> None:
    detail = f"{reason}: {mesg}" if mesg else reason
    body = json.dumps({"detail": detail}).encode()
    head = (
        f"HTTP/1.1 {status_int} {reason}\r\n"
        "Connection: close\r\n"
        "Content-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\n"
        "\r\n"
    )
    util.write_nonblock(sock, head.encode("latin-1") + body)


class JsonErrorWorker(ThreadWorker):
    """gunicorn's threaded worker (what `--threads` selects) with JSON error pages."""

    def init_process(self):
        util.write_error = write_json_error
        super().init_process()
