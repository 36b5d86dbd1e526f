"""E-mail: normalization of one RFC 5322 message (shared by the mbox/.eml importer and the
IMAP poller). Threads by References/In-Reply-To; the participants (From/To/Cc) are added to
the thread's access group `email:thread:<hash of the root Message-ID>`; a recall ("Recall:"
subject, or an `X-Almanac-Recall: <message-id>` header) becomes `email_recalled` on the
original's external_id."""

from __future__ import annotations

import email
import email.errors
import email.policy
import html
import re
from datetime import UTC, datetime
from email.message import EmailMessage
from email.utils import getaddresses, parsedate_to_datetime

from django.utils import timezone

from almanac.errors import ApplicationError
from almanac.models import Tenant
from connectors.models import Event
from connectors.services.identity import identity_upsert_many
from connectors.services.normalize import digest, iso, short_hash

MSGID_RE = re.compile(r"<([^<>\s]+)>")
SUBJECT_PREFIX_RE = re.compile(r"^\s*((re|fw|fwd|aw|sv|答复|回复|转发)\s*[:：]\s*)+", re.IGNORECASE)
RECALL_RE = re.compile(r"^\s*(recall|召回|撤回)\s*[:：]\s*(.*)$", re.IGNORECASE | re.DOTALL)
TAG_RE = re.compile(r"<[^>]+>")
RECALL_VERSION = 2
NUL = "\x00"


def parse_bytes(data: bytes) -> EmailMessage:
    return email.message_from_bytes(data, policy=email.policy.default)


def _ids(value: str | None) -> list[str]:
    return MSGID_RE.findall(str(value or ""))


def message_id(msg: EmailMessage) -> str:
    ids = _ids(msg.get("Message-ID"))
    if ids:
        return ids[0]
    return "generated-" + digest(msg.get("From"), msg.get("Date"), msg.get("Subject"))


def thread_root(msg: EmailMessage) -> str:
    refs = _ids(msg.get("References")) or _ids(msg.get("In-Reply-To"))
    return refs[0] if refs else message_id(msg)


def thread_key(root: str) -> str:
    return f"email:thread:{short_hash(root)}"


def clean_subject(subject: str) -> str:
    return SUBJECT_PREFIX_RE.sub("", subject or "").strip()


def addresses(msg: EmailMessage, *headers: str) -> list[str]:
    found = []
    for _, addr in getaddresses([str(v) for h in headers for v in msg.get_all(h, [])]):
        addr = addr.strip().lower()
        if "@" in addr and addr not in found:
            found.append(addr)
    return found


def body_text(msg: EmailMessage) -> str:
    part = msg.get_body(preferencelist=("plain", "html"))
    if part is None:
        return ""
    try:
        text = part.get_content()
    except (LookupError, ValueError):
        text = part.get_payload(decode=True).decode("utf-8", "replace")
    if part.get_content_subtype() == "html":
        text = html.unescape(TAG_RE.sub(" ", text))
    lines = []
    for line in text.replace("\r\n", "\n").split("\n"):
        if line.startswith(">"):
            continue  # quoted earlier messages belong to those messages
        lines.append(line.rstrip())
    return "\n".join(lines).replace("\x00", "").strip()


# What the stdlib e-mail parser raises on hostile input (e.g. `To: <a@[1.2.3.4>` is an
# AttributeError inside the header parser): that message is rejected, the others are read.
PARSE_ERRORS = (
    AttributeError,
    LookupError,
    TypeError,
    ValueError,
    RecursionError,
    email.errors.MessageError,
    ApplicationError,
)


def occurred(msg: EmailMessage) -> datetime:
    try:
        value = parsedate_to_datetime(str(msg.get("Date")))
    except PARSE_ERRORS:
        return timezone.now()  # no usable Date: when we first saw it
    return value if value.tzinfo else value.replace(tzinfo=UTC)


