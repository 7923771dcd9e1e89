"""The timetable: the day's jobs as data, and which of their slots fall due when.

A slot is a job at a local wall-clock time on a set of weekdays, in one IANA timezone.
A partition is its day, and its day is a window that ends at its own tick: the tick on
local day D processes partition D, the window from the slot's previous tick to this one
(the 23:30 brain's D is 23:30 D−1 to 23:30 D; a weekday slot's Monday window opens at
Friday's tick). DST follows Dagster's scheduler: a time that does not exist (spring
forward) fires at the first valid minute after the gap, and a time that exists twice
(fall back) fires once, at its second occurrence; a window across a clock change is 23 or
25 hours long, from one tick to the next.

Every job is a *replay* (a pure function of its day's stored inputs: safe to backfill)
or a *capture* (it records the world at the moment it runs: only its current partition
may run, see `current_partitions`). `plan_catchup` decides, from facts read off the
ledger (Dagster's run history), which missed slots get a run now; a missed capture is
never run late, it is reported as not taken. Plain logic: the sensor reads, this decides.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time, timedelta
from zoneinfo import ZoneInfo

EVERY_DAY = frozenset(range(7))  # Monday = 0, as in `date.weekday()`
WEEKDAYS = frozenset(range(5))
WEEKEND = frozenset({5, 6})

REPLAY, CAPTURE = "replay", "capture"

_DAY_NAMES = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")


@dataclass(frozen=True)
class Slot:
    """`job` runs at local time `at` on `weekdays` (0 = Monday)."""

    job: str
    at: time
    weekdays: frozenset[int] = EVERY_DAY
    capture: bool = False  # it records the world now: only its current partition may run

    def __post_init__(self) -> None:
        if not self.weekdays or not self.weekdays <= EVERY_DAY:
            raise ValueError(f"{self.job}: weekdays must be a non-empty subset of 0..6")

    @property
    def max_gap_days(self) -> int:
        """The longest wait between two ticks, in days (3 for weekdays: Friday to Monday)."""
        days = sorted(self.weekdays)
        return max((b - a) % 7 or 7 for a, b in zip(days, days[1:] + days[:1], strict=True))

    @property
    def cron(self) -> str:
        """The cron string Dagster is given (cron counts weekdays from Sunday = 0)."""
        if self.weekdays == EVERY_DAY:
            days = "*"
        else:
            days = ",".join(str(d) for d in sorted((d + 1) % 7 for d in self.weekdays))
        return f"{self.at.minute} {self.at.hour} * * {days}"

    def describe(self, tz: str) -> str:
        """The slot in words, as the UI shows it: `Mon–Fri 07:55 Europe/London`."""
        return f"{days_in_words(self.weekdays)} {self.at:%H:%M} {tz}"

    def partition(self, tick: datetime, tz: str) -> str:
        """The partition a tick at `tick` processes: its local day."""
        return tick.astimezone(ZoneInfo(tz)).date().isoformat()


def days_in_words(weekdays: frozenset[int]) -> str:
    """`Every day`, `Mon–Fri`, `Mon`, `Sat, Sun`: how a person writes a set of weekdays."""
    days = sorted(weekdays)
    if days == list(range(7)):
        return "Every day"
    if len(days) > 2 and days == list(range(days[0], days[-1] + 1)):
        return f"{_DAY_NAMES[days[0]]}–{_DAY_NAMES[days[-1]]}"
    return ", ".join(_DAY_NAMES[d] for d in days)


@dataclass(frozen=True)
class Entry:
    """One line of the timetable: `job` materialises `assets` at its slot.

    `max_runtime_s` becomes the job's `dagster/max_runtime`; the arithmetic that sizes it
    is written beside each entry in `TIMETABLE`.
    """

    job: str
    assets: tuple[str, ...]
    at: time
    max_runtime_s: int
    weekdays: frozenset[int] = EVERY_DAY
    capture: bool = False

    @property
    def slot(self) -> Slot:
        return Slot(self.job, self.at, self.weekdays, self.capture)


TIMETABLE: list[Entry] = [
    # The vault pipeline (staging -> pages -> index): a capture, because staging copies
    # the vault as it is tonight. Measured at 10,000 notes on 2 busy cores (BENCHMARKS.md):
    # staging cold 4-12 s, the offline distiller 2 ms a page, embedding up to 48 ms a page.
    # Sized for a heavy night through Ollama: 100 changed notes x ~20 s a page = 2,000 s,
    # + all 10,000 pages re-embedded (a rebuild) x 48 ms = 480 s, + staging 12 s and the
    # fabrication re-check 20 s: about 2,500 s. 3,600 s leaves headroom; `recall_pages`'
    # max_pages caps the model calls of a bigger backlog, which the next nights finish.
    Entry(
        "vault_job",
        ("vault_staging", "recall_pages", "recall_index"),
        time(0, 30),
        3600,
        capture=True,
    ),
    # The growth analysis reads eight weeks of messages (about 50 a week, so ~400 rows;
    # 170k in all at the benchmark's scale, by an index on sent_at) and writes one small
    # Markdown file: well under 10 s, most of it importing pandas. 300 s.
    Entry("outreach_growth_job", ("outreach_growth",), time(5, 30), 300),
    # The CRM audit: a capture (the CRM is mutable: it counts the CRM as it stands). One
    # pass over the contacts (an address check and the send rules per contact): measured
    # 2.1 s for 156,925 contacts on a busy 2-core box, imports included; every send hold
    # read once, one indexed count of engagement episodes (well under a second at 1.5M
    # episodes), one row written. Under 10 s; 300 s.
    # Before the brief (06:00) and the state export (06:15), which read its row.
    Entry("crm_audit_job", ("crm_audit",), time(5, 45), 300, capture=True),
    # The brief reads ≤500 run records and counts a few tables: well under 5 s. Delivery
    # is one HTTP call with a 10 s timeout per pending alert; 300 s covers ~25 retries.
    Entry("morning_brief_job", ("morning_brief",), time(6, 0), 300),
    # Counting every table of six stores: ~0.5 s on the demo, ~5 s on a 1.5M-episode
    # memory; four small files. 300 s. A capture: it records the stores as they are.
    Entry("state_export_job", ("state_export",), time(6, 15), 300, capture=True),
    # The contact sync: a capture (it records the address book as it is now). It stops
    # itself after 15 pages or 520 s of work (core/crm/people.py), whichever comes first: 15
    # pages of 1,000 people take ~1 s to store (BENCHMARKS.md) and a few seconds each to
    # fetch. The 600 s leave 80 s past the budget for the last request's 60-s timeout and
    # the run's start and end. Done by 07:40, before outreach reads the CRM at 07:55.
    Entry("crm_job", ("crm_contacts",), time(7, 30), 600, capture=True),
    # Inbox triage reads the mail since its cursor: a capture (the inbox as it is now).
    # Measured ~1,000+ messages/s triaged on 2 busy cores (BENCHMARKS.md); a busy day is a
    # few hundred messages, each one Gmail `get` of ~0.2 s: 500 x 0.2 s = 100 s. 600 s.
    Entry("inbox_job", ("inbox_replies",), time(6, 30), 600, capture=True),
    # Outreach: 20 research passes + 10 drafts at about a minute of model time each
    # = 30 min; the gate (pure code, < 1 ms a draft) and 10 sends (a few s each) add
    # under a minute. 1.5 x headroom for a slow model: 45 min = 2700 s, still well
    # before the 08:15 snapshot wants the stores quiet. Its partition is the day the
    # work is done, and it sends mail: a capture.
    Entry(
        "outreach_job",
        ("research_findings", "outreach_drafts", "outreach_messages"),
        time(7, 55),
        2700,
        WEEKDAYS,
        capture=True,
    ),
    # Measured: 5.8 MB of stores copied, hashed and counted in 0.25 s on a loaded 2-core
    # box (BENCHMARKS.md), i.e. ~45 s per GB. A 2 GB data dir ≈ 90 s; 1800 s is 20x that.
    Entry("snapshots_job", ("db_snapshots",), time(8, 15), 1800, capture=True),
    # Like the brief: ≤500 run records, the timetable for one day, one send. 300 s.
    Entry("digest_job", ("daily_digest",), time(9, 5), 300),
    # Engagement drop files: a few hundred small JSON files a day, each read, checked and
    # stored in one transaction (milliseconds each). 300 s. A capture: it takes the folder
    # as it is.
    Entry("engagement_job", ("engagement_signals",), time(18, 30), 300, capture=True),
    # Sealing reads one day's rows once and writes one row: about 0.1 s at the sample's
    # ~200 episodes a day and ~1 s at a 1.5M-episode store. (The 23:15 tick of D seals the
    # episodes recorded since 23:15 D−1, late arrivals included: they are tonight's.)
    # Then the day's episode vectors: ~200-2,000 texts at the offline model's measured
    # ~300 texts/s on 2 busy cores (BENCHMARKS.md) is 1-7 s, plus Chroma's upsert at ~270
    # vectors/s: under 15 s. 600 s covers a day of ~40,000 episodes. A first build or a
    # rebuild of a large memory takes longer (1M episodes: ~1 h to embed and ~1 h to
    # insert); every batch is a checkpoint, so a run stopped at 600 s resumes where it
    # stopped on the next run (or run it once by hand with more time).
    Entry("memory_job", ("contact_episodes", "episode_vectors"), time(23, 15), 600),
    # Synthesis reads one day of run records (~30 runs, each with its check evaluations)
    # and one day of outreach, replies and vault changes: under a second on the demo and
    # a few seconds at 156,925 contacts (BENCHMARKS.md). Then the day's knowledge vectors:
    # ~100 facts and decisions and the pages distilled that day (≤ a few hundred) at ~300
    # texts/s and ~270 upserts/s: under 5 s; a first build of a year of facts and 10,000
    # pages (~50,000 texts) ~6 min, checkpointed like the episodes. 900 s.
    Entry("brain_job", ("brain_facts", "knowledge_vectors"), time(23, 30), 900),
    # The export writes one Markdown file per contact touched that day (≤ a few hundred,
    # each a whole timeline: ~1 ms each) plus the day's file. 600 s.
    Entry("memory_export_job", ("memory_export",), time(23, 45), 600),
    # Aging reads every live vector's metadata, re-scores it and moves the least valuable
    # to the archive: measured 188 s at 745,000 vectors moving 24,000 (BENCHMARKS.md), so
    # about 250 s at the 1M cap on a busy 2-core box. 1800 s. A
    # capture: what it archives and deletes depends on the day it runs (age and TTL are
    # counted to that day), so it runs for its current day only; a missed night loses
    # nothing, because the next pass ages everything that is due by then.
    Entry("memory_aging_job", ("memory_aging",), time(2, 0), 1800, capture=True),
]


def kind_of_job(job: str, entries: Iterable[Entry] = ()) -> str:
    """`capture` or `replay` for a job of the timetable."""
    for entry in entries or TIMETABLE:
        if entry.job == job:
            return CAPTURE if entry.capture else REPLAY
    raise KeyError(f"{job} is not in the timetable")


@dataclass(frozen=True, order=True)
class Due:
    """One slot that fell due: the tick (UTC) and the partition it processes."""

    tick: datetime
    job: str
    partition: str


def local_tick(day: date, at: time, tz: str) -> datetime:
    """The instant (UTC) a slot at local time `at` fires on local `day`, as Dagster fires it."""
    zone = ZoneInfo(tz)
    wall = datetime.combine(day, at)
    for minutes in range(24 * 60):
        candidate = wall + timedelta(minutes=minutes)
        first = candidate.replace(tzinfo=zone, fold=0)
        if first.astimezone(UTC).astimezone(zone).replace(tzinfo=None) != candidate:
            continue  # inside a spring-forward gap: try the next minute
        second = candidate.replace(tzinfo=zone, fold=1)
        chosen = second if second.utcoffset() != first.utcoffset() else first
        return chosen.astimezone(UTC)
    raise ValueError(f"no valid local time on {day} at or after {at} in {tz}")


def ticks_around(slot: Slot, moment: datetime, tz: str) -> tuple[datetime, datetime]:
    """The slot's last tick at or before `moment` and its first tick after it."""
    today = moment.astimezone(ZoneInfo(tz)).date()
    ticks = [
        local_tick(today + timedelta(days=n), slot.at, tz)
        for n in range(-8, 9)
        if (today + timedelta(days=n)).weekday() in slot.weekdays
    ]
    return max(t for t in ticks if t <= moment), min(t for t in ticks if t > moment)


