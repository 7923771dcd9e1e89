"""The vault night as a user runs it: `dagster asset materialize --select group:vault`, a
whole process each time, on a fresh `DAGSTER_HOME` (see BENCHMARKS.md, issue 15).

    .venv/bin/python benchmarks/bench_vault_job.py --notes 10000
    .venv/bin/python benchmarks/bench_vault_job.py --notes 100000 --prebuilt
    .venv/bin/python benchmarks/bench_vault_job.py --notes 10000 --prebuilt --storage postgres
    .venv/bin/python benchmarks/bench_vault_job.py --keep DIR --reuse   # time DIR's state again

Generates the vault (`bench_vault.write_vault`: public notes with front matter, a
paragraph, tagged observations and typed relations, plus 50 private notes), then runs
the vault job cold, unchanged (`--repeat` times) and after one edit, each as its own
`dagster` process, and prints for each: the run's duration as the instance records it
(start to end, what the UI shows), the whole process's wall time, its peak memory (max
RSS) and what the assets report (staged, distilled, embedded, pages/s).

`--prebuilt` replaces the cold run: the staging, pages and index are built once
in-process by the same core functions the assets call, except that the vectors come from
a stand-in embedder under the offline model's name (a cold embedding of 100,000 pages
takes about half an hour here); the unchanged and one-edit runs are then real `dagster`
runs over that state, and the edited page is embedded by the real model.

`--storage postgres` keeps Dagster's run and event storage in a local PostgreSQL (Debian's
server, started as the tests start it but with fsync and synchronous commits on), as
`deploy/dagster.yaml` does in production; the default is the SQLite storage a fresh
`DAGSTER_HOME` gets. Prints figures; asserts no speed.
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

SHOWN = {
    "vault_staging": ("staged", "unchanged", "deleted"),
    "recall_pages": ("distilled", "notes_read", "entities_written", "removed"),
    "recall_index": ("rewritten", "removed", "embedded", "pages_per_s"),
}


def materialize(env: dict, day: str) -> tuple[float, float]:
    """Run the vault group as one `dagster` process: (wall seconds, peak RSS in MiB)."""
    command = [
        str(Path(sys.executable).parent / "dagster"), "asset", "materialize",
        "-m", "company_ai.definitions", "--select", "group:vault", "--partition", day,
    ]  # fmt: skip
    started = time.perf_counter()
    process = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    assert process.stdout is not None
    output = process.stdout.read()
    _, status, usage = os.wait4(process.pid, 0)
    took = time.perf_counter() - started
    if status != 0:
        sys.stdout.write(output.decode(errors="replace")[-4000:])
        raise SystemExit(f"dagster exited with status {status}")
    return took, usage.ru_maxrss / 1024


def last_run() -> tuple[float, dict]:
    """The last run's start-to-end seconds and each asset's reported figures."""
    import dagster as dg

    with dg.DagsterInstance.get() as instance:  # the one DAGSTER_HOME names
        [record] = instance.get_run_records(limit=1)
        run = record.dagster_run
        assert run.status == dg.DagsterRunStatus.SUCCESS, run.status
        figures = {}
        for event in instance.all_logs(
            run.run_id, of_type=dg.DagsterEventType.ASSET_MATERIALIZATION
        ):
            mat = event.asset_materialization
            meta = {k: v.value for k, v in mat.metadata.items()}
            name = mat.asset_key.to_user_string()
            figures[name] = {k: meta.get(k) for k in SHOWN.get(name, ())}
        return record.end_time - record.start_time, figures


def postgres_storage(dagster_yaml: Path):
    """A durable local PostgreSQL as the instance's run, event and schedule storage."""
    sys.path.insert(0, str(Path(__file__).parent.parent))
    from tests.pg_server import PgServer, find_bindir

    bindir = find_bindir()
    if bindir is None:
        raise SystemExit("no PostgreSQL server binaries: run scripts/test-deps as root")
    # A folder of its own: as root the server runs as `nobody`, who cannot enter ours.
    root = Path(tempfile.mkdtemp(prefix="bench-postgres-"))
    server = PgServer(bindir, root).start(durable=True)
    url = server.create_database("dagster").replace("postgresql://", "postgresql+psycopg2://")
    dagster_yaml.write_text(
        f"telemetry: {{enabled: false}}\nstorage:\n  postgres:\n    postgres_url: {url}\n"
    )
    print(f"Dagster storage: PostgreSQL {bindir.parent.name} at {root} (fsync on)")
    return server


