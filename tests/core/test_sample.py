from collections import Counter
from datetime import timedelta

from company_ai.core.store import EPISODE_TYPES, Stores
from company_ai.core.times import to_iso
from company_ai.sample_world.crm import load_sample
from tests.conftest import AS_OF


def dump(stores):
    with (
        stores.connect("crm", readonly=True) as crm,
        stores.connect("memory", readonly=True) as memory,
        stores.connect("outreach", readonly=True) as outreach,
    ):
        return (
            crm.execute("SELECT * FROM contacts ORDER BY id").fetchall(),
            memory.execute("SELECT * FROM contact_episodes ORDER BY id").fetchall(),
            outreach.execute("SELECT * FROM messages ORDER BY id").fetchall(),
        )


def test_the_sample_is_deterministic(tmp_path):
    a, b = Stores(tmp_path / "a"), Stores(tmp_path / "b")
    load_sample(a, contacts=120, as_of=AS_OF)
    load_sample(b, contacts=120, as_of=AS_OF)
    assert [list(map(tuple, rows)) for rows in dump(a)] == [
        list(map(tuple, rows)) for rows in dump(b)
    ]


def test_loading_twice_adds_nothing(tmp_path):
    stores = Stores(tmp_path / "d")
    first = load_sample(stores, contacts=80, as_of=AS_OF)
    second = load_sample(stores, contacts=80, as_of=AS_OF)
    assert first.episodes > 0 and first.messages > 0
    assert (second.episodes, second.messages) == (0, 0)
    assert [len(rows) for rows in dump(stores)] == [80, first.episodes, first.messages]


def test_the_sample_looks_like_a_real_crm(sample_stores):
    contacts, episodes, messages = dump(sample_stores)
    cold = sum(c["warmth"] <= 20 for c in contacts) / len(contacts)
    no_email = sum(c["email"] is None for c in contacts) / len(contacts)
    assert 0.6 < cold < 0.8, "most contacts are cold"
    assert 0.2 < no_email < 0.4, "many contacts have no email"
    assert set(Counter(e["episode_type"] for e in episodes)) == set(EPISODE_TYPES)
    start = to_iso(AS_OF - timedelta(days=90))
    assert all(start <= e["created_at"] < to_iso(AS_OF) for e in episodes)
    assert all(m["replied_at"] is None or m["opened_at"] <= m["replied_at"] for m in messages)
    emails = {c["id"]: c["email"] for c in contacts}
    assert all(emails[m["contact_id"]] for m in messages), "only addressable contacts get mail"
    model_guesses = [e for e in episodes if e["source"].startswith("model:")]
    assert model_guesses and all(e["confidence"] < 1 for e in model_guesses)
