"""Memory aging: the importance rule, tiers, caps, the archive and its TTL, on a clock we set."""

import os
import random
import shutil
import tempfile
from contextlib import contextmanager
from datetime import date, timedelta
from pathlib import Path

import pytest

from company_ai.core.brain import BrainDay, Fact, write_day
from company_ai.core.store import transaction
from company_ai.core.vectors import (
    EPISODES,
    KNOWLEDGE,
    Signals,
    Vector,
    age_store,
    open_store,
    read_signals,
)
from company_ai.core.vectors.aging import (
    ARCHIVE_BELOW,
    HALF_LIFE_DAYS,
    deletion_day,
    episode_base,
    importance,
    value_on,
)
from company_ai.core.vectors.store import ARCHIVE
from tests.fakes import DictVectorStore, WordEmbedder

TTL = 180


@pytest.mark.parametrize(
    ("episode_type", "source", "confidence", "expected"),
    [
        ("response", "gmail", 1.0, 4),
        ("note", "manual", 1.0, 4),  # a person wrote it down
        ("research", "web:example.com", 0.9, 2),
        ("research", "model:qwen3:8b", 0.4, 1),  # a doubtful guess
        ("scoring", "model:qwen3:8b", 0.3, 1),  # never below 1
        ("engagement", "site", None, 2),
    ],
)
def test_an_episodes_base_importance_comes_from_type_source_and_confidence(
    episode_type, source, confidence, expected
):
    assert episode_base(episode_type, source, confidence) == expected


def test_replies_bounces_and_later_citations_move_importance_within_1_to_5():
    sent = {"base": 3, "day": "2026-11-02", "ref": "memory.contact_episodes:5", "message_id": 9}
    assert importance(sent, Signals()) == 3
    assert importance(sent, Signals(replied=frozenset({9}))) == 4
    assert importance(sent, Signals(bounced=frozenset({9}))) == 2
    same_day = Signals(cited={"memory.contact_episodes:5": frozenset({"2026-11-02"})})
    assert importance(sent, same_day) == 3, "the night's own synthesis is not a retrieval"
    later = Signals(cited={"memory.contact_episodes:5": frozenset({"2026-11-02", "2026-11-20"})})
    assert importance(sent, later) == 4
    top = {"base": 5, "day": "2026-11-02", "ref": "r", "message_id": 9}
    assert importance(top, Signals(replied=frozenset({9}))) == 5


def test_value_halves_every_half_life_of_its_tier():
    today = date(2026, 11, 30)
    for level, half_life in HALF_LIFE_DAYS.items():
        born = (today - timedelta(days=half_life)).isoformat()
        assert value_on(level, born, today) == pytest.approx(level / 2)
    assert HALF_LIFE_DAYS[5] > HALF_LIFE_DAYS[4] > HALF_LIFE_DAYS[3] > HALF_LIFE_DAYS[1]
    assert deletion_day("2026-01-01", TTL) == date(2026, 6, 30)


def test_signals_are_read_from_outreach_and_brain(stores):
    with stores.connect("outreach") as conn, transaction(conn):
        for mid, replied, bounce in ((1, "2026-11-03T10:00:00Z", "none"), (2, None, "hard")):
            conn.execute(
                "INSERT INTO messages (id, contact_id, thread_id, subject, body, sent_at,"
                " replied_at, bounce_status) VALUES ($1, 1, 't' || $2, 's', 'b', 'x', $3, $4)",
                (mid, mid, replied, bounce),
            )
    cites = ("memory.contact_episodes:4", "recall.pages:Signalcrest")
    with stores.connect("brain") as conn:
        day = BrainDay("2026-11-05", facts=[Fact("k", "reply", "t", 4, cites)])
        write_day(conn, "2026-11-05", day)
    signals = read_signals(stores)
    assert (signals.replied, signals.bounced) == ({1}, {2})
    assert signals.cited == {ref: {"2026-11-05"} for ref in cites}


def new_memories(rng, day, n, kind):
    out = []
    for i in range(n):
        base = rng.choice([1, 2, 2, 3, 3, 4, 5])
        meta = {"kind": kind, "ref": f"{kind}:{day}:{i}", "day": day, "base": base}
        out.append(Vector(f"{kind}:{day}:{i}", None, meta | {"importance": base}))
    return out


