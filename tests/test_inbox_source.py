"""The Gmail inbox through the real google-api-python-client, its bundled discovery
document and `HttpMockSequence`: paging, the read-only calls, and bad answers."""

import base64
import json
from datetime import UTC, datetime
from urllib.parse import parse_qs, urlparse

from googleapiclient.http import HttpMockSequence

from company_ai.resources.inbox import InboxSource

SINCE = datetime(2026, 11, 23, 6, 30, tzinfo=UTC)
RAW = b"From: ada@acme.example\r\nSubject: Re: hi\r\n\r\nYes please.\r\n"


def ok(body) -> tuple[dict, str]:
    return {"status": "200"}, body if isinstance(body, str) else json.dumps(body)


def got(message_id, raw=RAW, internal="1795500000000"):
    return ok({"id": message_id, "threadId": "th", "internalDate": internal,
               "raw": base64.urlsafe_b64encode(raw).decode().rstrip("=")})  # fmt: skip


def source(responses) -> tuple[InboxSource, HttpMockSequence]:
    http = HttpMockSequence(responses)
    inbox = InboxSource(backend="gmail", cursor="unused")
    inbox._http = http
    return inbox, http


def test_pages_are_followed_and_each_message_is_fetched_raw():
    inbox, http = source(
        [
            ok({"messages": [{"id": "a"}, {"id": "b"}], "nextPageToken": "p2"}),
            ok({"messages": [{"id": "c"}]}),
            got("a"),
            got("b"),
            got("c", internal="1795500005000"),
        ]
    )
    logs = []
    fetched = inbox.fetch(SINCE, logs.append)
    assert [m.provider_id for m in fetched.mails] == ["gmail:a", "gmail:b", "gmail:c"]
    assert fetched.mails[0].raw == RAW and not fetched.failures and not logs
    assert fetched.mails[2].received == datetime.fromtimestamp(1795500005, UTC)
    first, second, get_a = (urlparse(r[0]) for r in http.request_sequence[:3])
    assert first.path.endswith("/gmail/v1/users/me/messages")
    assert parse_qs(first.query)["q"] == [f"after:{int(SINCE.timestamp())}"]
    assert parse_qs(second.query)["pageToken"] == ["p2"]
    assert get_a.path.endswith("/users/me/messages/a") and parse_qs(get_a.query)["format"] == [
        "raw"
    ]
    assert all(r[1] == "GET" for r in http.request_sequence), "read only"


def test_malformed_json_from_the_list_is_a_failure_not_an_empty_inbox():
    inbox, _ = source([ok("{not json")])
    logs = []
    fetched = inbox.fetch(SINCE, logs.append)
    assert fetched.mails == [] and fetched.failures == [
        "users.messages.list answered with malformed JSON"
    ]
    assert "cursor stays" in logs[0]


def test_a_bad_message_is_a_failure_and_the_rest_are_read():
    inbox, _ = source(
        [
            ok({"messages": [{"id": "a"}, {"id": "b"}, {"id": "c"}, {"nope": 1}]}),
            ok("{broken"),  # a: malformed JSON
            ok({"id": "b", "internalDate": "1795500000000"}),  # b: no raw
            ({"status": "500"}, "{}"),  # c: a server error
        ]
    )
    fetched = inbox.fetch(SINCE, lambda _: None)
    assert fetched.mails == []
    assert [f.split(":")[0] for f in fetched.failures] == [
        "users.messages.list gave an entry without an id",
        "gmail",
        "gmail",
        "gmail",
    ]
    assert "malformed JSON" in fetched.failures[1] and "no raw message" in fetched.failures[2]
    assert "HTTP 500" in fetched.failures[3]


def test_a_list_error_is_a_failure():
    inbox, _ = source([({"status": "403"}, json.dumps({"error": "denied"}))])
    assert inbox.fetch(SINCE, lambda _: None).failures == ["users.messages.list failed: HTTP 403"]


def test_without_a_token_gmail_refuses_clearly():
    import pytest

    with pytest.raises(ValueError, match="COMPANY_AI_GMAIL_TOKEN"):
        InboxSource(backend="gmail", cursor="x").fetch(SINCE, lambda _: None)
