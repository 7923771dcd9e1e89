"""The timetable's arithmetic: which scheduled slots fall due between two instants.

A slot is a job at a local wall-clock time on a set of weekdays, in one IANA timezone.
Each tick processes the last complete local day (the tick's local date minus one), the
partition Dagster's daily partitions call "last". DST follows Dagster's scheduler: a time
that does not exist (spring forward) fires at the first valid minute after the gap, and a
time that exists twice (fall back) fires once, at its second occurrence.

`plan_catchup` decides, from facts read off the ledger (Dagster's run history), which
missed slots get a run now. It is plain logic: the sensor reads, this decides.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time, timedelta
from zoneinfo import ZoneInfo

EVERY_DAY = frozenset(range(7))  # Monday = 0, as in `date.weekday()`
WEEKDAYS = frozenset(range(5))
WEEKEND = frozenset({5, 6})


@dataclass(frozen=True)
class Slot:
    """`job` runs at local time `at` on `weekdays` (0 = Monday)."""

    job: str
    at: time
    weekdays: frozenset[int] = EVERY_DAY

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


def partition_for(tick: datetime, tz: str) -> str:
    """The daily partition a tick processes: the last complete local day."""
    return (tick.astimezone(ZoneInfo(tz)).date() - timedelta(days=1)).isoformat()


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
                partition = partition_for(tick, tz)
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


def plan_catchup(
    due: Iterable[Due],
    facts: Mapping[tuple[str, str], SlotFacts],
    *,
    sequential: set[str] = frozenset(),
    busy: set[str] = frozenset(),
    max_attempts: int = 3,
) -> CatchUpPlan:
    """Which missed slots run now, oldest first.

    A slot is missed when it has no materialisation and no run in flight. Jobs in
    `sequential` (their assets depend on the previous day) get one run at a time: only
    their oldest missed slot, and nothing while any of their runs (`busy`) is in flight.
    A slot that failed `max_attempts` times is given up (the failure was alerted).
    """
    plan = CatchUpPlan()
    blocked: set[str] = set(busy) & set(sequential)
    for slot in sorted(due):
        fact = facts.get((slot.job, slot.partition), SlotFacts())
        if fact.materialized:
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
