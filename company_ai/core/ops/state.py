"""Key state as flat JSON files for any reader (a dashboard, a shell script, `jq`).

Each file is written atomically: a temporary file in the same folder, fsynced, then
`os.replace`d over the old one, so a reader sees the previous file or the new one, never
a torn one. Files: `stores.json` (row counts per table of every store), `memory.json`
(episodes by type, the last sealed day), `outreach.json` (messages, replies, bounces, and
`growth`: the growth analysis' headline at its last tick), `crm.json` (the latest CRM
audit recorded before the export, or null), `ops.json` (pending alerts, the latest
snapshot).
"""

from __future__ import annotations

import json
from pathlib import Path

from company_ai.core.files import write_atomic
from company_ai.core.ops.audit import stored_audit
from company_ai.core.ops.reports import query
from company_ai.core.ops.snapshots import explain_os_error, load_manifest, row_counts, snapshot_days
from company_ai.core.store import DOMAINS, Store, pg
from company_ai.core.times import Day


class StateExportError(Exception):
    """The state files could not be written; the message says why and what to do."""


def write_json_atomic(path: Path, data: object) -> None:
    write_atomic(path, json.dumps(data, indent=1, sort_keys=True).encode("utf-8"))


def collect_state(
    stores, snapshot_root: Path, as_of: str, growth_day: Day | None = None
) -> dict[str, dict]:
    """The state files' contents, by file name; stores that do not exist are left out.
    `growth_day`: the growth analysis' last window before `as_of` (None: no growth)."""
    from company_ai.core.outreach import count_growth

    tables = {domain: counts for domain in DOMAINS if (counts := store_row_counts(stores, domain))}
    state: dict[str, dict] = {"stores.json": {"as_of": as_of, **tables}}

    by_type = query(
        stores, Store.MEMORY, "SELECT episode_type, count(*) FROM contact_episodes GROUP BY 1", {}
    )
    if by_type is not None:
        seal = query(
            stores, Store.MEMORY, "SELECT day, episodes FROM day_seals ORDER BY day DESC", {}
        )
        state["memory.json"] = {
            "as_of": as_of,
            "episodes": sum(n for _, n in by_type),
            "episodes_by_type": {t: n for t, n in by_type},
            "last_sealed_day": seal[0][0] if seal else None,
            "last_sealed_episodes": seal[0][1] if seal else None,
        }
    messages = query(
        stores,
        Store.OUTREACH,
        "SELECT count(*), count(replied_at),"
        " sum(CASE WHEN bounce_status != 'none' THEN 1 ELSE 0 END) FROM messages",
        {},
    )
    if messages is not None:
        sent, replied, bounced = messages[0]
        state["outreach.json"] = {
            "as_of": as_of,
            "messages": sent,
            "replied": replied,
            "bounced": bounced or 0,
        }
        if growth_day is not None:
            with stores.connect(Store.OUTREACH, readonly=True) as conn:
                growth = count_growth(conn, growth_day)
            state["outreach.json"]["growth"] = {"as_of": growth.as_of} | growth.headline().as_dict()
    audit = stored_audit(stores, before=as_of)
    state["crm.json"] = {
        "as_of": as_of,
        "audit": None
        if audit is None
        else {"day": audit.day, "recorded_at": audit.recorded_at} | audit.audit.numbers(),
    }
    pending = query(stores, Store.OPS, "SELECT count(*) FROM alerts WHERE sent_at IS NULL", {})
    days = snapshot_days(snapshot_root)
    latest = load_manifest(Path(snapshot_root) / days[-1]) if days else None
    state["ops.json"] = {
        "as_of": as_of,
        "pending_alerts": pending[0][0] if pending is not None else 0,
        "latest_snapshot": latest.day if latest else None,
        "latest_snapshot_bytes": latest.bytes if latest else None,
        "snapshots_kept": len(days),
    }
    return state


def store_row_counts(stores, domain: Store) -> dict[str, int] | None:
    """Rows per table of a store (its file's, or its schema's on PostgreSQL); None when it
    does not exist yet."""
    if domain not in stores.urls:
        path = stores.path(domain)
        return row_counts(path) if path.is_file() else None
    conn = stores.reader(domain)
    if conn is None:
        return None
    try:
        tables = [
            name
            for (name,) in conn.execute(
                "SELECT table_name FROM information_schema.tables"
                " WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'"
                " AND table_name != $1 ORDER BY table_name",
                (pg.VERSIONS,),
            )
        ]
        return {t: conn.execute(f'SELECT count(*) FROM "{t}"').fetchone()[0] for t in tables}
    finally:
        conn.close()


def export_state(
    stores, folder: Path, snapshot_root: Path, as_of: str, growth_day: Day | None = None
) -> dict[str, dict]:
    """Write the state files into `folder`; StateExportError says why it could not.

    Each file is replaced whole or not at all, so a failure (a full disk) leaves every
    file either new or as it was, and no temporary file behind.
    """
    state = collect_state(stores, snapshot_root, as_of, growth_day)
    try:
        for name, data in state.items():
            write_json_atomic(Path(folder) / name, data)
    except OSError as exc:
        raise StateExportError(
            f"cannot write the state files into {folder}: {explain_os_error(exc)}. No file "
            "was left half-written; free space there or point COMPANY_AI_STATE_DIR at a "
            "writable folder"
        ) from exc
    return state
