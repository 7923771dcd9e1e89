import ast
import subprocess
import sys
from datetime import date, timedelta
from pathlib import Path

import dagster as dg
import pytest

from tests.setup import DEFS as defs
from tests.setup import SETUP

ROOT = Path(__file__).resolve().parent.parent


def asset_specs():
    return list(defs.resolve_all_asset_specs())


def test_definitions_load():
    dg.Definitions.validate_loadable(defs)
    assert asset_specs()


@pytest.mark.parametrize("spec", asset_specs(), ids=lambda s: s.key.to_user_string())
def test_every_asset_is_described_grouped_kinded_and_owned(spec):
    assert spec.description and len(spec.description.split()) > 10, "the docstring is the UI"
    assert spec.group_name and spec.group_name != "default"
    assert spec.kinds
    assert spec.owners


@pytest.mark.parametrize("spec", asset_specs(), ids=lambda s: s.key.to_user_string())
def test_every_asset_says_whether_it_is_a_replay_or_a_capture(spec):
    assert day_kind_problem(spec) is None


def day_kind_problem(spec: dg.AssetSpec) -> str | None:
    """Why an asset does not say (in metadata and in its UI text) which it is, or None."""
    from company_ai.constants import DAY_KIND
    from company_ai.core.timetable import TIMETABLE

    kind = spec.metadata.get(DAY_KIND)
    if kind not in ("replay", "capture"):
        return f"metadata {DAY_KIND} is {kind!r}, not replay or capture"
    if kind not in (spec.description or "").lower():
        return f"the docstring does not say it is a {kind}"
    entry = next(e for e in TIMETABLE if spec.key.to_user_string() in e.assets)
    if entry.capture and entry.assets[0] == spec.key.to_user_string() and kind != "capture":
        return f"{entry.job} is a capture job but its first asset says {kind}"
    return None


def test_the_day_kind_check_catches_an_asset_that_does_not_say():
    quiet = dg.AssetSpec("contact_episodes", description="A table of rows, written nightly.")
    assert "not replay or capture" in day_kind_problem(quiet)
    mute = quiet.replace_attributes(metadata={"company_ai/day_kind": "replay"})
    assert "docstring" in day_kind_problem(mute)


def imported_modules(path: Path) -> list[str]:
    names = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            names.append(node.module or "")
    return names


def test_core_never_imports_dagster():
    offenders = [
        f"{path.name}: {name}"
        for path in (ROOT / "company_ai" / "core").rglob("*.py")
        for name in imported_modules(path)
        if name.split(".")[0] == "dagster"
    ]
    assert offenders == []


def test_the_product_never_imports_the_evals():
    """evals/ (the gate's labelled, adversarial and fair drafts, the rival sets, their
    scores) is for tests and benchmarks: no module of the package imports it."""
    package = ROOT / "company_ai"
    offenders = [
        f"{path.relative_to(package)}: {name}"
        for path in package.rglob("*.py")
        for name in imported_modules(path)
        if name.split(".")[0] == "evals"
    ]
    assert offenders == []


def timetable_problems(d: dg.Definitions) -> list[str]:
    """Duplicate job keys, schedules without their job, jobs without a max runtime."""
    names = [job.name for job in d.jobs or []]
    found = [f"duplicate job {n}" for n in sorted({n for n in names if names.count(n) > 1})]
    found += [
        f"schedule {s.name} targets a missing job {s.job_name}"
        for s in d.schedules or []
        if s.job_name not in names
    ]
    found += [
        f"job {job.name} has no dagster/max_runtime"
        for job in d.jobs or []
        if int(job.tags.get("dagster/max_runtime", 0)) <= 0
    ]
    return found


def test_the_timetable_has_unique_jobs_with_max_runtimes_and_every_schedule_a_job():
    assert timetable_problems(defs) == []
    for schedule in defs.schedules or []:
        defs.resolve_job_def(schedule.job_name)
        assert schedule.default_status == dg.DefaultScheduleStatus.RUNNING


def test_the_timetable_check_catches_each_kind_of_mistake():
    sealed = dg.define_asset_job(
        "j", selection="contact_episodes", tags={"dagster/max_runtime": "60"}
    )
    untimed = dg.define_asset_job("u", selection="contact_episodes")
    orphan = dg.ScheduleDefinition(name="s", cron_schedule="0 1 * * *", job_name="nope")
    broken = dg.Definitions(jobs=[sealed, sealed, untimed], schedules=[orphan])
    assert timetable_problems(broken) == [
        "duplicate job j",
        "schedule s targets a missing job nope",
        "job u has no dagster/max_runtime",
    ]


