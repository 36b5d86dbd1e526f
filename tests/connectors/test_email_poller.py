import pytest

from almanac.selectors import group_members
from connectors.models import Event, SyncCursor
from connectors.services.poller import poll_source
from connectors.services.sources import source_ensure
from tests.connectors.servers import Mailbox, imap_server

pytestmark = pytest.mark.django_db


def mail(
    mid: str, subject: str, body: str, *, frm="alice@acme.example", to="lee@vercel.example", refs="", minute=0
) -> bytes:
    headers = [
        f"Message-ID: <{mid}>",
        f"From: Alice <{frm}>",
        f"To: {to}",
        "Cc: carol@acme.example",
        f"Date: Mon, 09 Nov 2026 10:{minute:02d}:00 +0000",
        f"Subject: {subject}",
        "Content-Type: text/plain; charset=utf-8",
        "MIME-Version: 1.0",
    ]
    if refs:
        headers += [f"In-Reply-To: <{refs}>", f"References: <{refs}>"]
    return ("\r\n".join(headers) + "\r\n\r\n" + body + "\r\n").encode()


@pytest.fixture
def mailbox():
    return Mailbox(
        {
            3: mail("m1@acme.example", "Apollo pricing for Vercel", "Seats: 200, SSO included."),
            5: mail(
                "m2@vercel.example",
                "Re: Apollo pricing for Vercel",
                "Thanks! 我们确认。",
                frm="lee@vercel.example",
                to="alice@acme.example",
                refs="m1@acme.example",
                minute=5,
            ),
            9: mail(
                "m3@acme.example",
                "Recall: Apollo pricing for Vercel",
                "Alice would like to recall the message.",
                minute=9,
            ),
        }
    )


def imap_source(tenant, port):
    """The "email" source reading the local IMAP server as bot (password: $TEST_IMAP_PASSWORD)."""
    source = source_ensure(
        tenant=tenant,
        name="email",
        config={"host": "127.0.0.1", "port": port, "ssl": False, "username": "bot"},
    )
    source.credentials = "env:TEST_IMAP_PASSWORD"
    source.save(update_fields=["credentials"])
    return source


def test_imap_poll_threads_participants_and_recall(company, mailbox, monkeypatch):
    monkeypatch.setenv("TEST_IMAP_PASSWORD", "pw")
    with imap_server(mailbox) as port:
        source = imap_source(company.tenant, port)
        assert poll_source(source=source)["state"] == "ok"
    emails = Event.objects.filter(kind="email")
    assert set(emails.values_list("external_id", flat=True)) == {"m1@acme.example", "m2@vercel.example"}
    assert len(set(emails.values_list("container_key", flat=True))) == 1
    key = emails.first().container_key
    assert group_members(tenant=company.tenant, key=key) == ["alice", "carol"]
    assert Event.objects.get(kind="email_recalled").external_id == "m1@acme.example"
    assert SyncCursor.objects.get(source=source).cursor == {"uidvalidity": "7", "last_uid": 9}
    assert any(c.startswith("LOGIN") for c in mailbox.commands) and "EXAMINE INBOX" in mailbox.commands


def test_imap_connection_lost_resumes_from_last_uid(company, mailbox, monkeypatch):
    monkeypatch.setenv("TEST_IMAP_PASSWORD", "pw")
    mailbox.drop_at_uid = 9
    with imap_server(mailbox) as port:
        source = imap_source(company.tenant, port)
        assert poll_source(source=source)["state"] == "backoff"
        state = SyncCursor.objects.get(source=source)
        assert state.cursor["last_uid"] == 5 and "imap" in state.last_error
        assert Event.objects.filter(kind="email").count() == 2
        mailbox.drop_at_uid = None
        mailbox.commands.clear()
        assert poll_source(source=source, force=True)["state"] == "ok"
        assert "SEARCH UID 6:*" in " ".join(mailbox.commands)
        assert [c for c in mailbox.commands if c.startswith("UID FETCH")] == ["UID FETCH 9 (RFC822)"]
        assert (
            Event.objects.filter(kind="email").count() == 2
            and Event.objects.filter(kind="email_recalled").count() == 1
        )
        # nothing new: "UID 10:*" answers the last message, which is not fetched again
        mailbox.commands.clear()
        assert poll_source(source=source, force=True)["accepted"] == 0
        assert not [c for c in mailbox.commands if c.startswith("UID FETCH")]