@pytest.fixture
def memory_dir(tmp_path):
    """A folder in RAM where there is one: Chroma syncs every write to disk."""
    shm = Path("/dev/shm")
    if not (shm.is_dir() and os.access(shm, os.W_OK)):
        yield tmp_path
        return
    folder = Path(tempfile.mkdtemp(dir=shm, prefix="aging-test-"))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@contextmanager
def a_store(kind, folder):
    if kind == "dicts":
        yield DictVectorStore()
        return
    words = WordEmbedder(dim=8)
    with open_store(folder / "vectors", words.name, words.dim) as (store, _):
        yield store


# A year of nights with the 180-day TTL over the dict store (a second); the same nights
# over a real Chroma store would take minutes (each write is synced to disk), so Chroma
# runs 40 nights with a 12-day TTL: caps, fading and the TTL to the day, all exercised.
@pytest.mark.parametrize(("kind", "nights", "ttl"), [("dicts", 365, TTL), ("chroma", 40, 12)])
def test_nightly_passes_keep_the_caps_archive_least_valuable_first_and_honour_the_ttl(
    memory_dir, kind, nights, ttl
):
    words = WordEmbedder(dim=8)
    # Episodes: 4 a night under a cap of 100, so the unimportant fade before the cap bites;
    # knowledge: 2 a night under a cap of 12, so the cap decides.
    caps = {EPISODES: 100, KNOWLEDGE: 12}
    rng = random.Random(3)
    start = date(2026, 1, 1)
    archived_on: dict[str, date] = {}
    live: dict[str, dict[str, dict]] = {EPISODES: {}, KNOWLEDGE: {}}
    over_cap = faded = deleted = 0
    with a_store(kind, memory_dir) as store:
        for night in range(nights):
            today = start + timedelta(days=night)
            for name, n in ((EPISODES, 4), (KNOWLEDGE, 2)):
                fresh = new_memories(rng, today.isoformat(), n, name)
                vectors = words.embed([v.id for v in fresh])
                store.upsert(
                    name, [Vector(v.id, e, v.meta) for v, e in zip(fresh, vectors, strict=True)]
                )
                live[name] |= {v.id: v.meta for v in fresh}
            result = age_store(store, Signals(), today=today, caps=caps, ttl_days=ttl)
            for name in (EPISODES, KNOWLEDGE):
                kept = store.metadata(name)
                assert len(kept) <= caps[name]
                values = {i: value_on(m["base"], m["day"], today) for i, m in live[name].items()}
                gone = set(live[name]) - set(kept)
                assert all(values[i] >= ARCHIVE_BELOW for i in kept), "a faded vector stayed"
                pushed = [i for i in gone if values[i] >= ARCHIVE_BELOW]
                if pushed:
                    assert max(values[i] for i in pushed) <= min(values[i] for i in kept)
                over_cap += len(pushed)
                faded += len(gone) - len(pushed)
                assert (result.archived[name], result.kept[name]) == (len(gone), len(kept))
                archived_on |= dict.fromkeys(gone, today)
                live[name] = kept
            in_archive = store.metadata(ARCHIVE)
            for i, day in archived_on.items():
                due = day + timedelta(days=ttl)
                assert (i in in_archive) == (today < due), f"{i} archived {day}, now {today}"
            for i, m in in_archive.items():
                assert m["archived_on"] == archived_on[i].isoformat()
            deleted += result.deleted
    assert over_cap and faded and deleted, "the nights exercised the cap, fading and the TTL"


def test_a_pass_stopped_mid_move_is_repaired_by_the_next(tmp_path):
    words = WordEmbedder(dim=8)
    meta = {"kind": "episode", "ref": "r", "day": "2026-11-29", "base": 4, "importance": 4}
    with open_store(tmp_path / "vectors", words.name, words.dim) as (store, _):
        vector = Vector("episode:1", words.embed(["x"])[0], meta)
        store.upsert(EPISODES, [vector])
        copy = Vector("episode:1", vector.embedding, meta | {"archived_on": "2026-11-30"})
        store.upsert(ARCHIVE, [copy])
        caps = {EPISODES: 5, KNOWLEDGE: 5}
        result = age_store(store, Signals(), today=date(2026, 11, 30), caps=caps, ttl_days=TTL)
        assert result.repaired == 1 and store.count(EPISODES) == 0 and store.count(ARCHIVE) == 1
