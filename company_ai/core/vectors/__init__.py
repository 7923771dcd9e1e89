"""The vector memory: a local ChromaDB store at `<data dir>/vectors/`, what goes
into it from the episodes and the knowledge pages, what `similar` finds, and the aging
that forgets on purpose (importance, tiers, the archive).

The names load on first use (PEP 562): `similar` (`vectors.similar`) reads the store's
files without chromadb, and does not pay for the builders and the aging."""

from typing import TYPE_CHECKING

from company_ai.core.lazy import lazy_names

if TYPE_CHECKING:  # the type checker sees the names as plain imports
    from company_ai.core.vectors.aging import Signals, age_store, read_signals
    from company_ai.core.vectors.memories import (
        MAX_EMBED_CHARS,
        fill_rows,
        language_note,
        nearest,
        sync_episodes,
        sync_knowledge,
        where_filter,
    )
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

_HOMES = {
    **dict.fromkeys(("Signals", "age_store", "read_signals"), "aging"),
    **dict.fromkeys(
        (
            "MAX_EMBED_CHARS",
            "fill_rows",
            "language_note",
            "nearest",
            "sync_episodes",
            "sync_knowledge",
            "where_filter",
        ),
        "memories",
    ),
    **dict.fromkeys(
        (
            "COLLECTIONS",
            "EPISODES",
            "KNOWLEDGE",
            "LIVE",
            "Vector",
            "VectorStore",
            "VectorStoreError",
            "erase",
            "open_existing",
            "open_store",
            "vectors_dir",
        ),
        "store",
    ),
}

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
    "language_note",
    "nearest",
    "open_existing",
    "open_store",
    "read_signals",
    "sync_episodes",
    "sync_knowledge",
    "vectors_dir",
    "where_filter",
]


__getattr__, __dir__ = lazy_names(__name__, _HOMES, globals())
