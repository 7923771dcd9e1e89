import os
import subprocess
import sys


def test_the_demo_runs_every_job_through_dagster_and_keeps_the_history(tmp_path):
    root = tmp_path / "demo"
    env = os.environ | {"PYTHONPATH": os.getcwd()}
    args = [
        sys.executable,
        "-m",
        "company_ai.cli",
        "demo",
        "--dir",
        str(root),
        "--contacts",
        "150",
        "--days",
        "2",
    ]
    done = subprocess.run(args, capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "loading: 150/150 contacts" in done.stderr
    from company_ai.definitions import defs

    # Every daily job for each of the 2 days, and the monthly restore drill once.
    runs = 2 * (len(defs.jobs) - 1) + 1
    assert done.stdout.count(" SUCCESS ") == runs
    assert f"Runs recorded in DAGSTER_HOME: {runs}" in done.stdout
    assert "company_ai digest" in done.stdout and "the scheduler is dark" in done.stdout
    assert done.stderr.count("passed the fabrication gate") == 2
    assert "Vault: 21 notes staged" in done.stdout and "21 recall pages" in done.stdout
    assert (
        "$ company-ai recall 'Who should I talk to about the Signalcrest renewal?'" in done.stdout
    )
    assert "1. " in done.stdout and ", as of 2026-" in done.stdout and "Around " in done.stdout

    import dagster as dg

    instance = dg.DagsterInstance.from_config(str(root / "dagster_home"))
    done_partitions = instance.get_materialized_partitions(dg.AssetKey("contact_episodes"))
    assert len(done_partitions) == 2

    # Re-running starts fresh rather than piling onto the old history.
    again = subprocess.run(args, capture_output=True, text=True, env=env)
    assert again.returncode == 0, again.stderr[-3000:]
    assert f"Runs recorded in DAGSTER_HOME: {runs}" in again.stdout


def test_the_demo_never_deletes_a_folder_it_did_not_make(tmp_path):
    precious = tmp_path / "precious"
    precious.mkdir()
    (precious / "notes.md").write_text("keep me")
    done = subprocess.run(
        [sys.executable, "-m", "company_ai.cli", "demo", "--dir", str(precious)],
        capture_output=True,
        text=True,
        env=os.environ | {"PYTHONPATH": os.getcwd()},
    )
    assert done.returncode != 0
    assert "was not made by the demo" in done.stderr
    assert (precious / "notes.md").read_text() == "keep me"
