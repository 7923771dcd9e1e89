"""Held sends: a draft held for its contact's working hours goes out when they begin.

The morning's `outreach_messages` holds a gated draft whose contact is outside working
hours (core/outreach/send_rules.py: a weekday 09:00-17:00 where they are) and stores when they
begin (`drafts.due_at`). Every 15 minutes this sensor asks the outreach store (one
read-only count) whether a held draft is due; if one is and no held-send run is in
flight, it starts `held_sends_job`, whose one op sends what is due (`core.outreach.
send_due`: the same pre-send checks and send ledger as the morning). A draft goes out
once however many ticks, re-executions or catch-ups see it: its status moves from
`ready` to `sending` to `sent`, a crashed send is looked up at the mailer before any
resend, and the store takes one message per (thread, bump). Stopping the sensor in the
UI stops held sends.
"""

import dagster as dg

from company_ai import days, ledger
from company_ai.core import outreach
from company_ai.core.times import to_iso
from company_ai.resources.mailer import Mailer
from company_ai.resources.stores import StoresResource
from company_ai.setup import Setup

INTERVAL_S = 15 * 60  # a held send leaves at most 15 minutes after its contact's 09:00
# At most the held drafts of a few days (10 drafts a weekday), each one mailer call of a
# few seconds (Gmail: a send, plus a lookup for one resumed after a crash): 30 x 5 s =
# 150 s. 300 s.
MAX_RUNTIME_S = 300
JOB = "held_sends_job"


def build(setup: Setup) -> tuple[dg.JobDefinition, dg.SensorDefinition]:
    """The held-send job and the sensor that starts it, built for `setup`."""

    @dg.op(pool="outreach_db")
    def send_held_drafts(
        context: dg.OpExecutionContext, stores: StoresResource, mailer: Mailer
    ) -> dg.Output[None]:
        """Sends every held outreach draft whose contact's working hours have begun."""
        done = outreach.send_due(
            stores.stores(),
            tz=setup.tz,
            mailer=mailer,
            clock=days.clock(context, setup),
            warn=context.log.warning,
        )
        return dg.Output(
            None,
            metadata={
                "sent": done.sent,
                "resumed_after_crash": done.resumed_after_crash,
                "held_again": len(done.held),
                "skipped": done.skipped,
                "episodes_written": done.episodes_written,
            },
        )

    @dg.job(
        name=JOB,
        executor_def=dg.in_process_executor,
        tags={"dagster/max_runtime": str(MAX_RUNTIME_S)},
        description="Sends the outreach drafts held for their contacts' working hours.",
    )
    def held_sends_job() -> None:
        send_held_drafts()

    @dg.sensor(
        name="held_sends_sensor",
        job=held_sends_job,
        minimum_interval_seconds=INTERVAL_S,
        default_status=dg.DefaultSensorStatus.RUNNING,
        description="Starts held_sends_job when a draft held for working hours is due.",
    )
    def held_sends_sensor(context: dg.SensorEvaluationContext, stores: StoresResource):
        now = setup.now()
        due = outreach.due_drafts(stores.stores(), now)
        if not due:
            return dg.SkipReason("no held draft is due")
        running = context.instance.get_run_records(
            dg.RunsFilter(job_name=JOB, statuses=ledger.IN_FLIGHT), limit=1
        )
        if running:
            return dg.SkipReason(f"{due} held draft(s) due; a held-send run is in flight")
        return dg.RunRequest(run_key=f"held_sends:{to_iso(now)}")

    return held_sends_job, held_sends_sensor
