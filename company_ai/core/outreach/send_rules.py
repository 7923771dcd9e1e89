"""The send rules: whether a contact may be written to at a moment, from what they answered.

One function (`hold_reason`) decides, for live data (research picks, drafts and the
pre-send re-check in core/outreach/research.py and core/outreach/day.py) and for the
sample's history (tests/core/test_sample_world.py replays it through the same function). A
hold comes from mail the inbox triage matched to a thread (core/inbox/replies.py) or from the
sample generator:

  - `bounced`: a delivery failure; no message ever again to that address (for good);
  - `unsubscribed`: "stop emailing me"; nothing ever again (for good);
  - `replied`: any other reply; the conversation now belongs to a person (for good);
  - `deferred`: "not now, try next quarter"; nothing until the date it names;
  - `out_of_office`: an auto-reply; nothing (no bump either) until the return date.

A message whose `replied_at` is set without any hold (data from before holds existed)
counts as `replied`.

And when: only in the contact's working hours (`in_working_hours`, `next_working_moment`;
the hours and the cities' timezones below are the one definition). Live sends outside them
are held until they begin (core/outreach/day.py); the sample generator places its sends inside
them. Stdlib only.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

FOR_GOOD = frozenset({"bounced", "unsubscribed", "replied"})
HOLD_KINDS = ("bounced", "unsubscribed", "replied", "deferred", "out_of_office")


@dataclass(frozen=True)
class Hold:
    kind: str
    since: str  # stored UTC time the hold began
    until: str | None  # None: for good
    address: str | None = None  # bounced: the address that failed
    reason: str = ""


def hold_reason(holds: Iterable[Hold], at: str, email: str | None) -> str | None:
    """Why nothing may be sent at `at` (a stored UTC time) to this contact at `email`, or
    None. Only holds that began at or before `at` count: history is judged as it stood."""
    for hold in sorted(holds, key=lambda h: (HOLD_KINDS.index(h.kind), h.since)):
        if hold.since > at:
            continue
        if hold.kind == "bounced":
            if hold.address is None or email is None or hold.address == email.lower():
                return f"mail to {hold.address or 'this address'} bounced at {hold.since}"
            continue
        if hold.until is None or hold.kind in FOR_GOOD:
            return f"{hold.kind} at {hold.since}: {hold.reason}".rstrip(": ")
        if at < hold.until:
            return f"{hold.kind} until {hold.until} ({hold.reason})"
    return None


def read_holds(
    outreach: sqlite3.Connection, contact_id: int | None = None
) -> dict[int, list[Hold]]:
    """Every hold by contact (or one contact's), plus a `replied` hold for a replied message
    with no hold of its own (older data)."""
    where, args = ("WHERE contact_id = $1", (contact_id,)) if contact_id is not None else ("", ())
    holds: dict[int, list[Hold]] = {}
    for cid, kind, since, until, address, reason in outreach.execute(
        f"SELECT contact_id, kind, since, until, address, reason FROM send_holds {where}", args
    ):
        holds.setdefault(cid, []).append(Hold(kind, since, until, address, reason))
    for cid, replied in outreach.execute(
        f"SELECT contact_id, min(replied_at) FROM messages {where}"
        f" {'AND' if where else 'WHERE'} replied_at IS NOT NULL GROUP BY contact_id",
        args,
    ):
        if cid not in holds:
            holds[cid] = [Hold("replied", replied, None, None, "replied")]
    return holds


def bounced_addresses(outreach: sqlite3.Connection) -> set[str]:
    """Every address a bounce was recorded for: none of them is written to again."""
    return {
        a for (a,) in outreach.execute("SELECT address FROM send_holds WHERE kind = 'bounced'") if a
    }


def add_hold(
    outreach: sqlite3.Connection,
    contact_id: int,
    hold: Hold,
    evidence: str,
) -> None:
    """Record a hold (inside the caller's transaction); the same hold twice is stored once."""
    outreach.execute(
        "INSERT INTO send_holds (contact_id, kind, since, until, address, reason, evidence)"
        " VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT DO NOTHING",
        (contact_id, hold.kind, hold.since, hold.until, hold.address, hold.reason, evidence),
    )


# --- working hours ------------------------------------------------------------------------

# The working hours, the one definition: a send goes out on a weekday between 09:00 and
# 17:00 where the contact is, live (core/outreach/day.py holds a send until then) and in the
# sample's history (sample_world/crm.py). Where the contact is: the timezone of the city the CRM
# gives, else the owner's (COMPANY_AI_TIMEZONE).
CITY_TIMEZONES = {
    **dict.fromkeys(
        ("London", "Manchester", "Leeds", "Bristol", "Edinburgh", "Glasgow", "Cardiff", "Belfast"),
        "Europe/London",
    ),
    **dict.fromkeys(("Dublin", "Cork"), "Europe/Dublin"),
    **dict.fromkeys(("Amsterdam", "Rotterdam"), "Europe/Amsterdam"),
    **dict.fromkeys(("Berlin", "Hamburg", "Munich"), "Europe/Berlin"),
    **dict.fromkeys(("Paris", "Lyon"), "Europe/Paris"),
    **dict.fromkeys(("Madrid", "Barcelona"), "Europe/Madrid"),
    **dict.fromkeys(("Warsaw", "Kraków"), "Europe/Warsaw"),
    "Lisbon": "Europe/Lisbon",
    "Stockholm": "Europe/Stockholm",
    "Oslo": "Europe/Oslo",
    "Copenhagen": "Europe/Copenhagen",
    "Helsinki": "Europe/Helsinki",
    "Prague": "Europe/Prague",
    "Vienna": "Europe/Vienna",
    "Zürich": "Europe/Zurich",
    "Milan": "Europe/Rome",
    # Further away: none of the sample's contacts lives here, live contacts may.
    **dict.fromkeys(("New York", "Boston", "Toronto"), "America/New_York"),
    **dict.fromkeys(("Chicago", "Austin"), "America/Chicago"),
    **dict.fromkeys(
        ("San Francisco", "Los Angeles", "Seattle", "Vancouver"), "America/Los_Angeles"
    ),
    "São Paulo": "America/Sao_Paulo",
    "Dubai": "Asia/Dubai",
    **dict.fromkeys(("Bangalore", "Mumbai", "Delhi"), "Asia/Kolkata"),
    "Singapore": "Asia/Singapore",
    "Hong Kong": "Asia/Hong_Kong",
    "Tokyo": "Asia/Tokyo",
    "Seoul": "Asia/Seoul",
    **dict.fromkeys(("Sydney", "Melbourne"), "Australia/Sydney"),
    "Auckland": "Pacific/Auckland",
}
WORK_START_HOUR, WORK_END_HOUR = 9, 17


def contact_timezone(city: str | None, default: str = "UTC") -> str:
    return CITY_TIMEZONES.get(city or "", default)


def in_working_hours(moment: datetime, tz: str) -> bool:
    """Whether `moment` is a weekday between 09:00 and 17:00 in timezone `tz`."""
    local = moment.astimezone(ZoneInfo(tz))
    return local.weekday() < 5 and WORK_START_HOUR <= local.hour < WORK_END_HOUR


def next_working_moment(moment: datetime, tz: str) -> datetime:
    """`moment` if it is inside working hours in `tz`, else when they next begin there (a
    weekday's 09:00 local), in `moment`'s timezone."""
    if in_working_hours(moment, tz):
        return moment
    zone = ZoneInfo(tz)
    local = moment.astimezone(zone)
    day = local.date() + timedelta(days=local.hour >= WORK_START_HOUR)
    while day.weekday() >= 5:
        day += timedelta(days=1)
    start = datetime(day.year, day.month, day.day, WORK_START_HOUR, tzinfo=zone)
    return start.astimezone(moment.tzinfo)
