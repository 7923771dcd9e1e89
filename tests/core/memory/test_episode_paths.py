"""The two ways an episode is checked agree, and a large batch is stored as a small one is.

`episode_rows` checks plain dicts in plain Python and leaves everything else to pydantic
(`models.Episode`). The plain path may only accept what pydantic accepts and must store
exactly what pydantic would; a refusal is always pydantic's. A batch larger than two
chunks is checked one chunk ahead in a worker thread while the previous chunk is stored.
"""

import math
import random
import sqlite3
import threading
from datetime import UTC, datetime
from types import MappingProxyType

import pytest

from company_ai.core.memory import Episode, EpisodeError, append_episodes, episode_rows, validate
from company_ai.core.memory.episodes import CHUNK_ROWS, _model_row, _plain_row
from company_ai.core.store import EPISODE_TYPES
from company_ai.core.store.db import dialect
from company_ai.sample_world.crm import iter_sample
from tests.conftest import AS_OF, episode
from tests.core.memory.test_episodes import BAD_EPISODES, DROP, bad_episode

LARGE = 2 * CHUNK_ROWS + 50  # three chunks: the worker thread checks two of them
NOW = "2026-11-30T00:00:00Z"  # the writers' clock: every episode here is recorded then


class Text(str):
    """A str subclass: not a plain built-in, so the plain path must leave it to pydantic."""


def by_pydantic(item, tz="UTC"):
    """The row pydantic's verdict gives, or None when pydantic refuses the episode."""
    try:
        return _model_row(validate([item])[0], tz, NOW)
    except EpisodeError:
        return None


def exact(row):
    # repr tells 1 from 1.0 from True and -0.0 from 0.0, which == does not.
    return None if row is None else [(type(v), repr(v)) for v in row]


@pytest.fixture
def memory(stores):
    with stores.connect("memory") as conn:
        yield conn


def stored(conn):
    return [tuple(r) for r in conn.execute("SELECT * FROM contact_episodes ORDER BY id")]


def checker_threads():
    return [t for t in threading.enumerate() if t.name.startswith("episode-check")]


@pytest.mark.parametrize(("override", "complaint"), BAD_EPISODES)
def test_the_plain_path_accepts_no_bad_episode_and_the_refusal_is_pydantics(override, complaint):
    bad = bad_episode(override)
    assert _plain_row(bad, "UTC", NOW) is None
    batch = [episode(content="first"), bad]
    with pytest.raises(EpisodeError) as by_model:
        validate(batch)
    with pytest.raises(EpisodeError) as by_rows:
        episode_rows(batch, now=NOW)
    assert str(by_rows.value) == str(by_model.value)
    assert str(by_rows.value).startswith("episode #1 is invalid")
    assert complaint in str(by_rows.value)


GOOD = [
    {},
    *({"episode_type": t} for t in EPISODE_TYPES),
    {"source": DROP},
    {"source": None},
    {"confidence": DROP},
    {"confidence": 0.0},
    {"confidence": -0.0},
    {"confidence": 1},  # pydantic makes these floats
    {"confidence": True},
    {"confidence": "0.5"},
    {"source": "model:qwen3:8b", "confidence": 0.99},
    {"source": "Model:x", "confidence": 1.0},  # not the model prefix
    {"source": "s" * 200},
    {"content": " padded "},
    {"content": "é" * 50_000},
    {"content": b"bytes"},
    {"contact_id": 2**62},
    {"natural_key": "k" * 300},
    {"natural_key": "outreach:message:7"},
    {"day": "2026-12-01"},
    {"created_at": "2026-07-01T23:30:00Z"},  # the next day in London
    {"created_at": "2026-11-29T10:00:00+00:00"},
    {"created_at": "2026-11-29T10:00:00.900Z"},
    {"created_at": "2026-11-29 10:00:00Z"},
    {"created_at": datetime(2026, 11, 29, 10, tzinfo=UTC)},
    {"episode_type": Text("note")},
    {"content": Text("a str subclass")},
]


@pytest.mark.parametrize("tz", ["UTC", "Europe/London"])
@pytest.mark.parametrize("override", GOOD)
def test_an_accepted_episode_is_stored_as_pydantic_would_store_it(override, tz):
    good = bad_episode(override)  # (drops the DROP fields; nothing here is bad)
    expected = exact(by_pydantic(good, tz))
    assert expected is not None
    assert exact(episode_rows([good], tz, now=NOW)[0]) == expected
    assert exact(episode_rows([MappingProxyType(good)], tz, now=NOW)[0]) == expected
    assert exact(episode_rows([Episode(**good)], tz, now=NOW)[0]) == expected


class Hiding(dict):
    """A dict whose `keys()` hide a field its items hold (pydantic reads the items)."""

    def keys(self):
        return super().keys() - {"warmth"}


def test_only_an_exact_dict_takes_the_plain_path():
    hiding = Hiding(bad_episode({"warmth": 3}))
    assert _plain_row(hiding, "UTC", NOW) is None
    with pytest.raises(EpisodeError, match="warmth: Extra inputs are not permitted"):
        episode_rows([hiding], now=NOW)


def test_the_writers_episodes_take_the_plain_path():
    history = [e for _, h, _ in iter_sample(contacts=60, as_of=AS_OF) for e in h]
    assert len(history) > 100
    assert all(_plain_row(e, "UTC", NOW) is not None for e in history)
    assert _plain_row(episode(), "UTC", NOW) is not None


