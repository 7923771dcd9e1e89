import dagster as dg

from company_ai import days
from company_ai.assets.memory import EPISODE_CHECKS
from company_ai.resources.stores import StoresResource
from tests.setup import SETUP, named

contact_episodes = named("contact_episodes")


def materialize(data, day, instance):
    return dg.materialize(
        [contact_episodes],
        partition_key=day,
        instance=instance,
        resources={"stores": StoresResource(data_dir=str(data))},
    )


def checks(result):
    return {c.check_name: c.passed for c in result.get_asset_check_evaluations()}


def test_a_day_is_sealed_with_counts_and_all_checks_pass(data):
    with dg.instance_for_test() as instance:
        result = materialize(data, "2026-11-20", instance)
        assert result.success
        assert checks(result) == dict.fromkeys(EPISODE_CHECKS, True)
        meta = result.get_asset_materialization_events()[0].materialization.metadata
        from company_ai.core.store import Stores

        window = days.window(SETUP, "contact_episodes", "2026-11-20")  # by recorded time
        with Stores(data).connect("memory", readonly=True) as memory:
            expected = memory.execute(
                "SELECT count(*) FROM contact_episodes"
                " WHERE recorded_at >= $1 AND recorded_at < $2",
                (window.start, window.end),
            ).fetchone()[0]
        assert expected > 0
        assert meta["dagster/row_count"].value == expected
        assert sum(meta["by_type"].value.values()) == expected
        assert meta["changed_since_last_seal"].value is False
        again = materialize(data, "2026-11-20", instance)
        meta2 = again.get_asset_materialization_events()[0].materialization.metadata
        assert meta2["digest"].value == meta["digest"].value
        assert meta2["changed_since_last_seal"].value is False


def test_faulty_rows_fail_the_checks_and_name_the_episodes(data):
    from company_ai.core.store import Stores

    with Stores(data).connect("memory") as memory:
        memory.execute(
            "INSERT INTO contact_episodes (contact_id, episode_type, content, source,"
            " confidence, created_at, natural_key, day, recorded_at) VALUES"
            " (1, 'note', 'hand edit', 'manual', 3.0, '2026-11-21T10:00:00Z', 'x1', '2026-11-20',"
            " '2026-11-20T10:00:00Z')"  # says it happened the day after it was recorded
        )
        bad_id = memory.execute("SELECT max(id) FROM contact_episodes").fetchone()[0]
    with dg.instance_for_test() as instance:
        result = materialize(data, "2026-11-20", instance)
        assert result.success, "audit checks warn the owner; they do not stop the run"
        assert checks(result) == {
            "episodes_are_unique": True,
            "confidences_are_in_range": False,
            "episode_times_are_sound": False,
            "every_send_has_its_episode": True,
        }
        failed = [c for c in result.get_asset_check_evaluations() if not c.passed]
        assert all(str(bad_id) in c.metadata["examples"].value for c in failed)


def test_a_send_without_its_episode_fails_the_audit(data):
    from company_ai.core.store import Stores

    with Stores(data).connect("outreach") as outreach:
        outreach.execute(
            "INSERT INTO messages (contact_id, thread_id, subject, body, sent_at)"
            " VALUES (1, 't-x', 'Hello', 'Hi', '2026-11-20T09:00:00Z')"
        )
        lost = outreach.execute("SELECT max(id) FROM messages").fetchone()[0]
    with dg.instance_for_test() as instance:
        result = materialize(data, "2026-11-20", instance)
        assert checks(result)["every_send_has_its_episode"] is False
        [failed] = [c for c in result.get_asset_check_evaluations() if not c.passed]
        assert failed.metadata["examples"].value == str([lost])
        assert checks(materialize(data, "2026-11-19", instance))["every_send_has_its_episode"]


def test_a_memory_without_an_outreach_store_is_still_sealed(tmp_path):
    from company_ai.core.memory import append_episodes
    from company_ai.core.store import Stores
    from tests.conftest import episode

    data = tmp_path / "fresh"
    with Stores(data).connect("memory") as memory:
        append_episodes(memory, [episode()], now="2026-11-29T12:00:00Z")
    with dg.instance_for_test() as instance:
        result = materialize(data, "2026-11-29", instance)
        assert result.success and all(checks(result).values())
