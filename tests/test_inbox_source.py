"""The Gmail inbox through the real google-api-python-client, its bundled discovery
document and `HttpMockSequence`: paging, the read-only calls, and bad answers."""

import base64
import json
from datetime import UTC, datetime
from urllib.parse import parse_qs, urlparse

from googleapiclient.http import HttpMockSequence

from company_ai.resources.inbox import InboxSource

NOW = datetime(2026, 11, 30, 6, 30, tzinfo=UTC)
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


def profile(history_id="900"):
    return ok({"emailAddress": "sam@company-ai.example", "historyId": history_id})


def fetch(inbox, history_id=None, taken=(), logs=None):
    return inbox.fetch(history_id, set(taken), NOW, (logs if logs is not None else []).append)


def test_without_a_checkpoint_the_last_days_are_listed_and_each_message_fetched_raw():
    inbox, http = source(
        [
            profile("900"),
            ok({"messages": [{"id": "a"}, {"id": "b"}], "nextPageToken": "p2"}),
            ok({"messages": [{"id": "c"}]}),
            got("a"),
            got("c", internal="1795500005000"),
        ]
    )
    logs = []
    fetched = fetch(inbox, taken={"gmail:b"}, logs=logs)
    assert [m.provider_id for m in fetched.mails] == ["gmail:a", "gmail:c"], "b was taken"
    assert fetched.mails[0].raw == RAW and not fetched.failures and not logs
    assert fetched.mails[1].received == datetime.fromtimestamp(1795500005, UTC)
    assert fetched.history_id == "900", "the history id from before the list"
    get_profile, first, second, get_a = (urlparse(r[0]) for r in http.request_sequence[:4])
    assert get_profile.path.endswith("/users/me/profile")
    assert first.path.endswith("/gmail/v1/users/me/messages")
    assert parse_qs(first.query)["q"] == ["newer_than:30d -in:sent -in:drafts"]
    assert parse_qs(second.query)["pageToken"] == ["p2"]
    assert get_a.path.endswith("/users/me/messages/a") and parse_qs(get_a.query)["format"] == [
        "raw"
    ]
    assert all(r[1] == "GET" for r in http.request_sequence), "read only"


def history(*ids, latest="950", token=None, labels=("INBOX",)):
    page = {
        "history": [{"id": "1", "messagesAdded": [{"message": {"id": i, "labelIds": list(labels)}}
                                                  for i in ids]}],
        "historyId": latest,
    }  # fmt: skip
    return ok(page | ({"nextPageToken": token} if token else {}))


def test_with_a_checkpoint_new_mail_is_read_by_history_id():
    """Defect 3: from what WE checkpointed, never a date query a sender's time can move."""
    in_2035 = "2051222400000"
    inbox, http = source(
        [history("a", latest="940", token="h2"), history("b", "a", latest="950"),
         got("a"), got("b", internal=in_2035)]
    )  # fmt: skip
    fetched = fetch(inbox, "800")
    assert [m.provider_id for m in fetched.mails] == ["gmail:a", "gmail:b"], "a once"
    first = urlparse(http.request_sequence[0][0])
    assert first.path.endswith("/users/me/history")
    assert parse_qs(first.query)["startHistoryId"] == ["800"]
    assert parse_qs(first.query)["historyTypes"] == ["messageAdded"]
    assert parse_qs(urlparse(http.request_sequence[1][0]).query)["pageToken"] == ["h2"]
    assert fetched.history_id == "950"
    assert fetched.mails[1].received == NOW and fetched.mails[1].time_flag == "in the future"


def test_our_own_sent_mail_in_the_history_is_not_read():
    inbox, http = source([history("s", labels=("SENT",))])
    fetched = fetch(inbox, "800")
    assert fetched.mails == [] and fetched.history_id == "950" and len(http.request_sequence) == 1


def test_a_history_id_too_old_falls_back_to_a_full_list():
    inbox, http = source(
        [({"status": "404"}, json.dumps({"error": {"code": 404}})), profile("990"),
         ok({"messages": [{"id": "a"}]}), got("a")]
    )  # fmt: skip
    logs = []
    fetched = fetch(inbox, "5", logs=logs)
    assert [m.provider_id for m in fetched.mails] == ["gmail:a"] and fetched.history_id == "990"
    assert "too old" in logs[0] and not fetched.failures


def test_a_history_error_keeps_the_checkpoint():
    inbox, _ = source([({"status": "500"}, "{}")])
    fetched = fetch(inbox, "800")
    assert fetched.history_id is None and fetched.failures == [
        "users.history.list failed: HTTP 500"
    ]


def test_malformed_json_from_the_list_is_a_failure_not_an_empty_inbox():
    inbox, _ = source([profile(), ok("{not json")])
    logs = []
    fetched = fetch(inbox, logs=logs)
    assert fetched.mails == [] and fetched.failures == [
        "users.messages.list answered with malformed JSON"
    ]
    assert "cursor stays" in logs[0] and fetched.history_id is None


def test_a_bad_message_is_a_failure_and_the_rest_are_read():
    inbox, _ = source(
        [
            profile(),
            ok({"messages": [{"id": "a"}, {"id": "b"}, {"id": "c"}, {"nope": 1}]}),
            ok("{broken"),  # a: malformed JSON
            ok({"id": "b", "internalDate": "1795500000000"}),  # b: no raw
            ({"status": "500"}, "{}"),  # c: a server error
        ]
    )
    fetched = fetch(inbox)
    assert fetched.mails == [] and fetched.history_id is None, "read again next run"
    assert [f.split(":")[0] for f in fetched.failures] == [
        "users.messages.list gave an entry without an id",
        "gmail",
        "gmail",
        "gmail",
    ]
    assert "malformed JSON" in fetched.failures[1] and "no raw message" in fetched.failures[2]
    assert "HTTP 500" in fetched.failures[3]


def test_a_list_error_is_a_failure():
    inbox, _ = source([profile(), ({"status": "403"}, json.dumps({"error": "denied"}))])
    assert fetch(inbox).failures == ["users.messages.list failed: HTTP 403"]


def test_without_a_token_gmail_refuses_clearly():
    import pytest

    with pytest.raises(ValueError, match="COMPANY_AI_GMAIL_TOKEN"):
        InboxSource(backend="gmail", cursor="x").fetch(None, set(), NOW, lambda _: None)
