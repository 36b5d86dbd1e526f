"""Source links: Slack permalinks from the workspace URL, calendar and note links."""

from connectors.slack.normalize import SlackChannel, message_payloads, permalink


def test_slack_permalink_of_a_message_and_a_reply():
    url = "https://acme.slack.com/"
    assert permalink(workspace_url=url, channel_id="C1", ts="1700000000.000100") == (
        "https://acme.slack.com/archives/C1/p1700000000000100"
    )
    reply = permalink(
        workspace_url=url, channel_id="C1", ts="1700000001.000200", thread_ts="1700000000.000100"
    )
    assert reply.endswith("/archives/C1/p1700000001000200?thread_ts=1700000000.000100&cid=C1")
    assert permalink(workspace_url="", channel_id="C1", ts="1.2") == ""
    assert permalink(workspace_url="javascript:alert(1)", channel_id="C1", ts="1.2") == ""


def test_slack_messages_carry_their_permalink_when_the_workspace_is_known():
    message = {"type": "message", "ts": "1700000000.000100", "user": "U1", "text": "hi"}
    known = SlackChannel(id="C1", name="sales", public=True, workspace_url="https://acme.slack.com")
    unknown = SlackChannel(id="C1", name="sales", public=True)
    assert message_payloads(source_name="slack", channel=known, message=message)[0]["url"].startswith(
        "https://acme.slack.com/archives/C1/p"
    )
    assert "url" not in message_payloads(source_name="slack", channel=unknown, message=message)[0]


def test_calendar_and_notes_links(tenant, tmp_path):
    from connectors.calendar.normalize import ics_payloads
    from connectors.notes.normalize import note_payload

    ics = (
        "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nBEGIN:VEVENT\r\nUID:u1\r\nDTSTART:20261130T100000Z\r\n"
        "SUMMARY:Sync\r\nURL:https://calendar.example/e/u1\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n"
    )
    (event,) = list(ics_payloads(tenant=tenant, data=ics))
    assert event["url"] == "https://calendar.example/e/u1"
    note = tmp_path / "n.md"
    note.write_text("---\ntitle: Standup\nurl: https://notes.example/n/1\n---\nDemo on Friday\n")
    assert note_payload(tenant=tenant, root=tmp_path, path=note, source_name="notes")["url"] == (
        "https://notes.example/n/1"
    )


def test_a_bad_link_is_dropped_never_the_event(tenant, tmp_path):
    from connectors.notes.normalize import note_payload
    from connectors.schemas import EventIn

    assert permalink(workspace_url="https://acme slack.com", channel_id="C1", ts="1.2") == ""
    message = {"type": "message", "ts": "1700000000.000100", "user": "U1", "text": "hi"}
    spaced = SlackChannel(id="C1", name="sales", public=True, workspace_url="https://acme slack.com")
    assert "url" not in message_payloads(source_name="slack", channel=spaced, message=message)[0]
    for link in ("https://", "https://a b"):
        note = tmp_path / "n.md"
        note.write_text(f"---\ntitle: Standup\nurl: {link!r}\n---\nDemo on Friday\n")
        payload = note_payload(tenant=tenant, root=tmp_path, path=note, source_name="notes")
        assert "url" not in payload
        EventIn.model_validate({k: v for k, v in payload.items() if k in EventIn.model_fields})