VALUES = [
    DROP,
    None,
    "",
    " \n",
    0,
    -1,
    1,
    True,
    0.0,
    -0.0,
    0.5,
    1.0,
    1.0000001,
    math.nan,
    math.inf,
    "0.5",
    b"note",
    Text("note"),
    ["a list"],
    10**30,
    *EPISODE_TYPES[:3],
    "gossip",
    "model:x",
    "x" * 200,
    "x" * 201,
    "x" * 300,
    "x" * 301,
    "x" * 50_000,
    "x" * 50_001,
    "2026-11-29T10:00:00Z",
    "2026-11-29T10:00:00+00:00",
    "2026-11-29T10:00:00+01:00",
    "2026-11-29T10:00:00",
    "2026-02-30T10:00:00Z",
    "2026-11-29",
    "2026-11-29\n",
    "٢٠٢٦-١١-٢٩",
    datetime(2026, 11, 29, 10, tzinfo=UTC),
    datetime(2026, 11, 29, 10),
]


def test_random_episodes_get_the_same_verdict_and_row_on_both_paths():
    rng = random.Random(12)
    fields = [*Episode.model_fields, "warmth"]
    accepted = refused = 0
    for _ in range(4000):
        item = episode(source=rng.choice(["manual", "model:x", None]), confidence=0.5)
        for field in rng.sample(fields, rng.randint(1, 2)):
            item[field] = rng.choice(VALUES)
        item = {k: v for k, v in item.items() if v is not DROP}
        tz = rng.choice(["UTC", "Europe/London"])
        expected = by_pydantic(item, tz)
        plain = _plain_row(item, tz, NOW)
        if plain is not None:
            assert exact(plain) == exact(expected), item
        if expected is None:
            with pytest.raises(EpisodeError):
                episode_rows([item], tz, now=NOW)
        else:
            assert exact(episode_rows([item], tz, now=NOW)[0]) == exact(expected)
        accepted, refused = accepted + (plain is not None), refused + (expected is None)
    assert accepted > 300 and refused > 1000  # both outcomes are well exercised


def many(n):
    return [
        episode(
            contact_id=1 + i % 40, content=f"event {i}", created_at=f"2026-11-29T10:{i % 60:02}:00Z"
        )
        for i in range(n)
    ]


def test_a_large_batch_is_stored_exactly_as_small_batches_store_it(stores, tmp_path):
    batch = many(LARGE)
    batch[5] = Episode(**batch[5])
    middle = CHUNK_ROWS // 2
    batch[middle] = batch[middle] | {"confidence": 1}  # pydantic's path, mid-batch
    batch[7] = batch[3] | {"content": "again"} | {"natural_key": "same-event"}
    batch[CHUNK_ROWS + 30] = batch[7] | {"content": "late copy"}  # same key in another chunk
    batch[8] = batch[7] | {"content": "near copy"}  # and in the same chunk
    with stores.connect("memory") as whole:
        result = append_episodes(whole, batch, now=NOW)
        assert (result.inserted, result.duplicates) == (LARGE - 2, 2)
        in_one_call = stored(whole)
    with type(stores)(tmp_path / "small").connect("memory") as small:
        for i in range(0, LARGE, 7):
            append_episodes(small, batch[i : i + 7], now=NOW)
        assert stored(small) == in_one_call
    assert in_one_call[7][3] == "again"
    assert checker_threads() == []


@pytest.mark.parametrize(
    ("size", "bad_at"),
    [
        (LARGE, 0),
        (LARGE, CHUNK_ROWS + 3),
        (LARGE, LARGE - 2),
        (CHUNK_ROWS + 50, CHUNK_ROWS + 3),  # two chunks: checked before storing, no worker
    ],
)
def test_a_bad_episode_anywhere_in_a_large_batch_refuses_all_of_it(memory, size, bad_at):
    batch = many(size)
    batch[bad_at] = batch[bad_at] | {"confidence": 1.5}
    batch[-1] = batch[-1] | {"episode_type": "gossip"}  # a later bad one is not the one named
    with pytest.raises(EpisodeError, match=f"episode #{bad_at} is invalid: confidence"):
        append_episodes(memory, batch, now=NOW)
    assert stored(memory) == []
    assert checker_threads() == []
    assert append_episodes(memory, many(3), now=NOW).inserted == 3  # the store is not left locked


def test_a_failure_while_storing_a_large_batch_rolls_it_all_back(memory):
    if dialect(memory) == "postgres":
        memory.execute(
            "CREATE FUNCTION poison() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN"
            " IF NEW.content = 'poison' THEN RAISE EXCEPTION 'poisoned row'; END IF;"
            " RETURN NEW; END $$"
        )
        memory.execute(
            "CREATE TRIGGER poison BEFORE INSERT ON contact_episodes"
            " FOR EACH ROW EXECUTE FUNCTION poison()"
        )
    else:
        memory.execute(
            "CREATE TEMP TRIGGER poison BEFORE INSERT ON contact_episodes"
            " WHEN NEW.content = 'poison' BEGIN SELECT RAISE(ABORT, 'poisoned row'); END"
        )
    batch = many(LARGE)
    batch[LARGE - 300] = batch[LARGE - 300] | {"content": "poison"}
    with pytest.raises(memory.DatabaseError, match="poisoned row"):
        append_episodes(memory, batch, now=NOW)
    assert stored(memory) == []
    assert checker_threads() == []


@pytest.mark.sqlite_only("sets SQLite's own limit on parameters")
@pytest.mark.parametrize("variables", [90, 9])
def test_chunks_fit_sqlites_limit_on_parameters(memory, variables):
    memory.setlimit(sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER, variables)
    batch = many(35)  # 90 parameters: chunks of 10 rows, with a worker; 9: one row each
    assert append_episodes(memory, batch, now=NOW).inserted == 35
    assert [r[3] for r in stored(memory)] == [e["content"] for e in batch]