def test_imap_wrong_password_is_an_error(company, mailbox, monkeypatch):
    monkeypatch.setenv("TEST_IMAP_PASSWORD", "nope")
    with imap_server(mailbox) as port:
        source = imap_source(company.tenant, port)
        assert poll_source(source=source)["state"] == "backoff"
    assert "AUTHENTICATIONFAILED" in SyncCursor.objects.get(source=source).last_error
    assert Event.objects.count() == 0


def test_imap_uidvalidity_change_rereads_without_doubling(company, mailbox, monkeypatch):
    monkeypatch.setenv("TEST_IMAP_PASSWORD", "pw")
    with imap_server(mailbox) as port:
        source = imap_source(company.tenant, port)
        poll_source(source=source)
        count = Event.objects.count()
        mailbox.uidvalidity = 8
        result = poll_source(source=source, force=True)
    assert result["accepted"] == 0 and Event.objects.count() == count
    assert SyncCursor.objects.get(source=source).cursor["uidvalidity"] == "8"


# --- a message that cannot be stored is rejected and passed --------------------------------


def test_imap_malformed_message_is_rejected_and_the_rest_stored(company, monkeypatch, caplog):
    monkeypatch.setenv("TEST_IMAP_PASSWORD", "pw")
    box = Mailbox(
        {
            3: mail("m1@acme.example", "Apollo pricing", "Seats: 200."),
            5: mail("bad@acme.example", "Broken", "unparsable To", to="<a@[1.2.3.4>"),
            9: mail("m3@acme.example", "Zephyr kickoff", "Next week.", minute=9),
        }
    )
    with imap_server(box) as port:
        source = imap_source(company.tenant, port)
        result = poll_source(source=source)
        assert result["state"] == "ok" and result["rejected"] == 1
        state = SyncCursor.objects.get(source=source)
        assert state.cursor["last_uid"] == 9 and state.last_error == ""
        emails = Event.objects.filter(kind="email").values_list("external_id", flat=True)
        assert set(emails) == {"m1@acme.example", "m3@acme.example"}
        assert "UID 5" in caplog.text
        box.commands.clear()
        assert poll_source(source=source, force=True)["state"] == "ok"  # not read again
        assert not [c for c in box.commands if c.startswith("UID FETCH")]


def _with_header(raw: bytes, header: bytes) -> bytes:
    return header + b"\r\n" + raw


@pytest.mark.django_db
def test_imap_messages_with_nul_ids_are_rejected_and_passed(company, monkeypatch):
    monkeypatch.setenv("TEST_IMAP_PASSWORD", "pw")
    recall = _with_header(
        mail("r1@acme.example", "Recall: Apollo", "", minute=2), b"X-Almanac-Recall: <m\x001@x>"
    )
    recall_by_subject = mail("r2@acme.example", "Recall: Apo\x00llo", "", minute=3)
    nul_id = mail("m\x002@acme.example", "Zephyr", "kickoff", minute=4)
    box = Mailbox(
        {
            3: mail("m1@acme.example", "Apollo", "ok"),
            4: recall,
            5: recall_by_subject,
            6: nul_id,
            9: mail("m3@acme.example", "Later", "ok", minute=9),
        }
    )
    with imap_server(box) as port:
        source = imap_source(company.tenant, port)
        result = poll_source(source=source)
    assert result["state"] == "ok" and result.get("rejected", 0) >= 1
    state = SyncCursor.objects.get(source=source)
    assert state.cursor["last_uid"] == 9 and state.last_error == ""
    emails = set(Event.objects.filter(kind="email").values_list("external_id", flat=True))
    assert emails == {"m1@acme.example", "m3@acme.example"}
    assert not Event.objects.filter(kind="email_recalled").exists()
