import base64
from collections.abc import Callable, Container
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

import dagster as dg
from googleapiclient.errors import HttpError
from pydantic import PrivateAttr

from company_ai.core.inbox import LOOKBACK_DAYS, Fetched, InboundMail, Log, read_maildir
from company_ai.core.inbox.mail import MailSource
from company_ai.core.intake import outside_time
from company_ai.resources.gmail import gmail_credentials, gmail_service

GMAIL_READ_SCOPES = ["https://www.googleapis.com/auth/gmail.readonly"]
PAGE_SIZE = 500


class MaildirInbox:
    """A local Maildir, read only, by its keys (those already taken are skipped)."""

    source = "maildir"

    def __init__(self, maildir: str) -> None:
        self.maildir = maildir

    def fetch(
        self, history_id: str | None, taken: Container[str], now: datetime, warn: Log
    ) -> Fetched:
        return read_maildir(Path(self.maildir), taken, now, warn)


class GmailInbox:
    """The Gmail API, read only: new mail since a history id (`InboxSource` says how);
    `service()` builds the client at each fetch."""

    source = "gmail"

    def __init__(self, service: Callable[[], Any]) -> None:
        self._service = service

    def fetch(
        self, history_id: str | None, taken: Container[str], now: datetime, warn: Log
    ) -> Fetched:
        fetched = Fetched()
        users = self._service().users()
        listed = self._history(users, history_id, fetched, warn) if history_id else None
        if listed is None and not fetched.failures:
            listed = self._full_list(users, fetched, warn)
        if listed is None:
            return fetched
        ids, latest = listed
        for message_id in ids:
            if f"gmail:{message_id}" in taken:
                continue
            try:
                got = users.messages().get(userId="me", id=message_id, format="raw").execute()
            except HttpError as exc:
                _failed(fetched, f"gmail:{message_id}: HTTP {exc.status_code}", warn)
                continue
            mail = _mail(message_id, got, now)
            if isinstance(mail, str):
                _failed(fetched, f"gmail:{message_id}: {mail}", warn)
            else:
                fetched.mails.append(mail)
        if not fetched.failures:
            fetched.history_id = latest
        return fetched

    def _history(
        self, users: Any, start: str, fetched: Fetched, warn: Log
    ) -> tuple[list[str], str] | None:
        """(the ids of messages added since `start`, the latest history id), or None when
        Gmail no longer has `start` (404: a full list is needed) or the call failed."""
        ids: list[str] = []
        latest, token = start, None
        while True:
            try:
                page = (
                    users.history()
                    .list(
                        userId="me",
                        startHistoryId=start,
                        historyTypes="messageAdded",
                        maxResults=PAGE_SIZE,
                        pageToken=token,
                    )
                    .execute()
                )
            except HttpError as exc:
                if exc.status_code == 404:
                    warn(f"inbox: history id {start} is too old: listing the last days again")
                    return None
                _failed(fetched, f"users.history.list failed: HTTP {exc.status_code}", warn)
                return None
            if not isinstance(page, dict):
                _failed(fetched, "users.history.list answered with malformed JSON", warn)
                return None
            for record in page.get("history") or []:
                added = record.get("messagesAdded") if isinstance(record, dict) else None
                for item in added or []:
                    message = item.get("message") if isinstance(item, dict) else None
                    if not isinstance(message, dict) or not isinstance(message.get("id"), str):
                        _failed(
                            fetched,
                            f"users.history.list gave an entry without an id: {item!r:.80}",
                            warn,
                        )
                    elif not {"SENT", "DRAFT"} & set(message.get("labelIds") or []):
                        ids.append(message["id"])
            if _history_id(page.get("historyId")):
                latest = str(page["historyId"])
            token = page.get("nextPageToken")
            if not token:
                return list(dict.fromkeys(ids)), latest

    def _full_list(self, users: Any, fetched: Fetched, warn: Log) -> tuple[list[str], str] | None:
        """(the ids of the last `LOOKBACK_DAYS` days' messages, the history id before them)."""
        try:
            profile = users.getProfile(userId="me").execute()
        except HttpError as exc:
            _failed(fetched, f"users.getProfile failed: HTTP {exc.status_code}", warn)
            return None
        latest = profile.get("historyId") if isinstance(profile, dict) else None
        if not _history_id(latest):
            _failed(fetched, "users.getProfile gave no history id", warn)
            return None
        ids: list[str] = []
        token = None
        while True:
            try:
                page = (
                    users.messages()
                    .list(
                        userId="me",
                        q=f"newer_than:{LOOKBACK_DAYS}d -in:sent -in:drafts",
                        maxResults=PAGE_SIZE,
                        pageToken=token,
                    )
                    .execute()
                )
            except HttpError as exc:
                _failed(fetched, f"users.messages.list failed: HTTP {exc.status_code}", warn)
                return None
            if not isinstance(page, dict):
                _failed(fetched, "users.messages.list answered with malformed JSON", warn)
                return None
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
                return ids, str(latest)


