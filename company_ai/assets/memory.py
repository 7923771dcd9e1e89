from collections.abc import Iterator
from contextlib import closing, nullcontext
from datetime import date

import dagster as dg

from company_ai import days
from company_ai.constants import MEMORY, OWNER, REPLAY_META
from company_ai.core.memory import DayAudit, audit_day, seal_day
from company_ai.core.progress import Progress
from company_ai.core.store import Store
from company_ai.core.times import local_day, parse_utc, to_iso
from company_ai.core.vectors import (
    EPISODES,
    KNOWLEDGE,
    VectorStoreError,
    open_existing,
    open_store,
    vectors_dir,
)
from company_ai.resources.embedder import Embedder
from company_ai.resources.stores import StoresResource
from company_ai.setup import Setup

EPISODE_CHECKS = {
    "episodes_are_unique": "No event is stored twice in the day under different natural keys.",
    "confidences_are_in_range": "Every episode's confidence is a number in [0, 1].",
    "episode_times_are_sound": (
        "Every episode's created_at is well-formed ISO-8601 UTC and no later than when it was"
        " recorded (an old time recorded late is sound: it belongs to the night it arrived)."
    ),
    "every_send_has_its_episode": (
        "Every message sent that day has its `outreach:message:<id>` episode in memory."
    ),
}


def _check_results(audit: DayAudit) -> list[dg.AssetCheckResult]:
    found: dict[str, list] = {
        "episodes_are_unique": [ids for ids in audit.duplicates],
        "confidences_are_in_range": audit.confidence_out_of_range,
        "episode_times_are_sound": audit.unsound_times,
        "every_send_has_its_episode": audit.sends_without_episode,
    }
    return [
        dg.AssetCheckResult(
            check_name=name,
            passed=not offenders,
            metadata={"offenders": len(offenders), "examples": str(offenders[:10])},
        )
        for name, offenders in found.items()
    ]


class VectorsConfig(dg.Config):
    # Remove the whole vector store first and build it again from the stores: the way to
    # change embedding model, or to start over.
    rebuild: bool = False


def _vector_sync(context, setup: Setup, stores, embedder: Embedder, config, name: str):
    """Open the store for the embedder's model and sync one day of one collection."""
    from company_ai.core.vectors import read_signals, sync_episodes, sync_knowledge

    asset = {EPISODES: "episode_vectors", KNOWLEDGE: "knowledge_vectors"}[name]
    day = days.window(setup, asset, days.one_day(context))
    model = embedder.embedder
    sync = {EPISODES: sync_episodes, KNOWLEDGE: sync_knowledge}[name]
    caps = {EPISODES: setup.settings.vector_cap_episodes}
    caps[KNOWLEDGE] = setup.settings.vector_cap_knowledge
    path = vectors_dir(stores.data_dir)
    log = context.log.info
    try:
        with open_store(
            path, model.name, model.dim, rebuild=config.rebuild, log=log, url=stores.chroma_url
        ) as (store, opened):
            if opened.rebuilt:
                context.log.warning(f"vector store rebuilt from the stores: {opened.rebuilt}")
            if not store.built(name):
                log(f"the {name} collection's first build: every row up to {day}, once")
            result = sync(
                store, opened, stores.stores(), model, day,
                cap=caps[name], signals=read_signals(stores.stores()),
                progress=Progress(f"{name} vectors", log, unit="rows"),
            )  # fmt: skip
            total = store.count(name)
    except VectorStoreError as exc:
        raise dg.Failure(description=str(exc), allow_retries=False) from exc
    for note in result.notes:
        context.log.info(note)
    return dg.MaterializeResult(
        metadata={
            **result.metadata(),
            "dagster/row_count": total,
            "vectors": total,  # live in this collection after the run
            "model": f"{model.name} ({model.dim}-d)",
            "rebuilt": opened.rebuilt or "no",
            "waited_for_store_s": opened.waited_s,
            "notes": "; ".join(result.notes) or "none",
            "path": dg.MetadataValue.path(str(path)),
        }
    )


