"""Whatever a People page holds beside good people, the sync raises nothing and every good
person is stored (Hypothesis: generated person objects, through the real Google client)."""

import json
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from company_ai.core.store import Stores
from tests.core.crm.test_people_sync import Google, run

TEXT = st.text(alphabet=st.characters(codec=None, categories=None), max_size=40)
JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | TEXT,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(TEXT, inner, max_size=4),
    max_leaves=12,
)
FIELD = st.one_of(
    JSON,
    st.lists(st.dictionaries(st.sampled_from(["value", "displayName", "name", "title",
             "city", "givenName", "familyName", "metadata"]), JSON | TEXT), max_size=3),
)  # fmt: skip
PERSON = st.one_of(
    JSON,
    st.fixed_dictionaries(
        {},
        optional={
            "resourceName": JSON | TEXT | st.just("people/x1"),
            "names": FIELD,
            "emailAddresses": FIELD,
            "organizations": FIELD,
            "addresses": FIELD,
            "metadata": JSON | st.just({"deleted": True}),
        },
    ),
)


def good(n: int) -> dict:
    return {
        "resourceName": f"people/good{n}",
        "names": [{"displayName": f"Good {n}"}],
        "emailAddresses": [{"value": f"good{n}@ok.example"}],
    }


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(PERSON, max_size=6), st.randoms(use_true_random=False))
def test_no_person_stops_the_sync_and_every_good_person_is_stored(hostile, rng):
    people = [good(1), good(2), good(3), *hostile]
    rng.shuffle(people)
    body = json.dumps({"connections": people, "nextSyncToken": "s1"}, ensure_ascii=True)
    with tempfile.TemporaryDirectory() as tmp:
        stores = Stores(Path(tmp) / "data")
        with stores.connect("crm") as crm:
            report, _ = run(
                Google([({"status": "200"}, body)]).fetch(), crm, Path(tmp) / "cursor.json"
            )
            stored = dict(crm.execute("SELECT external_id, email FROM contacts"))
    assert report.stopped == "complete"
    for n in (1, 2, 3):
        assert stored[f"people/good{n}"] == f"good{n}@ok.example"
