import base64
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

import dagster as dg
from pydantic import PrivateAttr

from company_ai.core.inbox import Fetched, InboundMail, Log, read_maildir
from company_ai.resources.gmail import gmail_credentials, gmail_service

GMAIL_READ_SCOPES = ["https://www.googleapis.com/auth/gmail.readonly"]
PAGE_SIZE = 500


class InboxSource(dg.ConfigurableResource):
    """Where replies are read. `maildir` (the default, for the demo and the tests): a local
    Maildir at `maildir` (Python's `mailbox`), read only. `gmail`: the Gmail API's
    `users.messages.list` (`after:` the cursor) and `users.messages.get` (format `raw`)
    through google-api-python-client with the read-only scope, OAuth authorized-user JSON
    from `COMPANY_AI_GMAIL_TOKEN` (bound via `dg.EnvVar`). A message that cannot be read
    (an API error, a malformed answer, missing fields) is a failure with its reason: the
    caller then keeps its cursor (`cursor`), so it is read again next run."""

    backend: Literal["maildir", "gmail"] = "maildir"
    maildir: str = ""
    cursor: str  # the triage cursor: a small JSON file, written atomically
    gmail_token: str = ""
    _http: Any = PrivateAttr(default=None)  # tests: a googleapiclient HttpMockSequence

    @property
    def source(self) -> str:
        """The provenance of what is read here, for episodes."""
        return "gmail" if self.backend == "gmail" else "maildir"

    def fetch(self, since: datetime, warn: Log) -> Fetched:
        if self.backend == "maildir":
            return read_maildir(Path(self.maildir), since, warn)
        return self._fetch_gmail(since, warn)

    def _fetch_gmail(self, since: datetime, warn: Log) -> Fetched:
        from googleapiclient.errors import HttpError

        fetched = Fetched()
        messages = self._gmail().users().messages()
        ids: list[str] = []
        token = None
        while True:
            try:
                page = messages.list(
                    userId="me",
                    q=f"after:{int(since.timestamp())}",
                    maxResults=PAGE_SIZE,
                    pageToken=token,
                ).execute()
            except HttpError as exc:
                return _failed(fetched, f"users.messages.list failed: HTTP {exc.status_code}", warn)
            if not isinstance(page, dict):
                return _failed(fetched, "users.messages.list answered with malformed JSON", warn)
            for item in page.get("messages") or []:
                if isinstance(item, dict) and isinstance(item.get("id"), str):
                    ids.append(item["id"])
                else:
                    _failed(
                        fetched,
                        f"users.messages.list gave an entry without an id: {item!r:.80}",
                        warn,
                    )
            token = page.get("nextPageToken")
            if not token:
                break
        for message_id in ids:
            try:
                got = messages.get(userId="me", id=message_id, format="raw").execute()
            except HttpError as exc:
                _failed(fetched, f"gmail:{message_id}: HTTP {exc.status_code}", warn)
                continue
            mail = _mail(message_id, got)
            if isinstance(mail, str):
                _failed(fetched, f"gmail:{message_id}: {mail}", warn)
            else:
                fetched.mails.append(mail)
        return fetched

    def _gmail(self):
        return gmail_service(self.gmail_token, GMAIL_READ_SCOPES, self._http, "inbox")

    def _credentials(self):
        # Read-only at every refresh: the reader cannot send, even with the shared token.
        return gmail_credentials(self.gmail_token, GMAIL_READ_SCOPES)


def _failed(fetched: Fetched, why: str, warn: Log) -> Fetched:
    fetched.failures.append(why)
    warn(f"inbox: {why}; the cursor stays, so it is read again next run")
    return fetched


def _mail(message_id: str, got: Any) -> InboundMail | str:
    """The message of a `users.messages.get` answer, or why it cannot be used."""
    if not isinstance(got, dict):
        return "malformed JSON"
    raw, internal = got.get("raw"), got.get("internalDate")
    if not isinstance(raw, str) or not isinstance(internal, str | int):
        return "the answer has no raw message or no internalDate"
    try:
        data = base64.urlsafe_b64decode(raw + "=" * (-len(raw) % 4))
        received = datetime.fromtimestamp(int(internal) / 1000, UTC).replace(microsecond=0)
    except (ValueError, OverflowError, OSError) as exc:
        return f"undecodable ({exc})"
    return InboundMail(f"gmail:{message_id}", received, data)
