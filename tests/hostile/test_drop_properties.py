"""Drop files the world could send, generated: JSON values of any shape and raw bytes, in a
batch with good files. No exception escapes `take_signals`, every good file's signals are
recorded, and every other file is either processed or in `rejected/` with its reason:
none is left in the drop folder, none is lost.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from datetime import UTC, datetime
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from company_ai.core.inbox import take_signals
from company_ai.core.store import Stores, transaction

ADA = "ada@acme.example"
NOW = datetime(2026, 11, 30, 7, 0, tzinfo=UTC)
KINDS = ["site_visit", "portal_signup", "social", "email_open"]
# Text as JSON can carry it: lone surrogates (as \ud800 escapes), controls, bidi overrides.
hostile_text = st.text(
    st.characters(codec=None, categories=["Cs", "Cc", "Cf", "Zs", "Ll", "Lu", "Nd", "Mn"])
)

scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text()
    | hostile_text
)
json_values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=6) | st.dictionaries(st.text(max_size=8), inner),
    max_leaves=30,
)
# Signal-shaped objects with hostile values: closer to what passes the first checks.
signal_like = st.fixed_dictionaries(
    {"kind": st.sampled_from(KINDS) | st.text(max_size=5), "email": st.just(ADA) | st.text()},
    optional={
        "at": st.sampled_from(
            ["2026-11-29T12:00:00Z", "2035-01-01T00:00:00Z", "1900-01-01T00:00:00Z"]
        )
        | st.text(max_size=30),
        "id": st.text(max_size=20) | st.integers(),
        "pages": st.lists(st.text(max_size=20), max_size=4) | json_values,
        "detail": hostile_text | json_values,
        "network": st.text(max_size=10),
        "message": st.text(max_size=20),
    },
)
as_json = (json_values | signal_like | st.lists(signal_like, max_size=4)).map(
    lambda v: json.dumps(v).encode()
)
drop_file = as_json | st.binary(max_size=300) | as_json.map(lambda b: b[: len(b) // 2])


def good(n: int) -> bytes:
    signal = {"id": f"good-{n}", "kind": "portal_signup", "email": ADA}
    return json.dumps({"signals": [signal | {"at": "2026-11-29T12:00:00Z"}]}).encode()


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(drop_file, min_size=1, max_size=6))
def test_any_batch_of_drop_files(batch):
    root = Path(tempfile.mkdtemp(prefix="drops-"))
    try:
        stores = Stores(root / "data")
        with stores.connect("crm") as crm, transaction(crm):
            crm.execute(
                "INSERT INTO contacts (id, email, name, warmth, source, created_at, updated_at)"
                " VALUES (1, $1, 'Ada', 10, 'sample', $2, $3)",
                (ADA, "2026-11-01T00:00:00Z", "2026-11-01T00:00:00Z"),
            )
        drop = root / "drop"
        drop.mkdir()
        names = []
        for n, raw in enumerate(batch):
            (drop / f"{n:02d}-gen.json").write_bytes(raw)
            (drop / f"{n:02d}-good.json").write_bytes(good(n))
            names += [f"{n:02d}-gen.json", f"{n:02d}-good.json"]

        done = take_signals(stores, drop, tz="UTC", now=NOW, warn=lambda _: None)

        assert done.files == len(names) and done.not_moved == 0
        assert done.processed + done.taken.refused == len(names)
        assert sorted(p.name for p in drop.iterdir() if p.suffix == ".json") == []
        for name in names:
            processed = (drop / "processed" / name).is_file()
            rejected = (drop / "rejected" / name).is_file()
            assert processed != rejected, name
            if rejected:
                assert (drop / "rejected" / f"{name}.why.txt").read_text().strip()
                assert name in done.rejected
        with stores.connect("memory") as memory:
            keys = {r[0] for r in memory.execute("SELECT natural_key FROM contact_episodes")}
        for n in range(len(batch)):
            assert f"engagement:portal_signup:good-{n}" in keys
            assert (drop / "processed" / f"{n:02d}-good.json").is_file()
    finally:
        shutil.rmtree(root)