def _recall_target(
    *, tenant: Tenant, source_name: str, msg: EmailMessage, subject: str, sender: str
) -> Event | None:
    """The message this recall withdraws: one its sender wrote (nobody recalls another
    person's e-mail), named by X-Almanac-Recall, else by the references, else the sender's
    latest earlier message with the recalled subject."""
    if not sender or NUL in sender:
        return None  # a stored author never holds a NUL byte (nor can PostgreSQL look one up)
    events = Event.objects.filter(
        tenant=tenant, source__name=source_name, kind=Event.Kind.EMAIL, author__iexact=sender
    )
    explicit = _ids(msg.get("X-Almanac-Recall"))
    candidates = explicit or list(reversed(_ids(msg.get("In-Reply-To")) + _ids(msg.get("References"))))
    for ref in candidates:
        found = events.filter(external_id=ref).first() if NUL not in ref else None
        if found:
            return found
    if explicit:
        return None
    match = RECALL_RE.match(subject)
    original_subject = clean_subject(match.group(2)) if match else ""
    if NUL in original_subject:
        return None
    return (
        events.filter(title=original_subject, occurred_at__lte=occurred(msg)).order_by("-occurred_at").first()
    )


def _recall_payload(*, source_name: str, original: Event, msg: EmailMessage, sender: str) -> dict:
    return {
        "source": source_name,
        "external_id": original.external_id,
        "version": RECALL_VERSION,
        "kind": "email_recalled",
        "occurred_at": iso(occurred(msg)),
        "container": {"key": original.container_key, "name": original.container_name},
        "thread_key": original.thread_key,
        "author": sender,
        "title": original.title,
        "text": f"{sender} recalled this message",
        "raw": {"recall_message_id": message_id(msg)},
    }


def is_recall(msg: EmailMessage) -> bool:
    return bool(msg.get("X-Almanac-Recall")) or bool(RECALL_RE.match(str(msg.get("Subject") or "")))


def _sender_name_record(*, tenant: Tenant, msg: EmailMessage) -> None:
    """The sender's display name (`From: Lena Berg <lena@globex.com>`) as the name of their
    e-mail identity: what the wiki titles their person page with."""
    people = [
        (addr.strip().lower(), name.strip(), addr.strip().lower())
        for name, addr in getaddresses([str(v) for v in msg.get_all("From", [])])
        if name.strip() and "@" in addr and name.strip().lower() != addr.strip().lower()
    ]
    if people:
        identity_upsert_many(tenant=tenant, source_kind="email", people=people[:1])


def message_payloads(*, tenant: Tenant, source_name: str, msg: EmailMessage) -> list[dict]:
    """Events of one message: the participants added to the thread group, then the e-mail
    (or, for a recall, `email_recalled` on the original; nothing if the original is unknown)."""
    subject = str(msg.get("Subject") or "")
    sender = (addresses(msg, "From") or [""])[0]
    if NUL in message_id(msg):  # an id PostgreSQL cannot store nor look up: the item is refused
        raise ApplicationError("the e-mail's Message-ID contains a NUL byte")
    if is_recall(msg):
        original = _recall_target(
            tenant=tenant, source_name=source_name, msg=msg, subject=subject, sender=sender
        )
        return (
            [_recall_payload(source_name=source_name, original=original, msg=msg, sender=sender)]
            if original
            else []
        )
    msgid, root = message_id(msg), thread_root(msg)
    _sender_name_record(tenant=tenant, msg=msg)
    container = {"key": thread_key(root), "name": clean_subject(subject)[:300]}
    when = iso(occurred(msg))
    participants = addresses(msg, "From", "To", "Cc")
    events = []
    if participants:
        events.append(
            {
                "source": source_name,
                "external_id": f"{msgid}#participants",
                "kind": "membership_added",
                "occurred_at": when,
                "container": {**container, "members": participants},
            }
        )
    headers = {
        k: str(msg.get(k, ""))
        for k in ("Message-ID", "In-Reply-To", "References", "From", "To", "Cc", "Date")
    }
    events.append(
        {
            "source": source_name,
            "external_id": msgid,
            "version": 1,
            "kind": "email",
            "occurred_at": when,
            "container": container,
            "thread_key": container["key"],
            "author": sender,
            "title": clean_subject(subject)[:500],
            "text": body_text(msg),
            "raw": {"headers": headers, "subject": subject},
        }
    )
    return events
