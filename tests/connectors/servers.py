"""Local servers that speak the real protocols (HTTP JSON APIs, IMAP4rev1) on 127.0.0.1,
so the real client libraries (slack_sdk, PyGithub, httpx, imaplib) run against them."""

from __future__ import annotations

import json
import re
import shlex
import socketserver
import threading
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qsl, urlsplit


class _Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def _handle(self):
        url = urlsplit(self.path)
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        params = dict(parse_qsl(url.query))
        if body and "json" in (self.headers.get("Content-Type") or ""):
            params.update(json.loads(body))
        elif body:
            params.update(parse_qsl(body.decode()))
        request = {"method": self.command, "path": url.path, "params": params, "headers": dict(self.headers)}
        self.server.requests.append(request)
        status, headers, payload = self.server.app(request)
        data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
        self.send_response(status)
        headers = {"Content-Type": "application/json; charset=utf-8", **(headers or {})}
        for name, value in headers.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    do_GET = do_POST = _handle


@contextmanager
def http_server(app):
    """Serve `app(request) -> (status, headers, json-or-bytes)`; yields the server (`.url`,
    `.requests`)."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    server.app, server.requests = app, []
    server.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


# --- IMAP ------------------------------------------------------------------------------


class Mailbox:
    def __init__(self, messages: dict[int, bytes], uidvalidity: int = 7, user="bot", password="pw"):
        self.messages = dict(messages)
        self.uidvalidity = uidvalidity
        self.user, self.password = user, password
        self.commands: list[str] = []
        self.drop_at_uid: int | None = None  # close the connection when this UID is fetched


class _ImapHandler(socketserver.StreamRequestHandler):
    def send(self, line: str | bytes):
        self.wfile.write(line if isinstance(line, bytes) else line.encode() + b"\r\n")

    def handle(self):
        box: Mailbox = self.server.mailbox
        self.send("* OK [CAPABILITY IMAP4rev1] almanac test IMAP ready")
        while True:
            raw = self.rfile.readline()
            if not raw:
                return
            tag, _, rest = raw.decode().rstrip("\r\n").partition(" ")
            command, _, args = rest.partition(" ")
            box.commands.append(f"{command.upper()} {args}".strip())
            if not self.dispatch(box, tag, command.upper(), args):
                return

    def dispatch(self, box: Mailbox, tag: str, command: str, args: str) -> bool:
        if command == "CAPABILITY":
            self.send("* CAPABILITY IMAP4rev1")
        elif command == "LOGIN":
            user, password = shlex.split(args)
            if (user, password) != (box.user, box.password):
                self.send(f"{tag} NO [AUTHENTICATIONFAILED] invalid credentials")
                return True
        elif command in {"SELECT", "EXAMINE"}:
            self.send(f"* {len(box.messages)} EXISTS")
            self.send(f"* OK [UIDVALIDITY {box.uidvalidity}] UIDs valid")
            self.send(f"{tag} OK [READ-ONLY] {command} completed")
            return True
        elif command == "UID":
            return self.uid(box, tag, args)
        elif command == "LOGOUT":
            self.send("* BYE logging out")
            self.send(f"{tag} OK LOGOUT completed")
            return False
        else:
            self.send(f"{tag} BAD unknown command")
            return True
        self.send(f"{tag} OK {command} completed")
        return True

    def uid(self, box: Mailbox, tag: str, args: str) -> bool:
        sub, _, rest = args.partition(" ")
        uids = sorted(box.messages)
        if sub.upper() == "SEARCH":
            low = int(re.search(r"UID (\d+):\*", rest).group(1))
            found = [u for u in uids if u >= low] or uids[-1:]  # "n:*" always matches the last one
            self.send("* SEARCH " + " ".join(map(str, found)))
        elif sub.upper() == "FETCH":
            uid = int(rest.split()[0])
            if uid == box.drop_at_uid:
                return False  # connection lost mid-way
            data = box.messages[uid]
            seq = uids.index(uid) + 1
            self.send(f"* {seq} FETCH (UID {uid} RFC822 {{{len(data)}}}".encode() + b"\r\n" + data + b")\r\n")
        self.send(f"{tag} OK UID {sub.upper()} completed")
        return True


@contextmanager
def imap_server(mailbox: Mailbox):
    server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), _ImapHandler)
    server.daemon_threads = True
    server.mailbox = mailbox
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()
