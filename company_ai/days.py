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

from company_ai.core.timetable import TIMETABLE, Entry, current_partitions, scheduled_time
from company_ai.setup import Setup


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


def is_current(setup: Setup, asset: str, partition: str) -> bool:
    """Whether `partition` is a capture's own moment now: the one its last tick processed
    or the one its next tick will."""
    return partition in current_partitions(entry_of(asset).slot, setup.now(), setup.tz)


def require_current(
    context: dg.AssetExecutionContext, setup: Setup, what: str, asset: str | None = None
) -> str:
    """The partition of a capture run, or a `Failure` if that day's moment has passed."""
    asset = asset or context.asset_key.to_user_string()
    day = one_day(context, asset)
    if not is_current(setup, asset, day):
        now_day = current_partitions(entry_of(asset).slot, setup.now(), setup.tz)
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
