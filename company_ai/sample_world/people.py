"""The sample CRM as an offline People source: the contacts as `connections.list` lists them.

The sample loader writes every sample contact as a People API person (`resourceName` is
the row's own `external_id`, `sample/<id>`) into one JSON file; `read_sample_page` serves
it in pages whose token is the offset, so the sync runs offline exactly as it runs
against Google (no sync token: each pass is a full one).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path

from company_ai.core.crm import MalformedPage, TokenRejected
from company_ai.core.files import write_atomic

SAMPLE_PEOPLE_FILE = "sample_people.json"  # in the data directory


def sample_person(row: tuple) -> dict:
    """A sample contact row (as `core.sample` makes it) as a People API person."""
    _id, email, name, company, title, city, _warmth, _source, external_id = row[:9]
    person: dict = {
        "resourceName": external_id,
        "names": [{"displayName": name, "metadata": {"primary": True}}],
        "organizations": [{"name": company, "title": title, "metadata": {"primary": True}}],
        "addresses": [{"city": city}],
    }
    if email:
        person["emailAddresses"] = [{"value": email, "metadata": {"primary": True}}]
    return person


def write_sample_people(path: Path, rows: Iterable[tuple]) -> None:
    people = [sample_person(row) for row in rows]
    write_atomic(path, json.dumps({"connections": people}, ensure_ascii=False).encode("utf-8"))


def read_sample_page(path: Path, page_token: str | None, page_size: int) -> dict:
    """One page of the sample people file; no file is an empty address book."""
    try:
        people = json.loads(path.read_bytes())["connections"]
    except FileNotFoundError:
        return {"connections": []}
    except (ValueError, KeyError, TypeError) as exc:
        raise MalformedPage(f"the sample people file {path} is not a people list") from exc
    start = 0
    if page_token is not None:
        if not page_token.isdigit() or int(page_token) > len(people):
            raise TokenRejected(400, "not a page of the sample people file")
        start = int(page_token)
    page: dict = {"connections": people[start : start + page_size]}
    if start + page_size < len(people):
        page["nextPageToken"] = str(start + page_size)
    return page