def prebuild(vault: Path, data: Path, day: str) -> None:
    """The cold state built in-process; vectors from a stand-in under MiniLM's name."""
    import numpy as np

    from company_ai.core.embedding import MINILM_DIM, MINILM_NAME, normalise
    from company_ai.core.recall import index_entities
    from company_ai.core.store import Stores
    from company_ai.core.vault import distill_staging, offline_page, stage_vault, staging_dir

    class StandIn:
        name, dim = MINILM_NAME, MINILM_DIM

        def embed(self, texts):
            rng = np.random.default_rng(len(texts))
            return normalise(rng.standard_normal((len(texts), MINILM_DIM)).astype(np.float32))

    started = time.perf_counter()
    stage_vault(vault, staging_dir(data), private_folders=("private", "journal"), day=day)
    with Stores(data).connect("recall") as conn:
        distill_staging(
            conn, str(staging_dir(data)), day=day, source="model:offline",
            distill=lambda title, path, text: offline_page(path, text),
        )  # fmt: skip
        index_entities(conn, StandIn())
    print(f"prebuilt staging, pages and index in-process: {time.perf_counter() - started:.0f} s")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--notes", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=3, help="unchanged runs")
    parser.add_argument("--prebuilt", action="store_true", help="build the cold state in-process")
    parser.add_argument("--keep", type=Path, help="work in this folder and keep it")
    parser.add_argument("--storage", choices=("sqlite", "postgres"), default="sqlite")
    parser.add_argument("--reuse", action="store_true", help="with --keep: reuse its state")
    args = parser.parse_args()

    from bench_vault import write_vault

    from company_ai.core.times import utc_now
    from company_ai.core.timetable import TIMETABLE, current_partitions

    root = Path(args.keep or tempfile.mkdtemp(prefix="bench-vault-job-"))
    vault, data, home = root / "vault", root / "data", root / "dagster_home"
    reuse = args.reuse and (data / "recall.db").is_file()
    for folder in (home,) if reuse else (vault, data, home):
        shutil.rmtree(folder, ignore_errors=True)
    home.mkdir(parents=True)
    (home / "dagster.yaml").write_text("telemetry: {enabled: false}\n")
    server = None
    if args.storage == "postgres":
        server = postgres_storage(home / "dagster.yaml")
    started = time.perf_counter()
    if reuse:
        print(f"reusing the vault and data dir under {root} (a fresh DAGSTER_HOME)")
    else:
        write_vault(vault, args.notes)
        print(f"{args.notes:,} public notes + 50 private written in "
              f"{time.perf_counter() - started:.0f} s")  # fmt: skip
    slot = next(e.slot for e in TIMETABLE if e.job == "vault_job")
    day = current_partitions(slot, utc_now(), "UTC")[0]
    env = os.environ | {
        "DAGSTER_HOME": str(home),
        "COMPANY_AI_DATA_DIR": str(data),
        "COMPANY_AI_VAULT_DIR": str(vault),
        "COMPANY_AI_START_DATE": "2026-01-01",
        "COMPANY_AI_TIMEZONE": "UTC",
    }
    os.environ["DAGSTER_HOME"] = str(home)
    print(
        f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}"
    )
    print(f"load average before: {os.getloadavg()[0]:.2f}; partition {day}\n")

    def night(label: str) -> None:
        wall, rss = materialize(env, day)
        took, figures = last_run()
        print(f"{label:<12} run {took:7.2f} s   process {wall:7.2f} s   peak {rss:6.0f} MiB")
        for name, shown in figures.items():
            print(f"    {name:<14} {shown}")

    if reuse:
        night("first run")  # a fresh run history; the state is the last run's
    elif args.prebuilt:
        prebuild(vault, data, day)
    else:
        night("cold")
    for _ in range(args.repeat):
        night("unchanged")
    edited = next(vault.glob("people/*.md"))
    edited.write_text(edited.read_text().replace("waiting on", "still waiting on"))
    night("one edit")
    night("unchanged")
    print(f"\nload average after: {os.getloadavg()[0]:.2f}")
    if server:
        server.stop()
        shutil.rmtree(server.root, ignore_errors=True)
    if not args.keep:
        shutil.rmtree(root)


if __name__ == "__main__":
    main()