def test_the_timetable_covers_every_partitioned_asset_once_with_a_freshness_policy():
    from company_ai.constants import OUTREACH
    from company_ai.core.timetable import TIMETABLE, WEEKDAYS

    scheduled = [a for e in TIMETABLE for a in e.assets]
    assert len(scheduled) == len(set(scheduled))
    partitioned = {s.key.to_user_string(): s for s in asset_specs() if s.partitions_def}
    assert sorted(partitioned) == sorted(scheduled)
    assert all(spec.freshness_policy is not None for spec in partitioned.values())
    for entry in TIMETABLE:
        if any(partitioned[a].group_name == OUTREACH for a in entry.assets):
            assert entry.weekdays <= WEEKDAYS, "no outreach at weekends"
            assert all(partitioned[a].partitions_def == SETUP.workdays for a in entry.assets)


def test_a_tick_requests_its_own_day_in_the_configured_timezone():
    from datetime import UTC, datetime

    schedule = defs.resolve_schedule_def("memory_job_schedule")
    assert schedule.execution_timezone == SETUP.tz
    with dg.instance_for_test() as instance:
        context = dg.build_schedule_context(
            instance=instance,
            scheduled_execution_time=datetime(2026, 11, 30, 23, 15, tzinfo=UTC),
            repository_def=defs.get_repository_def(),
        )
        [request] = schedule.evaluate_tick(context).run_requests
    assert request.partition_key == request.run_key == "2026-11-30"


def test_loading_the_code_location_prints_no_warning(tmp_path):
    # As a run worker loads it (Python's default warning filters, not pytest's): Dagster's
    # beta warning about sensor `owners` printed 20 times in a demo.
    load = "import company_ai.definitions as d; d.defs().get_repository_def()"
    env = {"PATH": "/usr/bin:/bin", "COMPANY_AI_DATA_DIR": str(tmp_path), "HOME": str(tmp_path)}
    done = subprocess.run(
        [sys.executable, "-c", load], capture_output=True, text=True, env=env, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert "Warning" not in done.stderr, done.stderr


# The captures that read what the world sends (core/intake.py): each names what it set
# aside in one check of the same name and kind (company_ai/refusals.py).
INTAKES = {
    "crm_contacts",
    "inbox_replies",
    "engagement_signals",
    "research_findings",
    "vault_staging",
    "db_snapshots",
}


def refusal_checks() -> dict[str, dg.AssetCheckSpec]:
    graph = defs.get_repository_def().asset_graph
    return {
        key.name: graph.get_check_spec(key)
        for key in graph.asset_check_keys
        if key.name.endswith("_refused_nothing")
    }


def test_every_capture_that_reads_the_world_says_what_it_set_aside():
    checks = refusal_checks()
    assert set(checks) == {f"{asset}_refused_nothing" for asset in INTAKES}
    for asset in INTAKES:
        spec = checks[f"{asset}_refused_nothing"]
        assert spec.asset_key.to_user_string() == asset
        assert not spec.blocking, "what one item did never stops what depends on the rest"
        assert spec.description and len(spec.description.split()) > 10, "the UI says what and where"


def test_a_replay_of_a_day_before_the_install_is_refused_by_name(tmp_path):
    """Partitions start at the install day: a day before it does not exist, and asking for
    it is refused with the day named, before any step runs or anything is read."""
    from company_ai.resources.stores import StoresResource
    from tests.setup import SETTINGS, named

    brain_facts = named("brain_facts")
    before = (date.fromisoformat(SETTINGS.start_date) - timedelta(days=1)).isoformat()
    with pytest.raises(dg.DagsterUnknownPartitionError, match=f"key `{before}`"):
        dg.materialize(
            [brain_facts],
            partition_key=before,
            resources={"stores": StoresResource(data_dir=str(tmp_path / "data"))},
        )
    assert not (tmp_path / "data").exists(), "nothing was opened or made"


# Replays that send something (a notification) are never retried by step: principle 7.
SENDING_REPLAYS = {"daily_digest", "morning_brief"}


def test_only_replays_that_send_nothing_retry_a_failed_step():
    from company_ai.constants import DAY_KIND
    from company_ai.days import REPLAY_RETRY

    retried, kept = set(), set()
    for assets_def in defs.resolve_asset_graph().assets_defs:
        if not assets_def.is_executable:
            continue
        kinds = {assets_def.specs_by_key[k].metadata.get(DAY_KIND) for k in assets_def.keys}
        names = {k.to_user_string() for k in assets_def.keys}
        policy = assets_def.op.retry_policy
        if kinds == {"replay"} and not names & SENDING_REPLAYS:
            assert policy == REPLAY_RETRY, names
            retried |= names
        else:
            assert policy is None, f"{names} must not retry a step: it captures or sends"
            kept |= names
    assert {"contact_episodes", "brain_facts", "episode_vectors"} <= retried
    assert {"outreach_messages", "daily_digest", "crm_contacts"} <= kept