def current_partitions(slot: Slot, moment: datetime, tz: str) -> tuple[str, str]:
    """The partitions a capture may run for at `moment`: the one its last tick processed
    (a late or repeated run of that tick's work) and the one its next tick will process."""
    last, following = ticks_around(slot, moment, tz)
    return slot.partition(last, tz), slot.partition(following, tz)


def scheduled_time(slot: Slot, partition: str, tz: str) -> datetime:
    """The tick (UTC) that processes `partition`: its window ends there."""
    day = date.fromisoformat(partition)
    if day.weekday() not in slot.weekdays:
        raise ValueError(f"{slot.job} does not run on {partition} ({slot.describe(tz)})")
    return local_tick(day, slot.at, tz)


def previous_tick(slot: Slot, tick: datetime, tz: str) -> datetime:
    """The slot's last tick before `tick`: where the window that ends at `tick` opens."""
    return ticks_around(slot, tick - timedelta(seconds=1), tz)[0]


def due_between(
    slots: Iterable[Slot], start: datetime, end: datetime, tz: str, *, first_partition: str = ""
) -> list[Due]:
    """Every tick of `slots` in (start, end], oldest first (ties by job name).

    Partitions before `first_partition` (the partitions' start date) are left out.
    """
    if start.tzinfo is None or end.tzinfo is None:
        raise ValueError("start and end must be timezone-aware")
    zone = ZoneInfo(tz)
    first_day = start.astimezone(zone).date() - timedelta(days=1)
    last_day = end.astimezone(zone).date() + timedelta(days=1)
    found = []
    for slot in slots:
        day = first_day
        while day <= last_day:
            if day.weekday() in slot.weekdays:
                tick = local_tick(day, slot.at, tz)
                partition = slot.partition(tick, tz)
                if start < tick <= end and partition >= first_partition:
                    found.append(Due(tick, slot.job, partition))
            day += timedelta(days=1)
    return sorted(found)