def assets(setup: Setup) -> list:
    """This module's assets and checks, built for `setup` (its partitions, clock, settings)."""

    @dg.asset(
        partitions_def=setup.daily,
        group_name=MEMORY,
        kinds={"sqlite"},
        owners=[OWNER],
        pool="memory_db",
        metadata=REPLAY_META,
        retry_policy=days.REPLAY_RETRY,
        check_specs=[
            dg.AssetCheckSpec(name, asset="contact_episodes", description=text)
            for name, text in EPISODE_CHECKS.items()
        ],
    )
    def contact_episodes(
        context: dg.AssetExecutionContext, stores: StoresResource
    ) -> dg.MaterializeResult:
        """The day's episodic memory: every dated receipt about a contact, sealed and audited.

        Source: the append-only `contact_episodes` table in `memory.db` (written by research,
        outreach, inbox, engagement and manual notes; every row carries `source` and
        `confidence`, the time it describes, `created_at`, and when this system recorded it,
        `recorded_at`). Grain: one partition per day, its window the 23:15 tick before to its
        own 23:15 tick; an episode belongs to the window it was recorded in, so a late
        arrival (a mail dated last week) belongs to the night it arrived. Materialising a day
        counts the episodes recorded in its window by type and source and records a seal
        (count, last id, sha256 digest, the window) in `day_seals`, so any later change to a
        sealed day (a forget, a tamper) shows up as a changed digest, and audits it (checks
        below), including that every message sent in the window (`outreach.db`) has its
        episode. A replay: re-running a day at any later time gives the same seal.
        """
        day = days.window(setup, "contact_episodes", days.one_day(context))
        outreach = stores.stores().reader(Store.OUTREACH)  # None: nothing was ever sent
        with (
            stores.connect(Store.MEMORY) as conn,
            closing(outreach) if outreach else nullcontext(),
        ):
            # Stamped with the end of what it covers, not the moment it ran: sealing the
            # window again gives the same row.
            seal = seal_day(conn, day, now=parse_utc(day.end))
            audit = audit_day(conn, day, outreach)
        if seal.changed:
            context.log.warning(f"day {day.key} changed since it was last sealed")
        return dg.MaterializeResult(
            metadata={
                "dagster/row_count": seal.episodes,
                "episodes_sealed": seal.episodes,
                "by_type": seal.by_type,
                "by_source": seal.by_source,
                "last_id": seal.last_id or 0,
                "digest": seal.digest,
                "changed_since_last_seal": seal.changed,
            },
            check_results=_check_results(audit),
        )

    @dg.asset(
        partitions_def=setup.daily,
        group_name=MEMORY,
        kinds={"chromadb"},
        owners=[OWNER],
        pool="vectors_db",
        deps=[contact_episodes],
        metadata=REPLAY_META,
        retry_policy=days.REPLAY_RETRY,
    )
    def episode_vectors(
        context: dg.AssetExecutionContext,
        config: VectorsConfig,
        embedder: Embedder,
        stores: StoresResource,
    ) -> dg.MaterializeResult:
        """Episode vectors: one embedding per episode, for "have we seen this before?".

        Source: the rows of `contact_episodes` (memory.db) recorded in the day's window
        (`recorded_at`; the 23:15 tick before to its own), embedded by the one
        `Embedder` and handed to ChromaDB explicitly. Grain: one vector per episode
        (`episode:<id>`) in the `episodes` collection of `<data dir>/vectors/`, its metadata
        pointing back to the row (ref, day, contact, type, source, confidence, importance);
        no text is stored there. The collection records its model and dimension and refuses
        another's (config `rebuild: true` starts over). A store that is missing or cannot be
        read is rebuilt from memory.db, and the run says so. The first build (every row up to
        its day) happens once, whichever day runs first; every later run embeds only its own
        day's rows. A run that finds the store held by another (that first build) waits and
        says so (`waited_for_store_s`); a long build logs its progress every 10 s. A replay:
        re-materialising a day upserts that day's vectors and nothing else; vectors already
        archived stay archived.
        """
        return _vector_sync(context, setup, stores, embedder, config, EPISODES)

    @dg.asset(
        partitions_def=setup.daily,
        group_name=MEMORY,
        kinds={"chromadb"},
        owners=[OWNER],
        pool="vectors_db",
        deps=["brain_facts", "recall_pages"],
        metadata=REPLAY_META,
        retry_policy=days.REPLAY_RETRY,
    )
    def knowledge_vectors(
        context: dg.AssetExecutionContext,
        config: VectorsConfig,
        embedder: Embedder,
        stores: StoresResource,
    ) -> dg.MaterializeResult:
        """Knowledge vectors: brain facts, decisions and recall pages, for "seen this before?".

        Source: the day's facts and decisions (brain.db) and the recall pages whose
        distillation was recorded in the day's window (recall.db `page_log`), as they are
        published now (`entities`: published pages only, so nothing from a private vault
        folder). Grain: one vector per fact, decision and page in the `knowledge` collection
        of `<data dir>/vectors/`, metadata pointing back to the row; a page that has left
        recall loses its vector (live or archived) on the next run. Models are checked, and
        a missing or unreadable store rebuilt, as for `episode_vectors`. A replay: a day's
        run upserts that day's vectors, and drops those of facts a re-synthesis removed.
        """
        return _vector_sync(context, setup, stores, embedder, config, KNOWLEDGE)

    @days.capture_asset(
        partitions_def=setup.daily,
        group_name=MEMORY,
        kinds={"chromadb"},
        pool="vectors_db",
        deps=[episode_vectors, knowledge_vectors],
    )
    def memory_aging(
        context: dg.AssetExecutionContext, stores: StoresResource
    ) -> Iterator[dg.MaterializeResult]:
        """Memory aging: importance 1-5, tiers, an archive, a 180-day TTL and hard caps.

        Source: every live vector's metadata in `<data dir>/vectors/`, with replies, bounces
        and brain citations read from outreach.db and brain.db. Each vector's importance is
        re-scored by the rule in `core/vectors/aging.py` (type, source, confidence, replies
        and outcomes, citations), its value decays by its tier's half-life, and the least
        valuable move to the `archive` collection, so each live collection stays under its
        cap (`COMPANY_AI_VECTOR_CAP_EPISODES`, `..._KNOWLEDGE`); archived vectors are
        deleted after `COMPANY_AI_VECTOR_ARCHIVE_TTL_DAYS` (180). Only vectors move: no
        episode, fact or page is ever deleted. A capture: ages are counted to the day it
        runs, so it runs for its current day only (a past day is declined and recorded as
        not taken); a missed night is caught up by the next.
        """
        from company_ai.core.vectors import age_store, read_signals

        if days.capture_day(context, setup, "the vector memory's ages as of tonight") is None:
            return
        today = date.fromisoformat(local_day(to_iso(days.clock(context, setup)()), setup.tz))
        path = vectors_dir(stores.data_dir)
        if not stores.chroma_url and not (path / "chroma.sqlite3").is_file():
            yield dg.MaterializeResult(
                metadata={
                    "note": "no vector store yet: nothing to age",
                    **{f"vectors_{name}": 0 for name in (EPISODES, KNOWLEDGE)},
                }
            )
            return
        caps = {EPISODES: setup.settings.vector_cap_episodes}
        caps[KNOWLEDGE] = setup.settings.vector_cap_knowledge
        try:
            with open_existing(
                path, write=True, log=context.log.info, url=stores.chroma_url
            ) as store:
                result = age_store(
                    store, read_signals(stores.stores()), today=today, caps=caps,
                    ttl_days=setup.settings.vector_archive_ttl_days,
                    progress=Progress("aging", context.log.info, unit="vectors"),
                )  # fmt: skip
        except VectorStoreError as exc:
            raise dg.Failure(description=str(exc), allow_retries=False) from exc
        yield dg.MaterializeResult(
            metadata={
                "as_of": today.isoformat(),
                "kept": sum(result.kept.values()),
                # Live vectors per collection, as numbers the UI can plot.
                **{f"vectors_{name}": result.kept.get(name, 0) for name in (EPISODES, KNOWLEDGE)},
                "archived": sum(result.archived.values()),
                "deleted": result.deleted,
                "kept_by_collection": result.kept,
                "archived_by_collection": result.archived,
                "archived_over_cap": result.over_cap,
                "importance_changed": result.rescored,
                "archive_size": result.archive_kept,
                "repaired_half_moves": result.repaired,
                "caps": caps,
            }
        )

    return [contact_episodes, episode_vectors, knowledge_vectors, memory_aging]
