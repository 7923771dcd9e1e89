"""The vector memory: a local ChromaDB store at `<data dir>/vectors/`, what goes
into it from the episodes and the knowledge pages, what `similar` finds, and the aging
that forgets on purpose (importance, tiers, the archive)."""

from company_ai.core.vectors.aging import Signals, age_store, read_signals
from company_ai.core.vectors.memories import (
    MAX_EMBED_CHARS,
    fill_rows,
    hits_json,
    language_note,
    nearest,
    render_hits,
    sync_episodes,
    sync_knowledge,
    where_filter,
)
from company_ai.core.vectors.similar import Similar, find_similar
from company_ai.core.vectors.store import (
    COLLECTIONS,
    EPISODES,
    KNOWLEDGE,
    LIVE,
    Vector,
    VectorStore,
    VectorStoreError,
    erase,
    open_existing,
    open_store,
    vectors_dir,
)

__all__ = [
    "COLLECTIONS",
    "EPISODES",
    "KNOWLEDGE",
    "LIVE",
    "MAX_EMBED_CHARS",
    "Signals",
    "Similar",
    "Vector",
    "VectorStore",
    "VectorStoreError",
    "age_store",
    "erase",
    "fill_rows",
    "find_similar",
    "hits_json",
    "language_note",
    "nearest",
    "open_existing",
    "open_store",
    "read_signals",
    "render_hits",
    "sync_episodes",
    "sync_knowledge",
    "vectors_dir",
    "where_filter",
]