@dataclass(frozen=True)
class SlotFacts:
    """What the ledger says about one (job, partition)."""

    materialized: bool = False  # every asset of the job has this partition
    in_flight: bool = False  # a run for it is queued, starting or running
    failures: int = 0  # runs for it that ended failed or canceled


@dataclass(frozen=True)
class CatchUpRequest:
    due: Due
    attempt: int  # 1 for the first catch-up run, 2 for its retry, …

    @property
    def run_key(self) -> str:
        """Unique per slot and attempt: a sensor's run keys dedupe forever."""
        return f"catchup:{self.due.job}:{self.due.partition}:{self.attempt}"


@dataclass
class CatchUpPlan:
    requests: list[CatchUpRequest] = field(default_factory=list)
    waiting: list[Due] = field(default_factory=list)  # in flight, or behind an earlier day
    gave_up: list[Due] = field(default_factory=list)  # failed max_attempts times
    not_taken: list[Due] = field(default_factory=list)  # a capture whose moment has passed
    paused: list[Due] = field(default_factory=list)  # its schedule is stopped


def plan_catchup(
    due: Iterable[Due],
    facts: Mapping[tuple[str, str], SlotFacts],
    *,
    sequential: AbstractSet[str] = frozenset(),
    busy: AbstractSet[str] = frozenset(),
    max_attempts: int = 3,
    late_captures: AbstractSet[tuple[str, str]] = frozenset(),
    paused: AbstractSet[tuple[str, str]] = frozenset(),
) -> CatchUpPlan:
    """Which missed slots run now, oldest first.

    A slot is missed when it has no materialisation and no run in flight. Jobs in
    `sequential` (their assets depend on the previous day) get one run at a time: only
    their oldest missed slot, and nothing while any of their runs (`busy`) is in flight.
    A slot that failed `max_attempts` times is given up (the failure was alerted). A
    capture whose moment has passed (`late_captures`: (job, partition)) is never run late:
    it would record today's world under an old day's name; it is reported as not taken.
    Slots in `paused` ((job, partition): their schedule was stopped then, e.g. for a
    holiday) are left alone.
    """
    plan = CatchUpPlan()
    blocked: set[str] = set(busy) & set(sequential)
    for slot in sorted(due):
        fact = facts.get((slot.job, slot.partition), SlotFacts())
        if fact.materialized:
            continue
        if (slot.job, slot.partition) in paused:
            plan.paused.append(slot)
            continue
        if (slot.job, slot.partition) in late_captures and not fact.in_flight:
            plan.not_taken.append(slot)
            continue
        if fact.failures >= max_attempts:
            plan.gave_up.append(slot)
            if slot.job in sequential:
                blocked.add(slot.job)
            continue
        if fact.in_flight or slot.job in blocked:
            plan.waiting.append(slot)
            if slot.job in sequential:
                blocked.add(slot.job)
            continue
        plan.requests.append(CatchUpRequest(slot, attempt=fact.failures + 1))
        if slot.job in sequential:
            blocked.add(slot.job)
    return plan
