"""Forgetting on purpose: importance, tiers, the archive, a TTL and hard caps.

The vector memory (`core/vectors/store.py`) must stay useful as it grows, so each night's
`memory_aging` pass scores every live vector, lets its value decay by its tier, and moves
the least valuable to the `archive` collection; archived vectors are deleted once they have
been archived for the TTL. Only vectors move or go: the episode, fact or page a vector came
from is never touched (the stores are opened read-only here).

Importance (1-5), recomputed each night from the stored rows:
  episodes   by type: response 4 (a person wrote back); note 3, outreach 3; research 2,
             company 2, engagement 2; scoring 1.
             source `manual` (a person wrote it down) +1; confidence below 0.5 (a doubtful
             guess) -1; an outreach message that was replied to +1, one that hard-bounced -1.
  knowledge  a fact or decision keeps the importance the brain's rule gave it
             (`core/brain/facts.py`); a recall page 3.
  both       retrieved again: cited in the sources of a brain row of a later day than its
             own +1 (`similar` and `recall` are read-only and count nothing).
  The result is kept within 1-5.

Tier and half-life, by importance: 5 lasting 365 days, 4 long 180, 3 medium 60, 2 short 21,
1 brief 7. A vector's value on day T is `importance x 0.5 ** (age / half-life)`, age being
T minus its own day in days.

Each pass, per live collection: a vector whose value fell below 0.5 is archived; then, if
more than the collection's cap remain, the lowest values go (ties: the older day, then the
id) until the cap holds. An archived vector is deleted on the first pass on or after its
archive day plus the TTL (180 days by default): archived on 1 January, deleted on 30 June.
A move adds to the archive before it deletes from the live collection, so a pass stopped
between the two leaves a copy in both, which the next pass removes from the live one.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Iterable, Mapping
from contextlib import closing
from dataclasses import dataclass, field
from datetime import date, timedelta
from typing import Any

from company_ai.core.brain import clamp_importance
from company_ai.core.store import Store, Stores, table_exists
from company_ai.core.vectors.store import ARCHIVE, LIVE, PAGE, Vector, VectorStore

EPISODE_IMPORTANCE = {
    "response": 4,
    "note": 3,
    "outreach": 3,
    "research": 2,
    "company": 2,
    "engagement": 2,
    "scoring": 1,
}
PAGE_IMPORTANCE = 3
DOUBTFUL_CONFIDENCE = 0.5
HALF_LIFE_DAYS = {5: 365, 4: 180, 3: 60, 2: 21, 1: 7}
TIERS = {5: "lasting", 4: "long", 3: "medium", 2: "short", 1: "brief"}
ARCHIVE_BELOW = 0.5  # the value under which a vector is archived
EPISODE_REF = "memory.contact_episodes:"


def episode_base(episode_type: str, source: str | None, confidence: float | None) -> int:
    """An episode's importance from its own row: type, source and confidence."""
    base = EPISODE_IMPORTANCE[episode_type]
    if source == "manual":
        base += 1
    if confidence is not None and confidence < DOUBTFUL_CONFIDENCE:
        base -= 1
    return clamp_importance(base)


@dataclass(frozen=True)
class Signals:
    """What happened to memories after they were stored (read from the stores)."""

    replied: frozenset[int] = frozenset()  # outreach message ids that got a reply
    bounced: frozenset[int] = frozenset()  # outreach message ids that hard-bounced
    cited: Mapping[str, frozenset[str]] = field(default_factory=dict)  # ref -> citing days


def importance(meta: Mapping[str, Any], signals: Signals) -> int:
    """The importance of one vector today, by the rule in the module docstring."""
    value = int(meta["base"])
    message = meta.get("message_id")
    if message is not None:
        value += (message in signals.replied) - (message in signals.bounced)
    if any(day != meta["day"] for day in signals.cited.get(meta["ref"], ())):
        value += 1
    return clamp_importance(value)


def value_on(importance_: int, day: str, today: date) -> float:
    age = max(0, (today - date.fromisoformat(day)).days)
    return importance_ * 0.5 ** (age / HALF_LIFE_DAYS[importance_])


def keep_order(values: Mapping[str, float], days: Mapping[str, str]) -> list[str]:
    """Ids from most to least worth keeping: value, then the newer day, then the id."""
    return sorted(values, key=lambda i: (-values[i], _neg_day(days[i]), i))


def _neg_day(day: str) -> int:
    return -int(day.replace("-", ""))


@dataclass(frozen=True)
class Selection:
    importance: dict[str, int]  # every id's importance today
    keep: list[str]  # most worth keeping first
    faded: list[str]  # value below ARCHIVE_BELOW
    over_cap: list[str]  # worth keeping, but beyond the cap

    @property
    def leave(self) -> list[str]:
        return self.faded + self.over_cap


