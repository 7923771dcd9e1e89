"""Runs launched as the scheduler launches them: through the code location and the
instance's run launcher, so they carry their origin (job pages, the overview timeline and
"Re-execute" in the UI all work) and run in their own process.

Used by the demo and the benchmarks; the daemon does the same for schedules and sensors.
The location is the one `workspace.yaml` names (`company_ai.definitions`, location
`company_ai`), so the UI opened on the same DAGSTER_HOME finds these runs' code.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import dagster as dg
from dagster._core.definitions.selector import JobSubsetSelector
from dagster._core.workspace.context import WorkspaceProcessContext, WorkspaceRequestContext
from dagster._core.workspace.load_target import ModuleTarget

LOCATION = "company_ai"
TERMINATE_GRACE_S = 10.0
SESSION_TAG = "company_ai/launch_session"  # every run one launcher made, to stop them all
# Run workers print their events to the console of whoever launched them; the event log
# keeps every event whatever this level says.
QUIET = {"loggers": {"console": {"config": {"log_level": "WARNING"}}}}


@dataclass
class Launcher:
    instance: dg.DagsterInstance
    workspace: WorkspaceRequestContext
    session: str

    def launch(
        self,
        job_name: str,
        partition: str | None = None,
        tags: dict | None = None,
        run_config: dict | None = None,
        *,
        queue: bool = False,
    ) -> str:
        """Create a run of `job_name` (for `partition`) and hand it to the run launcher, or
        with `queue`, to the run queue for the daemon to launch (as a schedule's run goes)."""
        run_config = QUIET if run_config is None else run_config
        location = self.workspace.get_code_location(LOCATION)
        repo = next(iter(location.get_repositories().values()))
        job = location.get_job(
            JobSubsetSelector(
                location_name=LOCATION,
                repository_name=repo.name,
                job_name=job_name,
                op_selection=None,
            )
        )
        plan = location.get_execution_plan(
            job, run_config, step_keys_to_execute=None, known_state=None, instance=self.instance
        ).execution_plan_snapshot
        run_tags = {**job.tags, **(tags or {}), SESSION_TAG: self.session}
        if partition is not None:
            run_tags["dagster/partition"] = partition
        run = self.instance.create_run(
            job_name=job_name,
            run_id=None,
            run_config=run_config,
            resolved_op_selection=None,
            step_keys_to_execute=plan.step_keys_to_execute,
            op_selection=None,
            status=None,
            root_run_id=None,
            parent_run_id=None,
            tags=run_tags,
            job_snapshot=job.job_snapshot,
            execution_plan_snapshot=plan,
            parent_job_snapshot=job.parent_job_snapshot,
            remote_job_origin=job.get_remote_origin(),
            job_code_origin=job.get_python_origin(),
            asset_selection=None,
            asset_check_selection=None,
            asset_graph=repo.asset_graph,
        )
        if queue:
            self.instance.submit_run(run.run_id, self.workspace)
        else:
            self.instance.launch_run(run.run_id, self.workspace)
        return run.run_id

    def wait(
        self, run_ids: list[str], check=lambda: None, poll_s: float = 0.1
    ) -> list[dg.DagsterRun]:
        """Block until every run has finished; returns them in the order given. `check()`
        is called between polls (it may raise to stop waiting)."""
        pending = set(run_ids)
        while pending:
            check()
            for run_id in list(pending):
                if self._run(run_id).is_finished:
                    pending.discard(run_id)
            if pending:
                time.sleep(poll_s)
        return [self._run(run_id) for run_id in run_ids]

    def _run(self, run_id: str) -> dg.DagsterRun:
        """A run this launcher made (it is in the instance from the moment it is made)."""
        run = self.instance.get_run_by_id(run_id)
        if run is None:
            raise LookupError(f"run {run_id} is not in this Dagster instance")
        return run

    def stop(self, reason: str) -> list[str]:
        """Terminate every run this launcher made that has not finished (found by its tag,
        so a run caught between being made and being launched is found too) and make sure
        each ends FAILURE, never left STARTED; returns their ids."""
        mine = self.instance.get_runs(dg.RunsFilter(tags={SESSION_TAG: self.session}))
        stopped = sorted(r.run_id for r in mine if not r.is_finished)
        for run_id in stopped:
            self.instance.run_launcher.terminate(run_id)
        deadline = time.monotonic() + TERMINATE_GRACE_S
        while time.monotonic() < deadline and not all(self._run(r).is_finished for r in stopped):
            time.sleep(0.1)
        for run_id in stopped:
            run = self._run(run_id)
            if not run.is_finished:
                self.instance.report_run_failed(run, message=reason)
        return stopped


@contextmanager
def launcher(instance: dg.DagsterInstance) -> Iterator[Launcher]:
    """A code server for `company_ai.definitions` (as workspace.yaml names it), for the
    duration of the block."""
    target = ModuleTarget("company_ai.definitions", None, None, LOCATION)
    with WorkspaceProcessContext(
        instance, target, code_server_log_level="WARNING"
    ) as process_context:
        workspace = process_context.create_request_context()
        errors = workspace.code_location_errors()
        if errors:
            raise RuntimeError(f"the code location does not load: {errors[0].message}")
        yield Launcher(instance, workspace, uuid.uuid4().hex)
