"""The concurrency run (benchmarks/concurrency_run.py), short: one Monday night's writers
through `dagster-daemon` on PostgreSQL and `chroma run`, the worker of the run that sends
the held drafts killed with SIGKILL once it has sent one. The week is the script's (it
takes minutes)."""

import os
import shutil
import tempfile
from pathlib import Path
from unittest import mock

from benchmarks import concurrency_run

# The slots whose writes the kill could lose or double, and what reads them that night.
JOBS = {"inbox_job", "crm_job", "outreach_job", "engagement_job", "memory_job", "brain_job"}


def test_a_killed_run_worker_is_retried_once_and_nothing_is_lost_or_doubled():
    # Not under pytest's folder: as root the server runs as `nobody`, who cannot enter it.
    root = Path(tempfile.mkdtemp(prefix="company-ai-concurrency-"))
    root.chmod(0o755)
    # The run sets this process's environment for its code server (the stores' URL among
    # it): put back after, or every later test would reach for a server that has stopped.
    with mock.patch.dict(os.environ):
        try:
            outcome = concurrency_run.run(
                root,
                days=1,
                contacts=60,
                kill_job="held_sends_job",
                kill_night=0,
                kill_step="send_held_drafts",
                kill_at="first-mail",
                jobs=JOBS,
            )
        finally:
            shutil.rmtree(root, ignore_errors=True)
    assert outcome.problems == []
    assert outcome.killed is not None and outcome.retries == 1
    assert outcome.mailed_before_kill, "the kill came before any mail was sent"
    assert outcome.counts["messages"] > len(outcome.mailed_before_kill), outcome.counts
    assert outcome.counts["seals"] == 1, outcome.counts
