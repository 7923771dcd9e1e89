"""The episodes collection's first build happens once, and says how it goes (issue 26).

Each test counts the texts the embedder was given: the first run embeds every row up to
its day, and any later run, whatever its day and whether it ran after or beside the first,
embeds only its own day's rows."""

import multiprocessing
import threading

from company_ai.core.store import Stores
from company_ai.core.times import Day
from company_ai.core.vectors import EPISODES, Signals, open_store, sync_episodes, vectors_dir
from company_ai.core.vectors import memories as memories_module
from company_ai.core.vectors.aging import age_store
from company_ai.core.vectors.store import _locked
from company_ai.sample_world.crm import load_sample
from tests.conftest import AS_OF, database_for
from tests.core.test_progress import Clock
from tests.fakes import DictVectorStore, WordEmbedder

DAYS = ("2026-11-27", "2026-11-28", "2026-11-29")
CAP = 1_000_000


def stores_at(data, url=""):
    """The data directory's stores; `url` is its database under --stores=postgres, passed
    to a spawned process, which does not share this one's patched `Stores`."""
    return Stores(data, database_url=url or database_for(data))


def rows(data, where, *args, url=""):
    with stores_at(data, url).connect("memory", readonly=True) as conn:
        sql = f"SELECT count(*) FROM contact_episodes WHERE {where}"
        return conn.execute(sql, args).fetchone()[0]


def sample(tmp_path):
    data = tmp_path / "data"
    load_sample(Stores(data), contacts=60, as_of=AS_OF)
    assert all(rows(data, "day = $1", day) for day in DAYS[1:]), "each later day has episodes"
    return data


def sync(data, day, embedder=None, progress=None, log=lambda _: None, url=""):
    """One day's sync, as the asset runs it: (full build?, texts embedded, Opened); a
    first build's texts are its rows but those the aging rule would archive at once."""
    embedder = embedder or WordEmbedder()
    with open_store(vectors_dir(data), embedder.name, embedder.dim, log=log) as (store, opened):
        result = sync_episodes(
            # The calendar day as its window: the sample's rows were recorded as they happened.
            store, opened, stores_at(data, url), embedder, Day.of(day, "UTC"), cap=CAP,
            signals=Signals(), progress=progress,
        )  # fmt: skip
    assert result.embedded == embedder.calls and not result.empty
    if result.full_build:
        assert result.embedded + result.not_kept == rows(data, "day <= $1", day, url=url)
        assert result.embedded > rows(data, "day = $1", day, url=url)
    return result.full_build, embedder.calls, opened


def test_one_first_build_then_each_day_embeds_only_its_own_rows(tmp_path):
    data = sample(tmp_path)
    full, embedded, _ = sync(data, DAYS[0])
    assert full and embedded
    for day in DAYS[1:]:
        full, embedded, _ = sync(data, day)
        assert not full and embedded == rows(data, "day = $1", day)
    assert sync(data, DAYS[-1])[:2] == (False, 0), "a replay embeds nothing"


def test_a_later_day_first_builds_once_and_the_earlier_day_then_embeds_nothing(tmp_path):
    data = sample(tmp_path)
    full, embedded, _ = sync(data, DAYS[-1])
    assert full and embedded
    assert sync(data, DAYS[0])[:2] == (False, 0)


def _side_by_side(data, url, day, done):
    full, embedded, opened = sync(data, day, url=url)
    done.put((day, full, embedded))


def test_two_days_side_by_side_build_once_between_them(tmp_path):
    """The demo runs two nights' memory jobs at once: one builds, the other waits, then
    embeds only its own day."""
    data = sample(tmp_path)
    spawn = multiprocessing.get_context("spawn")
    done = spawn.Queue()
    runs = [
        spawn.Process(target=_side_by_side, args=(data, database_for(data), d, done))
        for d in DAYS[:2]
    ]
    for p in runs:
        p.start()
    results = sorted(done.get(timeout=120) for _ in runs)
    for p in runs:
        p.join(timeout=60)
        assert p.exitcode == 0
    builds = [r for r in results if r[1]]
    assert len(builds) == 1, results
    (built_day, _, built), (other_day, _, other) = builds[0], next(r for r in results if not r[1])
    assert built > rows(data, "day = $1", built_day)
    assert other == (rows(data, "day = $1", other_day) if other_day > built_day else 0)


def test_a_run_that_waits_for_another_writer_says_so(tmp_path):
    data = sample(tmp_path)
    path, logs = vectors_dir(data), []
    held, release = threading.Event(), threading.Event()

    def another_writer():
        with _locked(path, exclusive=True):
            held.set()
            release.wait(timeout=60)

    def log(line):
        logs.append(line)
        release.set()  # the other writer finishes once we are seen waiting for it

    writer = threading.Thread(target=another_writer)
    writer.start()
    assert held.wait(timeout=60)
    full, _, opened = sync(data, DAYS[0], log=log)
    writer.join()
    assert full and "being written by another run: waiting for it" in logs[0]
    assert opened.waited_s >= 0


def test_a_long_build_tells_its_progress_by_time(tmp_path, monkeypatch):
    data = sample(tmp_path)
    monkeypatch.setattr(memories_module, "EMBED_BATCH", 50)
    clock, lines = Clock(), []

    class Slow(WordEmbedder):
        def embed(self, texts):
            clock.now += 4  # each batch takes 4 s of the fake clock
            return super().embed(texts)

    from company_ai.core.progress import Progress

    progress = Progress("episodes vectors", lines.append, unit="rows", clock=clock)
    _, embedded, _ = sync(data, DAYS[0], embedder=Slow(), progress=progress)
    batches = -(-embedded // 50)
    assert batches >= 6
    assert len(lines) == (batches * 4) // 12 + (batches * 4 % 12 != 0)  # every 3rd, and the end
    assert "left" in lines[0] and "/s" in lines[0]
    assert lines[-1].startswith(f"episodes vectors: {embedded:,} rows in ")


def test_aging_tells_its_progress_by_time(monkeypatch):
    from company_ai.core.progress import Progress
    from company_ai.core.vectors import Vector
    from company_ai.core.vectors import aging as aging_module

    monkeypatch.setattr(aging_module, "PAGE", 10)
    clock, lines = Clock(), []

    class Slow(DictVectorStore):
        def update_metadata(self, name, metas):
            clock.now += 6
            super().update_metadata(name, metas)

    store = Slow()
    meta = {"kind": "episode", "ref": "r", "type": "scoring", "base": 1, "importance": 5}
    store.upsert(
        EPISODES,
        [Vector(f"episode:{n}", [1.0], meta | {"day": "2026-11-29"}) for n in range(100)],
    )
    progress = Progress("aging", lines.append, unit="vectors", clock=clock)
    caps = {EPISODES: CAP, "knowledge": CAP}
    age_store(store, Signals(), today=AS_OF.date(), caps=caps, ttl_days=180, progress=progress)
    assert len(lines) == 5 and lines[-1].startswith("aging: 100 vectors in 1 min 00 s")
