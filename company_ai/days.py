"""What a partition means to an asset: which day, and whether it may run now.

Every asset is a replay or a capture (`core/timetable.py`). A capture records the world
at the moment of its own day's run, so `require_current` refuses any other partition
with a `dg.Failure` that says why and what to do instead. A replay reads a window that
ends at its own day's scheduled time (`scheduled_until`), never at now. An asset that
works one day at a time refuses a single run over a range of partitions clearly
(`one_day`) instead of failing deep inside.
"""

from __future__ import annotations

from datetime import datetime

import dagster as dg

from company_ai.constants import PLAYED_AT_TAG
from company_ai.core.times import Day, parse_utc, to_iso
from company_ai.core.timetable import (
    TIMETABLE,
    Entry,
    current_partitions,
    previous_tick,
    scheduled_time,
    ticks_around,
)
from company_ai.setup import Clock, Setup


def entry_of(asset: str) -> Entry:
    """The timetable entry that schedules `asset`."""
    return next(e for e in TIMETABLE if asset in e.assets)


def one_day(context: dg.AssetExecutionContext, asset: str | None = None) -> str:
    """The run's one partition key, or a clear refusal of a single run over a range.
    `asset` names the asset in a step of several (a multi-asset)."""
    if context.has_partition_key:
        return context.partition_key
    keys = context.partition_key_range
    raise dg.Failure(
        description=(
            f"{asset or context.asset_key.to_user_string()} works one day per run, and this "
            f"run covers {keys.start}..{keys.end}. Launch a backfill of one run per partition (the "
            "default in the UI's Materialize dialog) instead."
        ),
        allow_retries=False,
    )


def is_current(setup: Setup, asset: str, partition: str, now: datetime) -> bool:
    """Whether `partition` is a capture's own moment at `now`: the one its last tick
    processed or the one its next tick will."""
    return partition in current_partitions(entry_of(asset).slot, now, setup.tz)


def require_current(
    context: dg.AssetExecutionContext, setup: Setup, what: str, asset: str | None = None
) -> str:
    """The partition of a capture run, or a `Failure` if that day's moment has passed."""
    asset = asset or context.asset_key.to_user_string()
    day = one_day(context, asset)
    now = clock(context, setup)()
    if not is_current(setup, asset, day, now):
        now_day = current_partitions(entry_of(asset).slot, now, setup.tz)
        raise dg.Failure(
            description=(
                f"{asset} is a capture: it records {what} at the moment it runs, so it runs "
                f"for its current day only ({' or '.join(dict.fromkeys(now_day))}), not for "
                f"{day}; doing it now would file today's state under an old day's name. A "
                "missed capture is reported in the digest as not taken. To record the "
                "present, materialise the current partition."
            ),
            allow_retries=False,
        )
    return day


def scheduled_until(setup: Setup, asset: str, partition: str) -> datetime:
    """The end of a replay's window: the tick that processes `partition`."""
    return scheduled_time(entry_of(asset).slot, partition, setup.tz)


def clock(context: dg.AssetExecutionContext | dg.OpExecutionContext, setup: Setup) -> Clock:
    """The run's clock: the wall clock, or the moment its `PLAYED_AT_TAG` gives, moving on
    from there at the wall clock's pace."""
    played = context.run.tags.get(PLAYED_AT_TAG)
    if not played:
        return setup.clock
    if not setup.settings.played_clock:
        raise dg.Failure(
            description=(
                f"this run carries the tag {PLAYED_AT_TAG}={played}, and this install does not "
                "take a run's clock from its tags (COMPANY_AI_PLAYED_CLOCK is off): launch it "
                "without the tag."
            ),
            allow_retries=False,
        )
    # From the moment the run was created, so every clock of one run tells the same time.
    record = context.instance.get_run_record_by_id(context.run_id)
    created = record.create_timestamp if record else setup.clock()
    start = parse_utc(played)
    return lambda: (start + (setup.clock() - created)).replace(microsecond=0)


def window(setup: Setup, asset: str, partition: str) -> Day:
    """The window partition `partition` of `asset` covers: from its slot's previous tick to
    the tick on that day (23:30 D−1 to 23:30 D for the 23:30 brain), as stored times."""
    slot = entry_of(asset).slot
    end = scheduled_time(slot, partition, setup.tz)
    start = previous_tick(slot, end, setup.tz)
    return Day(partition, setup.tz, to_iso(start), to_iso(end))


def last_partition_before(setup: Setup, asset: str, moment: datetime) -> str:
    """The partition of `asset` whose tick came last at or before `moment` (the 06:00
    brief of D reads the brain of D−1: the night that ended at 23:30 D−1)."""
    slot = entry_of(asset).slot
    return slot.partition(ticks_around(slot, moment, setup.tz)[0], setup.tz)
