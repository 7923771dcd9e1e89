"""The hostile drop corpus through the real `engagement_signals` asset.

Each file of tests/hostile/drops/ is named for what it guards against (d2_*: issue defect 2,
one poisoned file failing every run; d11_*: defect 11, a time from outside taken as the
day's). The big ones (100,000 brackets, 6 MB) and the ones a repository cannot hold (a
FIFO, a directory, symbolic links, a name that is not UTF-8) are made here, by `poisoned`.
Every good file is processed in the same run as the bad ones; every bad file is moved
whole to `rejected/` with its reason; the run succeeds, and a second run meets none again.
"""

from __future__ import annotations

import json
import os
import shutil
from datetime import UTC, datetime
from pathlib import Path

import dagster as dg
import pytest

from company_ai.core.store import Stores, transaction
from company_ai.resources.engagement import EngagementDrop
from company_ai.resources.stores import StoresResource
from tests.setup import named

engagement_signals = named("engagement_signals")
CORPUS = Path(__file__).parent / "drops"
ADA = "ada@acme.example"
AT = "2026-11-29T12:00:00Z"
DAY = "2026-11-29"
NOW = datetime(2026, 11, 30, 7, 0, tzinfo=UTC)

# What becomes of each file: ("processed", what its episode says) or ("rejected", why).
EXPECTED = {
    "d2_5000_digits.json": ("rejected", "a number of 5,000 digits"),
    "d2_brackets_100k.json": ("rejected", "nested deeper than"),
    "d2_lone_surrogate.json": ("processed", "Signed up to the customer portal: trial \ufffd"),
    "d11_future_at.json": ("processed", "(said it happened at 2035-06-01T09:00:00Z"),
    "d11_before_1990.json": ("processed", "(said it happened at 1970-01-01T00:00:00Z"),
    "nan.json": ("rejected", "NaN is not a number JSON allows"),
    "infinity.json": ("rejected", "-Infinity is not a number JSON allows"),
    "float_overflow.json": ("rejected", "1e999 is too large"),  # parsed, it is infinity
    # RFC 8259 leaves a repeated name's meaning open; ours is Python's: the last one counts.
    "duplicate_keys.json": ("processed", "the last kind wins"),
    "bom.json": ("processed", "behind a BOM"),
    "utf16.json": ("rejected", "not UTF-8"),
    "truncated.json": ("rejected", "not JSON"),
    "empty.json": ("rejected", "not JSON"),
    "top_level_string.json": ("rejected", "must be a JSON object"),
    "deep_40.json": ("rejected", "nested deeper than 32 levels"),
    "control_chars.json": ("processed", "On linkedin: liked our post"),
    "year_0001_offset.json": ("rejected", "is not UTC"),
    "null_signals.json": ("rejected", "must be a JSON object"),
    "big_6mb.json": ("rejected", "over the 5,242,880-byte limit"),
    "fifo.json": ("rejected", "not a regular file (a named pipe)"),
    "directory.json": ("rejected", "not a regular file (a folder)"),
    "link_to_good.json": ("rejected", "a symbolic link"),
    "link_to_dev_zero.json": ("rejected", "a symbolic link"),
    "bad\udcffname.json": ("processed", "under a name that is not UTF-8"),
}
GOOD = ["0_good.json", "m_good.json", "zz_good.json"]


def signal(ident: str, detail: str) -> dict:
    return {"id": ident, "kind": "portal_signup", "email": ADA, "at": AT, "detail": detail}


def poisoned(drop: Path, outside: Path) -> None:
    """The corpus files made here rather than committed."""
    (drop / "d2_brackets_100k.json").write_text("[" * 100_000 + "]" * 100_000)
    with (drop / "big_6mb.json").open("w") as big:
        big.write('{"signals": [' + ", ".join(['{"kind": "x"}'] * 500_000) + "]}")
    os.mkfifo(drop / "fifo.json")  # read naively, this hangs the run for ever
    (drop / "directory.json").mkdir()
    (drop / "directory.json" / "inside.json").write_text("{}")
    good_elsewhere = outside / "elsewhere.json"
    good_elsewhere.write_text(json.dumps(signal("elsewhere", "not in the drop")))
    (drop / "link_to_good.json").symlink_to(good_elsewhere)
    (drop / "link_to_dev_zero.json").symlink_to("/dev/zero")
    name = os.fsencode(drop) + b"/bad\xffname.json"
    with open(name, "w") as odd:
        odd.write(json.dumps(signal("odd-name", "under a name that is not UTF-8")))


