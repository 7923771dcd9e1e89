import json
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

import dagster as dg
import orjson
from googleapiclient.model import JsonModel
from pydantic import PrivateAttr

from company_ai.core.crm import (
    MAX_DELETED_SHARE,
    PAGE_FIELDS,
    PAGE_SIZE,
    PERSON_FIELDS,
    ContactSource,
    Fetch,
    MalformedPage,
    TokenRejected,
)
from company_ai.sample_world.people import read_sample_page

PEOPLE_SCOPES = ["https://www.googleapis.com/auth/contacts.readonly"]
TRANSIENT_RETRIES = 2  # at most ~3 s of backoff: well inside the 80 s past the budget


class FastJsonModel(JsonModel):
    """The client's JSON model with orjson reading the answers: a page of 1,000 people is
    ~460 KB, and the stdlib's `json.loads` of it was the largest cost of a sync page
    (BENCHMARKS.md). The People API uses no data wrapper, so the body is the answer.

    What orjson refuses (a lone surrogate, a number of 5,000 digits, NaN) is read again by
    the stdlib, which keeps such a string (each person's text is cleaned later, person by
    person) and turns such a number into `Unreadable`, which no field of a person accepts:
    one bad person is refused, not the page. An answer neither can read is MalformedPage."""

    def deserialize(self, content: bytes | str) -> object:
        try:
            return orjson.loads(content)
        except orjson.JSONDecodeError as exc:  # also an answer that is not UTF-8
            return _lenient(content, exc)


class Unreadable:
    """A JSON number past the People bounds (or NaN): a value, but never a usable one."""

    def __init__(self, text: str) -> None:
        self.digits = len(text)


MAX_DIGITS = 30


def _number(kind: type) -> Any:
    def parse(text: str) -> object:
        return Unreadable(text) if len(text) > MAX_DIGITS else kind(text)

    return parse


def _lenient(content: bytes | str, first: Exception) -> object:
    try:
        text = content.decode("utf-8") if isinstance(content, bytes) else content
        return json.loads(
            text, parse_int=_number(int), parse_float=_number(float), parse_constant=Unreadable
        )
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise MalformedPage(f"the answer is not a JSON object ({first})") from exc


class SamplePeople:
    """The sample CRM as the People API would list it, read from `sample_file`."""

    source_name = "sample"

    def __init__(self, sample_file: str) -> None:
        self.sample_file = sample_file

    def fetcher(self) -> Fetch:
        path = Path(self.sample_file)
        return lambda page_token, _sync: read_sample_page(path, page_token, PAGE_SIZE)


class GooglePeople:
    """The Google People API's `people.connections.list`; `service()` builds the client
    when a fetcher is asked for."""

    source_name = "google_people"

    def __init__(self, service: Callable[[], Any]) -> None:
        self._service = service

    def fetcher(self) -> Fetch:
        connections = self._service().people().connections()

        def fetch(page_token: str | None, sync_token: str | None) -> object:
            from googleapiclient.errors import HttpError

            request = connections.list(
                resourceName="people/me",
                pageSize=PAGE_SIZE,
                personFields=PERSON_FIELDS,
                fields=PAGE_FIELDS,
                pageToken=page_token,
                syncToken=sync_token,
                requestSyncToken=True,
            )
            try:
                # Transient answers (429, 5xx) are retried by the client with backoff; a
                # refused token (400/410) never is.
                return request.execute(num_retries=TRANSIENT_RETRIES)
            except HttpError as exc:
                if exc.resp.status in (400, 410):
                    raise TokenRejected(exc.resp.status, exc.reason or "") from exc
                raise

        return fetch


class PeopleSource(dg.ConfigurableResource):
    """Where contacts come from. `sample` (the default, for the demo and the tests): the
    sample CRM as the People API would list it, read from `sample_file` (written by the
    sample loader). `google`: the Google People API's `people.connections.list` through
    google-api-python-client, with OAuth authorized-user JSON (client id, client secret,
    refresh token; scope contacts.readonly) from `COMPANY_AI_GOOGLE_PEOPLE_TOKEN`, bound via
    `dg.EnvVar`; the access token is refreshed by google-auth as it expires. Either way
    `fetcher()` gives `fetch(page_token, sync_token) -> page` for `core.crm.sync_people`:
    a refused token (HTTP 400/410) raises `TokenRejected`, an answer that is not JSON
    raises `MalformedPage`. `max_deleted_share`: the most of the contacts one complete
    pass may mark deleted for not returning them (more is held as a likely fault; raise it
    for one run when the address book really shrank). The backend (`SamplePeople`,
    `GooglePeople`) is chosen once, at the first use (`implementation`)."""

    backend: Literal["sample", "google"] = "sample"
    max_deleted_share: float = MAX_DELETED_SHARE
    sample_file: str = ""
    google_token: str = ""
    _http: Any = PrivateAttr(default=None)  # tests: a googleapiclient HttpMockSequence
    _chosen: ContactSource | None = PrivateAttr(default=None)

    def implementation(self) -> ContactSource:
        """The source of `backend`, made once."""
        if self._chosen is None:
            if self.backend == "sample":
                self._chosen = SamplePeople(self.sample_file)
            else:
                self._chosen = GooglePeople(self._service)
        return self._chosen

    @property
    def source_name(self) -> str:
        """What synced rows are marked with (`contacts.synced_from`)."""
        return self.implementation().source_name

    def fetcher(self) -> Fetch:
        return self.implementation().fetcher()

    def _service(self):
        from googleapiclient.discovery import build

        if self._http is not None:
            return build(
                "people", "v1", http=self._http, static_discovery=True, model=FastJsonModel()
            )
        if not self.google_token:
            raise ValueError(
                "the google contacts source needs COMPANY_AI_GOOGLE_PEOPLE_TOKEN "
                "(authorized-user JSON: run `company-ai connect-google`)"
            )
        from google.oauth2.credentials import Credentials

        try:
            info = json.loads(self.google_token)
            credentials = Credentials.from_authorized_user_info(info, PEOPLE_SCOPES)
        except (ValueError, KeyError) as exc:
            # The message never echoes the token's text: it is a secret.
            raise ValueError(
                "COMPANY_AI_GOOGLE_PEOPLE_TOKEN is not authorized-user JSON with client_id, "
                "client_secret and refresh_token"
            ) from exc
        # The client wraps its own http (a 60-s timeout) in google-auth's AuthorizedHttp,
        # which refreshes the access token from the refresh token whenever it expires.
        return build(
            "people",
            "v1",
            credentials=credentials,
            static_discovery=True,
            cache_discovery=False,
            model=FastJsonModel(),
        )
