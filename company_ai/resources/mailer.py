import base64
from collections.abc import Callable
from email import policy
from email.message import EmailMessage
from pathlib import Path
from typing import Any, Literal, Protocol

import dagster as dg
from pydantic import PrivateAttr

from company_ai.core.files import write_atomic
from company_ai.resources.gmail import gmail_credentials, gmail_service

# Sending needs gmail.send; asking whether a Message-ID already went out (before any resend
# after a crash, `already_sent`) searches the mailbox, which gmail.send does not allow:
# without gmail.readonly that lookup was refused (403) and a crashed send stayed stuck.
GMAIL_SCOPES = [
    "https://www.googleapis.com/auth/gmail.send",
    "https://www.googleapis.com/auth/gmail.readonly",
]


class Transport(Protocol):
    """How mail leaves: what `Mailer` hands each message to."""

    def send(self, message: EmailMessage) -> str: ...

    def already_sent(self, rfc_message_id: str) -> bool: ...


class OutboxMailer:
    """One RFC 5322 `.eml` file per message in `outbox_dir`, named by its Message-ID."""

    def __init__(self, outbox_dir: str, sender_name: str, sender_email: str) -> None:
        self.outbox_dir = outbox_dir
        self.sender_name = sender_name
        self.sender_email = sender_email

    def send(self, message: EmailMessage) -> str:
        path = self._path(message["Message-ID"])
        write_atomic(path, message.as_bytes(policy=policy.SMTP))
        return path.name

    def already_sent(self, rfc_message_id: str) -> bool:
        return self._path(rfc_message_id).is_file()

    def _path(self, rfc_message_id: str) -> Path:
        if not self.outbox_dir:
            raise ValueError("the outbox mailer needs outbox_dir")
        name = "".join(c if c.isalnum() or c in "-_.@" else "_" for c in rfc_message_id)
        return Path(self.outbox_dir) / f"{name.strip('_')}.eml"


class GmailMailer:
    """The Gmail API's `users.messages.send`; `service()` builds the client at each call
    (so a missing token is refused when mail is sent, not when the mailer is chosen)."""

    def __init__(self, service: Callable[[], Any], sender_name: str, sender_email: str) -> None:
        self._service = service
        self.sender_name = sender_name
        self.sender_email = sender_email

    def send(self, message: EmailMessage) -> str:
        raw = base64.urlsafe_b64encode(message.as_bytes(policy=policy.SMTP)).decode()
        sent = self._service().users().messages().send(userId="me", body={"raw": raw}).execute()
        return sent["id"]

    def already_sent(self, rfc_message_id: str) -> bool:
        found = (
            self._service()
            .users()
            .messages()
            .list(userId="me", q=f"rfc822msgid:{rfc_message_id}", includeSpamTrash=True)
            .execute()
        )
        return bool(found.get("messages"))


class Mailer(dg.ConfigurableResource):
    """Where outreach email goes. `outbox` (the default, for the demo and the tests):
    one RFC 5322 `.eml` file per message in `outbox_dir`, written atomically and named by
    its Message-ID (`OutboxMailer`). `gmail`: the Gmail API's `users.messages.send` through
    google-api-python-client, with OAuth authorized-user JSON from
    `COMPANY_AI_GMAIL_TOKEN` (bound via `dg.EnvVar`) (`GmailMailer`). Both can say whether
    a Message-ID already went out, which is what makes a resumed send idempotent. The
    backend is chosen once, at the first use (`implementation`). `company_domains` and
    `company_phones` are the company's own: with the sender's email domain, the only links,
    addresses and numbers a draft may give (`core.gate.actionable`). Satisfies
    `core.outreach.day.Mailer`."""

    backend: Literal["outbox", "gmail"] = "outbox"
    outbox_dir: str = ""
    gmail_token: str = ""
    sender_name: str = "Sam Rivers"
    sender_email: str = "sam@company-ai.example"
    company_domains: list[str] = []
    company_phones: list[str] = []
    _http: Any = PrivateAttr(default=None)  # tests: a googleapiclient HttpMockSequence
    _chosen: Transport | None = PrivateAttr(default=None)

    def implementation(self) -> Transport:
        """The mailer of `backend`, made once."""
        if self._chosen is None:
            if self.backend == "outbox":
                self._chosen = OutboxMailer(self.outbox_dir, self.sender_name, self.sender_email)
            else:
                self._chosen = GmailMailer(self._gmail, self.sender_name, self.sender_email)
        return self._chosen

    def send(self, message: EmailMessage) -> str:
        """Send one message; returns the provider's id for it."""
        return self.implementation().send(message)

    def already_sent(self, rfc_message_id: str) -> bool:
        """Whether a message with this Message-ID already went out (a resumed send)."""
        return self.implementation().already_sent(rfc_message_id)

    def _gmail(self):
        return gmail_service(self.gmail_token, GMAIL_SCOPES, self._http, "mailer")

    def _credentials(self):
        return gmail_credentials(self.gmail_token, GMAIL_SCOPES)