def select(
    metas: Mapping[str, Mapping[str, Any]], signals: Signals, today: date, cap: int
) -> Selection:
    """Which vectors of one live collection stay and which go to the archive."""
    scored = {i: importance(m, signals) for i, m in metas.items()}
    values = {i: value_on(scored[i], m["day"], today) for i, m in metas.items()}
    ranked = keep_order(values, {i: m["day"] for i, m in metas.items()})
    worth = [i for i in ranked if values[i] >= ARCHIVE_BELOW]
    faded = [i for i in ranked if values[i] < ARCHIVE_BELOW]
    return Selection(scored, worth[:cap], faded, worth[cap:])


_REPLIED = "SELECT id FROM messages WHERE replied_at IS NOT NULL"
_BOUNCED = "SELECT id FROM messages WHERE bounce_status = 'hard'"


def read_signals(stores: Stores) -> Signals:
    """Replies, bounces and citations, from outreach.db and brain.db (read-only; a store
    that does not exist yet gives none)."""
    replied: set[int] = set()
    bounced: set[int] = set()
    cited: dict[str, set[str]] = {}
    outreach = stores.reader(Store.OUTREACH)
    if outreach is not None:
        with closing(outreach) as conn:
            replied = {r[0] for r in conn.execute(_REPLIED)}
            bounced = {r[0] for r in conn.execute(_BOUNCED)}
    brain = stores.reader(Store.BRAIN)
    if brain is not None:
        with closing(brain) as conn:
            for day, sources in _brain_sources(conn):
                for ref in _refs(sources):
                    cited.setdefault(ref, set()).add(day)
    return Signals(
        frozenset(replied), frozenset(bounced), {k: frozenset(v) for k, v in cited.items()}
    )


def _brain_sources(conn: sqlite3.Connection) -> Iterable[tuple[str, str]]:
    for table in ("facts", "decisions", "edges"):
        if table_exists(conn, table):
            yield from conn.execute(f"SELECT day, sources FROM {table}")


def _refs(sources: str) -> list[str]:
    try:
        refs = json.loads(sources)
    except ValueError:
        return []
    return [r for r in refs if isinstance(r, str)] if isinstance(refs, list) else []


def deletion_day(archived_on: str, ttl_days: int) -> date:
    return date.fromisoformat(archived_on) + timedelta(days=ttl_days)


@dataclass
class AgingResult:
    kept: dict[str, int] = field(default_factory=dict)  # per live collection
    archived: dict[str, int] = field(default_factory=dict)
    over_cap: dict[str, int] = field(default_factory=dict)  # of the archived: for the cap
    rescored: dict[str, int] = field(default_factory=dict)  # importance changed tonight
    repaired: int = 0  # copies left in a live collection by a pass that stopped mid-move
    deleted: int = 0  # archived vectors past the TTL
    archive_kept: int = 0


def age_store(
    store: VectorStore,
    signals: Signals,
    *,
    today: date,
    caps: Mapping[str, int],
    ttl_days: int,
    progress: Callable[[int, int], None] | None = None,
) -> AgingResult:
    """One night's pass over the store (see the module docstring). `progress(done, total)`
    counts the live vectors passed over, told after each page of writes."""
    result = AgingResult()
    archived = store.metadata(ARCHIVE)
    total, passed = sum(store.count(name) for name in LIVE), 0
    for name in LIVE:
        metas = store.metadata(name)
        doubles = [i for i in metas if i in archived]
        result.repaired += store.delete(name, doubles)
        metas = {i: m for i, m in metas.items() if i not in archived}
        chosen = select(metas, signals, today, caps[name])
        scored = chosen.importance
        changed = {
            i: {**metas[i], "importance": scored[i]}
            for i in chosen.keep
            if scored[i] != metas[i]["importance"]
        }
        stamp = {"collection": name, "archived_on": today.isoformat()}
        leave = chosen.leave
        # In pages, each told as its share of this collection's vectors.
        writes, written = max(1, len(changed) + len(leave)), 0
        ids = list(changed)
        for start in range(0, len(ids), PAGE):
            part = ids[start : start + PAGE]
            store.update_metadata(name, {i: changed[i] for i in part})
            written += len(part)
            if progress:
                progress(passed + len(metas) * written // writes, total)
        for start in range(0, len(leave), PAGE):
            part = leave[start : start + PAGE]
            store.upsert(
                ARCHIVE,
                [
                    Vector(v.id, v.embedding, {**v.meta, **stamp, "importance": scored[v.id]})
                    for v in store.vectors(name, part)
                ],
            )
            store.delete(name, part)
            written += len(part)
            if progress:
                progress(passed + len(metas) * written // writes, total)
        archived.update({i: stamp for i in leave})
        passed = min(total, passed + len(metas))
        if progress:
            progress(passed, total)
        result.kept[name] = len(chosen.keep)
        result.archived[name] = len(leave)
        result.over_cap[name] = len(chosen.over_cap)
        result.rescored[name] = len(changed)
    expired = [i for i, m in archived.items() if deletion_day(m["archived_on"], ttl_days) <= today]
    result.deleted = store.delete(ARCHIVE, expired)
    result.archive_kept = len(archived) - len(expired)
    return result
