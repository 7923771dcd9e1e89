"""The dossier: what a drafter is given about a contact. Stdlib only (CLI read path)."""

from __future__ import annotations

import sqlite3

from company_ai.core.crm.contacts import find_contact
from company_ai.core.store import Store, Stores

NO_HISTORY = "No prior research or interaction history."
DOSSIER_EPISODES = 30


def build_dossier(
    memory: sqlite3.Connection, contact_id: int, limit: int = DOSSIER_EPISODES
) -> str:
    """The contact's last `limit` episodes, oldest first, one dated line each."""
    rows = memory.execute(
        "SELECT created_at, episode_type, source, confidence, content FROM contact_episodes"
        " WHERE contact_id = $1 ORDER BY created_at DESC, id DESC LIMIT $2",
        (contact_id, limit),
    ).fetchall()
    if not rows:
        return NO_HISTORY
    return "\n".join(_line(*row) for row in reversed(rows))


def _line(
    created_at: str, episode_type: str, source: str | None, confidence: float | None, content: str
) -> str:
    provenance = f"from {source}" if source else "source unknown"
    if confidence is not None and confidence < 1:
        provenance += f", confidence {confidence:.2f}"
    return f"{created_at[:10]}: {episode_type} ({provenance}): {' '.join(content.split())}"


def load_dossier(stores: Stores, email: str) -> str:
    """The dossier of the contact with `email` (UnknownContactError when there is none)."""
    with stores.connect(Store.CRM, readonly=True) as crm:
        contact = find_contact(crm, email)
    with stores.connect(Store.MEMORY, readonly=True) as memory:
        return build_dossier(memory, contact["id"])