@pytest.fixture
def corpus(tmp_path, clock):
    clock(NOW)
    data = tmp_path / "data"
    stores = Stores(data)
    with stores.connect("crm") as crm, transaction(crm):
        crm.execute(
            "INSERT INTO contacts (id, email, name, warmth, source, created_at, updated_at)"
            " VALUES (1, $1, 'Ada Okafor', 40, 'sample', $2, $3)",
            (ADA, "2026-11-01T00:00:00Z", "2026-11-01T00:00:00Z"),
        )
    drop, outside = tmp_path / "drop", tmp_path / "outside"
    drop.mkdir()
    outside.mkdir()
    for path in CORPUS.glob("*.json"):
        shutil.copyfile(path, drop / path.name)
    poisoned(drop, outside)
    for n, name in enumerate(GOOD):
        (drop / name).write_text(json.dumps({"signals": [signal(f"good-{n}", f"good {n}")]}))
    resources = {
        "stores": StoresResource(data_dir=str(data)),
        "engagement_drop": EngagementDrop(folder=str(drop)),
    }
    return stores, drop, resources


def run(resources, instance):
    result = dg.materialize(
        [engagement_signals],
        partition_key=DAY,
        instance=instance,
        resources=resources,
    )
    assert result.success
    materialization = result.asset_materializations_for_node("engagement_signals")[0]
    [check] = result.get_asset_check_evaluations()
    return {k: v.value for k, v in materialization.metadata.items()}, check


def contents(stores):
    with stores.connect("memory") as memory:
        return [row[0] for row in memory.execute("SELECT content FROM contact_episodes")]


def stored_at(stores, natural_key):
    with stores.connect("memory") as memory:
        query = "SELECT created_at FROM contact_episodes WHERE natural_key = $1"
        return memory.execute(query, (natural_key,)).fetchone()[0]


def test_every_committed_corpus_file_has_an_expectation():
    assert {p.name for p in CORPUS.glob("*.json")} <= set(EXPECTED)


def test_the_hostile_corpus_through_the_asset(corpus):
    stores, drop, resources = corpus
    with dg.instance_for_test() as instance:
        meta, check = run(resources, instance)
        rejected = {n for n, (fate, _) in EXPECTED.items() if fate == "rejected"}
        processed = {n for n, (fate, _) in EXPECTED.items() if fate == "processed"}
        assert meta["files"] == len(EXPECTED) + len(GOOD)
        assert meta["processed"] == len(processed) + len(GOOD)
        assert meta["items_refused"] == len(rejected)
        reasons = meta["reasons"]
        for name in rejected:
            shown = name.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
            assert EXPECTED[name][1] in reasons[shown], name
            assert os.path.lexists(drop / "rejected" / name), f"{name} never lost"
            why = (drop / "rejected" / f"{name}.why.txt").read_text()
            assert EXPECTED[name][1] in why, name
        for name in [*processed, *GOOD]:
            assert (drop / "processed" / name).is_file(), name
        assert sorted(p.name for p in drop.iterdir()) == ["processed", "rejected"]

        stored = contents(stores)
        for name in processed:
            assert any(EXPECTED[name][1] in c for c in stored), name
        for n in range(len(GOOD)):
            assert f"Signed up to the customer portal: good {n}." in stored
        assert not any("not in the drop" in c for c in stored), "a symlink is never followed"
        assert meta["future_times"] == 1 and meta["times_before_1990"] == 1
        for flagged in ("late-2035", "early-1970"):  # kept as the run's time, not the claim
            assert (
                stored_at(stores, f"engagement:portal_signup:{flagged}") == "2026-11-30T07:00:00Z"
            )
        assert stored_at(stores, "engagement:portal_signup:good-0") == AT
        assert (drop / "directory.json" / "inside.json").exists() is False
        assert (drop / "rejected" / "directory.json" / "inside.json").exists()

        assert not check.passed and check.severity == dg.AssetCheckSeverity.WARN
        assert check.metadata["refused"].value == len(rejected)
        assert set(check.metadata["reasons"].value) == set(reasons)

        again, check = run(resources, instance)
        assert (again["files"], again["items_refused"], again["episodes_written"]) == (0, 0, 0)
        assert check.passed
        assert contents(stores) == stored
