import base64
import email
import json
from email import policy
from email.message import EmailMessage
from types import SimpleNamespace
from urllib.parse import parse_qs

import pytest
from googleapiclient.http import HttpMockSequence

from company_ai.resources.inbox import InboxSource
from company_ai.resources.mailer import Mailer


def message(msgid="<abc.draft1@company-ai.example>"):
    m = EmailMessage()
    m["From"] = "Sam Rivers <sam@company-ai.example>"
    m["To"] = "Ada <ada@acme.example>"
    m["Subject"] = "Ada, a thought"
    m["Message-ID"] = msgid
    m.set_content("Hi Ada,\n\nHello.\n")
    return m


def test_the_outbox_writes_one_rfc_5322_file_per_message_id(tmp_path):
    mailer = Mailer(outbox_dir=str(tmp_path / "outbox"))
    assert not mailer.already_sent("<abc.draft1@company-ai.example>")
    name = mailer.send(message())
    assert mailer.already_sent("<abc.draft1@company-ai.example>")
    files = list((tmp_path / "outbox").iterdir())
    assert [f.name for f in files] == [name]
    parsed = email.message_from_bytes(files[0].read_bytes(), policy=policy.default)
    assert parsed["Subject"] == "Ada, a thought"
    assert parsed.get_content().replace("\r\n", "\n") == "Hi Ada,\n\nHello.\n"
    mailer.send(message())  # the same Message-ID again: the same file, not a second one
    assert len(list((tmp_path / "outbox").iterdir())) == 1


def test_gmail_sends_the_raw_message_through_users_messages_send():
    http = HttpMockSequence([({"status": "200"}, json.dumps({"id": "m1", "threadId": "t1"}))])
    mailer = Mailer(backend="gmail")
    mailer._http = http
    assert mailer.send(message()) == "m1"
    uri, method, body, _ = http.request_sequence[0]
    assert method == "POST" and uri.endswith("/gmail/v1/users/me/messages/send?alt=json")
    raw = base64.urlsafe_b64decode(json.loads(body)["raw"])
    assert b"Subject: Ada, a thought" in raw and b"Message-ID: <abc.draft1@" in raw


def test_gmail_says_whether_a_message_id_already_went_out():
    http = HttpMockSequence(
        [
            ({"status": "200"}, json.dumps({"messages": [{"id": "m1"}], "resultSizeEstimate": 1})),
            ({"status": "200"}, json.dumps({"resultSizeEstimate": 0})),
        ]
    )
    mailer = Mailer(backend="gmail")
    mailer._http = http
    assert mailer.already_sent("<abc.draft1@company-ai.example>")
    assert not mailer.already_sent("<other@company-ai.example>")
    assert "rfc822msgid%3A%3Cabc.draft1%40company-ai.example%3E" in http.request_sequence[0][0]


def test_gmail_errors_surface_and_without_a_token_it_refuses_clearly():
    from googleapiclient.errors import HttpError

    mailer = Mailer(backend="gmail")
    mailer._http = HttpMockSequence([({"status": "403"}, json.dumps({"error": "denied"}))])
    with pytest.raises(HttpError):
        mailer.send(message())
    with pytest.raises(ValueError, match="COMPANY_AI_GMAIL_TOKEN"):
        Mailer(backend="gmail").send(message())


SEND = "https://www.googleapis.com/auth/gmail.send"
READ = "https://www.googleapis.com/auth/gmail.readonly"


def scopes_asked_at_refresh(resource) -> set[str]:
    """The scopes a resource's credentials ask Google's token endpoint for when they refresh
    (a fake token endpoint in process: no network)."""
    asked = []

    def token_endpoint(url, method="GET", body=None, headers=None, **_):
        form = parse_qs(body.decode() if isinstance(body, bytes) else body)
        asked.append(set(form["scope"][0].split()))
        granted = {"access_token": "a", "expires_in": 3600, "scope": f"{SEND} {READ}"}
        return SimpleNamespace(status=200, headers={}, data=json.dumps(granted).encode())

    resource._credentials().refresh(token_endpoint)
    return asked[0]


def test_one_shared_gmail_token_gives_each_resource_only_the_scopes_it_needs():
    token = json.dumps(
        {"client_id": "c", "client_secret": "s", "refresh_token": "r",
         "token_uri": "https://oauth2.example/token"}
    )  # fmt: skip
    # The mailer sends, and searches for a Message-ID before any resend (already_sent).
    assert scopes_asked_at_refresh(Mailer(backend="gmail", gmail_token=token)) == {SEND, READ}
    # The inbox reader only reads: even with a token that may send, its access tokens cannot.
    assert scopes_asked_at_refresh(
        InboxSource(backend="gmail", cursor="unused", gmail_token=token)
    ) == {READ}
