"""`similar`: the memories nearest to a text, read-only; one function that the CLI's
`company-ai similar` and the MCP server's `similar` tool both call."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from company_ai.core.crm import find_contact
from company_ai.core.store import Store, Stores
from company_ai.core.vectors.memories import (
    MAX_EMBED_CHARS,
    Hit,
    fill_rows,
    language_note,
    nearest,
    where_filter,
)
from company_ai.core.vectors.store import LIVE, VectorStoreError, open_existing, vectors_dir


@dataclass(frozen=True)
class Similar:
    model: str
    hits: list[Hit]
    note: str  # a warning about the question's language, or ""


def find_similar(
    stores: Stores,
    text: str,
    *,
    ollama_host: str,
    limit: int = 10,
    collection: str | None = None,
    contact: str | None = None,
    type_: str | None = None,
    since: str | None = None,
    until: str | None = None,
    vectors: Path | None = None,
) -> Similar:
    """The `limit` memories nearest to `text` (of one `collection`, or every live one),
    filtered by contact email, type and day range, each with the row it came from.
    `vectors`: the vector store to search (default: the one in the data directory), e.g.
    a private copy, for a reader that must not let Chroma write the original."""
    from company_ai.core.embedding import embedder_for

    if since and until and since > until:
        raise ValueError(f"--since {since} is after --until {until}")
    contact_id = None
    if contact:
        with stores.connect(Store.CRM, readonly=True) as crm:
            contact_id = find_contact(crm, contact)["id"]
    where = where_filter(contact_id=contact_id, type_=type_, since=since, until=until)
    with open_existing(vectors or vectors_dir(stores.data_dir)) as store:
        names = [n for n in ((collection,) if collection else LIVE) if store.has(n)]
        if not names:
            raise VectorStoreError(
                "the vector memory is empty: run the memory job (or `company-ai demo`)"
            )
        model, dim = store.model(names[0])
        embedder = embedder_for(model, dim, ollama_host)
        vector = embedder.embed([text[:MAX_EMBED_CHARS]])[0]
        hits = nearest(store, vector, names, limit, where)
    fill_rows(stores, hits)
    return Similar(model, hits, language_note(model, text))
