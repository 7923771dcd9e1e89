"""Memory aging: the importance rule, tiers, caps, the archive and its TTL, on a clock we set."""

import random
from datetime import date, timedelta

import pytest

from company_ai.core.aging import (
    ARCHIVE_BELOW,
    HALF_LIFE_DAYS,
    Signals,
    age_store,
    deletion_day,
    episode_base,
    importance,
    read_signals,
    value_on,
)
from company_ai.core.brain import BrainDay, Fact, write_day
from company_ai.core.db import transaction
from company_ai.core.vectors import ARCHIVE, EPISODES, KNOWLEDGE, Vector, open_store
from tests.fakes import WordEmbedder

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
                " replied_at, bounce_status) VALUES (?, 1, 't' || ?, 's', 'b', 'x', ?, ?)",
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


def test_a_year_of_nights_keeps_the_caps_archives_least_valuable_first_and_honours_the_ttl(
    tmp_path,
):
    words = WordEmbedder(dim=8)
    caps = {EPISODES: 40, KNOWLEDGE: 12}
    rng = random.Random(3)
    start = date(2026, 1, 1)
    archived_on: dict[str, date] = {}
    over_cap = faded = deleted = 0
    with open_store(tmp_path / "vectors", words.name, words.dim) as (store, _):
        for night in range(365):
            today = start + timedelta(days=night)
            for name, n in ((EPISODES, 6), (KNOWLEDGE, 2)):
                fresh = new_memories(rng, today.isoformat(), n, name)
                vectors = words.embed([v.id for v in fresh])
                store.upsert(
                    name, [Vector(v.id, e, v.meta) for v, e in zip(fresh, vectors, strict=True)]
                )
            before = {name: store.metadata(name) for name in (EPISODES, KNOWLEDGE)}
            result = age_store(store, Signals(), today=today, caps=caps, ttl_days=TTL)
            for name in (EPISODES, KNOWLEDGE):
                kept = store.metadata(name)
                assert len(kept) <= caps[name]
                values = {i: value_on(m["base"], m["day"], today) for i, m in before[name].items()}
                gone = set(before[name]) - set(kept)
                assert all(values[i] >= ARCHIVE_BELOW for i in kept), "a faded vector stayed"
                pushed = [i for i in gone if values[i] >= ARCHIVE_BELOW]
                if pushed:
                    assert max(values[i] for i in pushed) <= min(values[i] for i in kept)
                over_cap += len(pushed)
                faded += len(gone) - len(pushed)
                assert result.archived[name] == len(gone)
                assert result.kept[name] == len(kept)
                for i in gone:
                    archived_on[i] = today
            in_archive = store.metadata(ARCHIVE)
            for i, day in archived_on.items():
                due = day + timedelta(days=TTL)
                assert (i in in_archive) == (today < due), f"{i} archived {day}, now {today}"
            for i, m in in_archive.items():
                assert m["archived_on"] == archived_on[i].isoformat()
            deleted += result.deleted
    assert over_cap and faded and deleted, "the year exercised the cap, fading and the TTL"


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
