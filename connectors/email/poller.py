"""IMAP poller (stdlib imaplib): Gmail, Exchange/Office 365 or any IMAP4rev1 server.

Config: {"host", "port"?: 993, "ssl"?: true, "username", "mailbox"?: "INBOX"}.
Credentials: the password (Gmail: an app password), or {"password"} / {"access_token"} for
XOAUTH2. Cursor: {"uidvalidity", "last_uid"}; messages are fetched in UID order and
stored one by one, the cursor with each. A changed UIDVALIDITY restarts from UID 1 (the
events are idempotent, so nothing is doubled). A message that cannot be parsed is logged,
counted as rejected and passed: one bad e-mail never stops the mailbox.
"""

from __future__ import annotations

import contextlib
import imaplib
import logging

from django.db import DataError, transaction

from connectors.crypto import credentials_decode
from connectors.email.normalize import PARSE_ERRORS, message_payloads, parse_bytes
from connectors.services.poller import PollError

# A message the parser cannot read is skipped (importers.email.PARSE_ERRORS), not retried:
# connection errors are not in it, they fail the poll. (A DataError, a header value the
# database refuses in a lookup, is the message's fault: it is skipped too, see `_payloads`.)
log = logging.getLogger(__name__)


def _connect(config: dict) -> imaplib.IMAP4:
    host, use_ssl = config.get("host"), config.get("ssl", True)
    if not host:
        raise PollError("imap: config.host is missing")
    port = int(config.get("port") or (993 if use_ssl else 143))
    if use_ssl:
        return imaplib.IMAP4_SSL(host, port, timeout=30)
    conn = imaplib.IMAP4(host, port, timeout=30)
    if config.get("starttls"):
        conn.starttls()
    return conn


def _login(conn: imaplib.IMAP4, username: str, credentials) -> None:
    if isinstance(credentials, dict) and credentials.get("access_token"):
        token = f"user={username}\x01auth=Bearer {credentials['access_token']}\x01\x01"
        conn.authenticate("XOAUTH2", lambda _: token.encode())
        return
    password = credentials.get("password", "") if isinstance(credentials, dict) else credentials
    conn.login(username, password)


def _uids(conn: imaplib.IMAP4, after: int) -> list[int]:
    typ, data = conn.uid("SEARCH", None, f"UID {after + 1}:*")
    if typ != "OK":
        raise PollError(f"imap: UID SEARCH failed: {data}")
    # "n:*" matches the last message even when its UID is below n.
    return sorted(u for u in (int(x) for x in b" ".join(data).split()) if u > after)


def _fetch(conn: imaplib.IMAP4, uid: int) -> bytes | None:
    typ, data = conn.uid("FETCH", str(uid), "(RFC822)")
    if typ != "OK":
        raise PollError(f"imap: UID FETCH {uid} failed")
    for part in data:
        if isinstance(part, tuple) and len(part) == 2:
            return part[1]
    return None  # expunged meanwhile


def _payloads(source, uid: int, raw: bytes) -> tuple[list[dict], int]:
    """The message's events and 0, or [] and 1 when it cannot be parsed."""
    try:
        msg = parse_bytes(raw)
        with transaction.atomic():  # a lookup the database refuses must not end the poll's transaction
            return message_payloads(tenant=source.tenant, source_name=source.name, msg=msg), 0
    except (*PARSE_ERRORS, DataError) as exc:
        log.warning(
            "imap %s: skipped UID %s, not a readable e-mail: %s: %s", source, uid, type(exc).__name__, exc
        )
        return [], 1


def poll(*, source, cursor: dict, save) -> None:
    config = source.config
    try:
        conn = _connect(config)
    except OSError as exc:
        raise PollError(f"imap: cannot connect to {config.get('host')}: {exc}") from exc
    try:
        _login(conn, config.get("username", ""), credentials_decode(source.credentials))
        mailbox = config.get("mailbox", "INBOX")
        if " " in mailbox and not mailbox.startswith('"'):
            mailbox = f'"{mailbox}"'  # e.g. "[Gmail]/All Mail"; imaplib does not quote it
        typ, data = conn.select(mailbox, readonly=True)
        if typ != "OK":
            raise PollError(f"imap: cannot select {config.get('mailbox', 'INBOX')}: {data}")
        uidvalidity = (conn.response("UIDVALIDITY")[1] or [b""])[0]
        uidvalidity = uidvalidity.decode() if isinstance(uidvalidity, bytes) else str(uidvalidity or "")
        if cursor.get("uidvalidity") != uidvalidity:
            cursor.update(uidvalidity=uidvalidity, last_uid=0)
        uids = _uids(conn, int(cursor.get("last_uid") or 0))
        for uid in uids:
            raw = _fetch(conn, uid)
            payloads, rejected = _payloads(source, uid, raw) if raw else ([], 0)
            cursor["last_uid"] = uid
            # Recalls look up their original in the inbox: store message by message.
            save(payloads, cursor, rejected=rejected)
    except imaplib.IMAP4.error as exc:
        raise PollError(f"imap: {exc}") from exc
    except OSError as exc:
        raise PollError(f"imap: connection lost: {exc}") from exc
    finally:
        with contextlib.suppress(imaplib.IMAP4.error, OSError):
            conn.logout()
