"""What a partition means to an asset: which day, and whether it may run now.

Every asset is a replay or a capture (`core/timetable.py`). A capture records the world
at the moment of its own day's run, so `capture_day` declines any other partition: the
run ends green having done nothing, says why in one sentence and records the partition
as not taken. A replay reads a window that
ends at its own day's scheduled time (`scheduled_until`), never at now. An asset that
works one day at a time refuses a single run over a range of partitions clearly
(`one_day`) instead of failing deep inside.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Iterator, Sequence
from datetime import datetime
from typing import Any

import dagster as dg

from company_ai.constants import CAPTURE_META, DAY_KIND, NOT_TAKEN_TAG, OWNER, PLAYED_AT_TAG
from company_ai.core.times import Day, parse_utc, to_iso
from company_ai.core.timetable import (
    TIMETABLE,
    Entry,
    current_partitions,
    previous_tick,
    scheduled_time,
    ticks_around,
)
from company_ai.ledger import IN_FLIGHT
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


# A capture run that did nothing says so on the run (`NOT_TAKEN_TAG`: the runs list shows
# it; the digest reads it), and a capture partition whose moment passed untaken says so on
# the partition: an observation whose metadata `not_taken` is the sentence.
NOT_TAKEN = "not_taken"
PAST_DAY = "launched for a past day"
BUSY = "another run was capturing it"


def capture_day(
    context: dg.AssetExecutionContext, setup: Setup, what: str, asset: str | None = None
) -> str | None:
    """The partition a capture run takes now, or None when it must take nothing.

    A capture records the world at the moment it runs, so a day whose moment has passed
    is declined, never done late: one plain sentence in the run's log, the run tagged
    `NOT_TAKEN_TAG`, a `not_taken` observation on the partition (and on the captures of
    this run that depend on it: Dagster skips their steps), and no materialisation (the
    asset's output is optional), so the run ends green and the partition is not made to
    look filled. A run of the same capture that is older and still in flight does the
    work; this one declines in one sentence too, so nothing is done twice.
    """
    asset = asset or context.asset_key.to_user_string()
    day = one_day(context, asset)
    now = clock(context, setup)()
    if not is_current(setup, asset, day, now):
        now_days = " or ".join(
            dict.fromkeys(current_partitions(entry_of(asset).slot, now, setup.tz))
        )
        sentence = (
            f"Not taken: {asset} records {what} at the moment it runs, and the moment of {day} "
            f"has passed, so nothing was done (a past day is never captured late; the digest "
            f"lists it as not taken): to record the present, launch {now_days}."
        )
        _decline(context, sentence, PAST_DAY, [asset, *_skipped_captures(context, asset)], day)
        return None
    other = _older_run_in_flight(context, asset)
    if other is not None:
        sentence = (
            f"Not run: run {other.run_id[:8]} of {asset} "
            f"({other.tags.get('dagster/partition', '-')}) is capturing it right now and a "
            "capture runs once at a time, so this run did nothing: watch that run, and "
            "launch again once it has ended if it is still needed."
        )
        _decline(context, sentence, BUSY, [], day)
        return None
    return day


# A replay that writes nothing outside the house (brain facts, exports, the growth
# analysis, the day's seal, the vector indexes) reads only what is recorded and writes in
# transactions, so a step that failed on something passing (a store busy past its
# timeout, a lost connection to PostgreSQL or the Chroma server) is run again, twice at
# most, a minute and then two later. Captures, and replays that send (the digest, the
# brief), are never retried by step: a capture's day is claimed once, and an effect in the
# world happens once; run retries (deploy/dagster.yaml) cover a crashed worker. A
# `dg.Failure(allow_retries=False)` (bad data, a refused input) is never retried.
REPLAY_RETRY = dg.RetryPolicy(
    max_retries=2, delay=60, backoff=dg.Backoff.EXPONENTIAL, jitter=dg.Jitter.PLUS_MINUS
)


def capture_asset(
    *,
    partitions_def: dg.PartitionsDefinition,
    group_name: str,
    kinds: set[str],
    deps: Sequence[Any] = (),
    check_specs: Sequence[dg.AssetCheckSpec] = (),
    pool: str | None = None,
) -> Callable[[Callable[..., Iterator[dg.MaterializeResult]]], dg.AssetsDefinition]:
    """A capture asset: one asset whose output (and its checks') is optional, so a step that
    declines its day (`capture_day`) yields nothing and the run still ends green. Built as
    a one-asset `multi_asset` because an `@asset`'s checks are always required outputs.
    The function is a generator; its docstring is the asset's description."""

    def wrap(make: Callable[..., Iterator[dg.MaterializeResult]]) -> dg.AssetsDefinition:
        name = make.__name__
        spec = dg.AssetSpec(
            name, description=inspect.getdoc(make), group_name=group_name, kinds=kinds,
            owners=[OWNER], metadata=CAPTURE_META, deps=deps,
        )  # fmt: skip

        @functools.wraps(make)
        def step(context: dg.AssetExecutionContext, *args: Any, **kwargs: Any):
            if dg.AssetKey(name) not in context.selected_asset_keys:
                # A check alone cannot look at the world: it is evaluated when the capture runs.
                context.log.info(f"{name}'s checks are evaluated when {name} runs; nothing done")
                return
            checks = context.selected_asset_check_keys
            for result in make(context, *args, **kwargs):
                yield dg.MaterializeResult(
                    asset_key=name,
                    metadata=result.metadata,
                    check_results=[
                        c
                        for c in result.check_results or []
                        if dg.AssetCheckKey(dg.AssetKey(name), c.check_name or "") in checks
                    ],
                )

        return dg.multi_asset(
            name=name, specs=[spec], check_specs=list(check_specs),
            partitions_def=partitions_def, can_subset=True, pool=pool,
        )(step)  # fmt: skip

    return wrap


def _decline(
    context: dg.AssetExecutionContext, sentence: str, why: str, assets: list[str], day: str
) -> None:
    context.log.info(sentence)
    context.instance.add_run_tags(context.run.run_id, {NOT_TAKEN_TAG: why})
    for name in assets:
        context.log_event(
            dg.AssetObservation(
                asset_key=name,
                partition=day,
                description=sentence,
                metadata={NOT_TAKEN: sentence, "run": context.run.run_id},
            )
        )


def _skipped_captures(context: dg.AssetExecutionContext, asset: str) -> list[str]:
    """The captures of this run downstream of `asset`: Dagster skips their steps when
    `asset` yields nothing, so their partition is not taken either."""
    layer = context.job_def.asset_layer
    in_run = set(context.run.asset_selection or layer.selected_asset_keys)
    graph, found, todo = layer.asset_graph, set(), [dg.AssetKey(asset)]
    while todo:
        for child in graph.get(todo.pop()).child_keys:
            if child not in found and graph.has(child):
                found.add(child)
                todo.append(child)
    return sorted(
        key.to_user_string()
        for key in found & in_run
        if graph.get(key).metadata.get(DAY_KIND) == CAPTURE_META[DAY_KIND]
    )


def _older_run_in_flight(context: dg.AssetExecutionContext, asset: str) -> dg.DagsterRun | None:
    """Another run of `asset` in flight that was created before this one, if any."""
    key, job = dg.AssetKey(asset), entry_of(asset).job
    me = context.instance.get_run_record_by_id(context.run.run_id)
    mine = (me.create_timestamp.timestamp(), context.run.run_id) if me else None
    for record in context.instance.get_run_records(dg.RunsFilter(statuses=IN_FLIGHT)):
        run = record.dagster_run
        if run.run_id == context.run.run_id:
            continue
        targets = key in run.asset_selection if run.asset_selection else run.job_name == job
        if targets and (mine is None or (record.create_timestamp.timestamp(), run.run_id) < mine):
            return run
    return None


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
    record = context.instance.get_run_record_by_id(context.run.run_id)
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