class InboxSource(dg.ConfigurableResource):
    """Where replies are read. `maildir` (the default, for the demo and the tests): a local
    Maildir at `maildir`, read only, by its keys (those already taken are skipped). `gmail`:
    the Gmail API through google-api-python-client with the read-only scope, OAuth
    authorized-user JSON from `COMPANY_AI_GMAIL_TOKEN` (bound via `dg.EnvVar`): new mail by
    `users.history.list` from the `historyId` checkpointed in `cursor`; without one, or when
    Gmail says it is too old (404), `users.getProfile`'s history id and
    `users.messages.list` of the last `LOOKBACK_DAYS` days; each message by
    `users.messages.get` (format `raw`). A message that cannot be read (an API error, a
    malformed answer, missing fields) is a failure with its reason: the checkpoint then
    stays, so it is read again next run. The backend (`MaildirInbox`, `GmailInbox`) is
    chosen once, at the first use (`implementation`)."""

    backend: Literal["maildir", "gmail"] = "maildir"
    maildir: str = ""
    cursor: str  # the Gmail checkpoint: a small JSON file, written atomically
    gmail_token: str = ""
    _http: Any = PrivateAttr(default=None)  # tests: a googleapiclient HttpMockSequence
    _chosen: MailSource | None = PrivateAttr(default=None)

    def implementation(self) -> MailSource:
        """The source of `backend`, made once."""
        if self._chosen is None:
            if self.backend == "maildir":
                self._chosen = MaildirInbox(self.maildir)
            else:
                self._chosen = GmailInbox(self._gmail)
        return self._chosen

    @property
    def source(self) -> str:
        """The provenance of what is read here, for episodes."""
        return self.implementation().source

    def fetch(
        self, history_id: str | None, taken: Container[str], now: datetime, warn: Log
    ) -> Fetched:
        return self.implementation().fetch(history_id, taken, now, warn)

    def _gmail(self):
        return gmail_service(self.gmail_token, GMAIL_READ_SCOPES, self._http, "inbox")

    def _credentials(self):
        # Read-only at every refresh: the reader cannot send, even with the shared token.
        return gmail_credentials(self.gmail_token, GMAIL_READ_SCOPES)


def _history_id(value: Any) -> bool:
    return isinstance(value, str | int) and str(value).isdigit() and len(str(value)) < 30


def _failed(fetched: Fetched, why: str, warn: Log) -> Fetched:
    fetched.failures.append(why)
    warn(f"inbox: {why}; the cursor stays, so it is read again next run")
    return fetched


def _mail(message_id: str, got: Any, now: datetime) -> InboundMail | str:
    """The message of a `users.messages.get` answer, or why it cannot be used."""
    if not isinstance(got, dict):
        return "malformed JSON"
    raw, internal = got.get("raw"), got.get("internalDate")
    if not isinstance(raw, str) or not isinstance(internal, str | int):
        return "the answer has no raw message or no internalDate"
    try:
        data = base64.urlsafe_b64decode(raw + "=" * (-len(raw) % 4))
        claimed = datetime.fromtimestamp(int(internal) / 1000, UTC).replace(microsecond=0)
    except (ValueError, OverflowError, OSError) as exc:
        return f"undecodable ({exc})"
    when = outside_time(claimed, now)  # Gmail's internalDate can be the sender's Date
    return InboundMail(f"gmail:{message_id}", when.at, data, when.flag)
