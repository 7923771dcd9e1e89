"""The vector memory's assets through Dagster: a day's vectors, a model refused and rebuilt,
and aging as a capture."""

from datetime import UTC, datetime

import dagster as dg
import pytest

from company_ai import days
from company_ai.core.brain import BrainDay, Fact, write_day
from company_ai.core.store import Stores
from company_ai.core.vectors import EPISODES, open_existing, open_store, vectors_dir
from company_ai.resources.embedder import Embedder
from company_ai.resources.stores import StoresResource
from company_ai.sample_world.crm import load_sample
from tests.conftest import AS_OF
from tests.fakes import WordEmbedder
from tests.not_taken import declined
from tests.setup import SETUP, named

episode_vectors, knowledge_vectors, memory_aging = named(
    "episode_vectors", "knowledge_vectors", "memory_aging"
)


@pytest.fixture
def small(tmp_path):
    data = tmp_path / "data"
    load_sample(Stores(data), contacts=40, as_of=AS_OF)
    return data


def run(assets, data, day, instance, config=None):
    return dg.materialize(
        assets,
        partition_key=day,
        instance=instance,
        resources={"stores": StoresResource(data_dir=str(data)), "embedder": Embedder()},
        run_config=config,
        raise_on_error=False,
    )


def meta(result, asset):
    [event] = [
        e for e in result.get_asset_materialization_events() if e.asset_key.path[-1] == asset
    ]
    return {k: v.value for k, v in event.materialization.metadata.items()}


def day_count(data, day):
    """The episodes recorded in the day's window: what its vectors are made from."""
    window = days.window(SETUP, "episode_vectors", day)
    with Stores(data).connect("memory", readonly=True) as conn:
        sql = "SELECT count(*) FROM contact_episodes WHERE recorded_at >= $1 AND recorded_at < $2"
        return conn.execute(sql, (window.start, window.end)).fetchone()[0]


def test_a_day_of_vectors_then_a_replay_that_embeds_nothing(small):
    with Stores(small).connect("brain") as conn:
        facts = [Fact("sent:1", "sent", "Sent the pricing note to Ada", 4, ("x",), "contact:3")]
        write_day(conn, "2026-11-29", BrainDay("2026-11-29", facts=facts))
    with dg.instance_for_test() as instance:
        first = run([episode_vectors, knowledge_vectors], small, "2026-11-28", instance)
        assert first.success
        built = meta(first, "episode_vectors")
        assert built["full_build"] is True and built["model"].startswith("multilingual-e5-small")
        assert built["embedded"] == built["dagster/row_count"] > 0
        assert "did not exist" in built["notes"]
        day = run([episode_vectors, knowledge_vectors], small, "2026-11-29", instance)
        upserted = meta(day, "episode_vectors")
        assert upserted["full_build"] is False
        assert upserted["embedded"] == day_count(small, "2026-11-29") > 0
        assert upserted["dagster/row_count"] == built["dagster/row_count"] + upserted["embedded"]
        assert meta(day, "knowledge_vectors")["embedded"] == 1
        again = meta(run([episode_vectors], small, "2026-11-29", instance), "episode_vectors")
        assert again["embedded"] == 0 and again["unchanged"] == upserted["embedded"]


def test_another_models_store_is_rebuilt_by_the_next_run_and_says_so(small):
    words = WordEmbedder()
    with open_store(vectors_dir(small), words.name, words.dim):
        pass
    with dg.instance_for_test() as instance:
        night = run([episode_vectors], small, "2026-11-29", instance)
        assert night.success
        rebuilt = meta(night, "episode_vectors")["rebuilt"]
        assert "held test:words-16 (16-d) vectors, not multilingual-e5-small-q4" in rebuilt
        assert meta(night, "episode_vectors")["full_build"] is True
        config = {"ops": {"episode_vectors": {"config": {"rebuild": True}}}}
        asked = run([episode_vectors], small, "2026-11-29", instance, config)
        assert meta(asked, "episode_vectors")["rebuilt"] == "a rebuild was asked for"
    with open_existing(vectors_dir(small)) as store:
        assert store.model(EPISODES) == ("multilingual-e5-small-q4", 384)


def test_aging_is_a_capture_of_its_own_night(small, clock):
    with dg.instance_for_test() as instance:
        assert run([episode_vectors], small, "2026-11-28", instance).success
        clock(datetime(2026, 11, 30, 2, 0, tzinfo=UTC))  # the 02:00 tick of the 30th's run
        late = run([memory_aging], small, "2026-11-20", instance)
        said = declined(instance, late, "2026-11-20", "memory_aging")
        assert "memory_aging" in said and "launch 2026-11-30" in said
        aged = run([memory_aging], small, "2026-11-30", instance)
        assert aged.success
        figures = meta(aged, "memory_aging")
        assert figures["as_of"] == "2026-11-30"
        assert figures["kept"] + figures["archived"] > 0 and figures["deleted"] == 0
        assert figures["kept_by_collection"][EPISODES] == figures["kept"]


def test_the_assets_write_to_the_chroma_server_the_stores_resource_names(small, tmp_path):
    from tests.chroma_server import ChromaServer
    from tests.pg_server import free_port

    server = ChromaServer(tmp_path / "persist").start()
    try:
        stores = StoresResource(data_dir=str(small), chroma_url=server.url)
        with dg.instance_for_test() as instance:
            done = dg.materialize(
                [episode_vectors], partition_key="2026-11-28", instance=instance,
                resources={"stores": stores, "embedder": Embedder()},
            )  # fmt: skip
        built = meta(done, "episode_vectors")
        assert not (vectors_dir(small) / "chroma.sqlite3").exists(), "nothing local"
        with open_existing(vectors_dir(small), url=server.url) as store:
            assert store.count(EPISODES) == built["dagster/row_count"] > 0
    finally:
        server.stop()
    down = f"http://127.0.0.1:{free_port()}"
    with dg.instance_for_test() as instance:
        failed = dg.materialize(
            [episode_vectors], partition_key="2026-11-28", instance=instance,
            resources={"stores": StoresResource(data_dir=str(small), chroma_url=down),
                       "embedder": Embedder()},
            raise_on_error=False,
        )  # fmt: skip
    assert not failed.success
    [failure] = [e for e in failed.all_events if e.event_type_value == "STEP_FAILURE"]
    assert f"Chroma server at {down}" in failure.step_failure_data.error.message
