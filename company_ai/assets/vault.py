"""The vault night: staging, recall pages and the recall index, three assets in one step.

One `multi_asset` (`vault_night`), so a night pays Dagster's per-step cost once, not three
times (BENCHMARKS.md, issue 15); it can be subset, so each asset still materialises on its
own (a replay of `recall_pages` for a day, say). Each asset's description below is the
docstring of the function that makes it.
"""

import inspect
from collections.abc import Iterator
from typing import Any

import dagster as dg

from company_ai import days
from company_ai.constants import CAPTURE_META, OWNER, REPLAY_META, VAULT
from company_ai.core.crm import Tombstones
from company_ai.core.progress import Progress
from company_ai.core.store import Store
from company_ai.core.vault import (
    SYSTEM_PROMPT,
    Page,
    distill_staging,
    offline_page,
    stage_vault,
    staging_dir,
)
from company_ai.refusals import refused_nothing, refused_nothing_spec
from company_ai.resources.embedder import Embedder
from company_ai.resources.llm import LLMResource
from company_ai.resources.stores import StoresResource
from company_ai.resources.vault import VaultResource
from company_ai.setup import Setup

STAGING, PAGES, INDEX = "vault_staging", "recall_pages", "recall_index"
SUPPORTED = "published_pages_are_supported_by_their_notes"  # blocks the index when it fails


def _staged_day(context: dg.AssetExecutionContext, asset: str) -> str | None:
    """The partition whose staging this run derives from, or None when a later staging has
    superseded it (the pages already reflect that one: a replay of this day changes
    nothing). Refuses a day whose staging was never captured."""
    day = days.one_day(context, asset)
    staged = context.instance.get_materialized_partitions(dg.AssetKey(STAGING))
    if day in staged and day == max(staged):
        return day
    if any(later > day for later in staged):
        context.log.info(f"{day}: the staging of {max(staged)} has superseded it; nothing to redo")
        return None
    raise dg.Failure(
        description=(
            f"the vault's staging of {day} was never captured (vault_staging is a capture: it "
            "runs on its own day only), so there is nothing to derive pages from for that day. "
            "The next night's vault_job stages the vault as it is then and brings the pages "
            "up to date; nothing was changed."
        ),
        allow_retries=False,
    )


SUPERSEDED: dict[str, Any] = {
    "superseded": True,
    "note": "a later staging holds the vault; nothing redone",
}


class VaultNightConfig(dg.Config):
    # recall_pages: at most this many model calls in one run (0: no cap); the rest wait for
    # the next run, and every finished page is already committed (a checkpoint per page).
    max_pages: int = 0
    # recall_index: drop every vector first and embed every page again.
    rebuild: bool = False


WITHHELD_PAGES = "recall.db: SELECT title, problems FROM pages WHERE published = 0"

CHECKS = [
    refused_nothing_spec(
        STAGING,
        "Warns when a note was refused in the latest run: named with its reason "
        "(unreadable, not UTF-8, binary, too big, broken or aliased front matter, a link into "
        "a private folder), or counted by folder when it was private at the last run (a "
        "renamed private folder). A refused note is not staged; one staged before keeps its "
        "last good copy, and the next run tries it again.",
    ),
    dg.AssetCheckSpec(
        SUPPORTED,
        asset=PAGES,
        blocking=True,
        description="Every number and name on every published page is in its note.",
    ),
    dg.AssetCheckSpec(
        "no_page_was_withheld",
        asset=PAGES,
        description="Warns when a distilled page failed the fabrication check.",
    ),
]


def assets(setup: Setup) -> list:
    """This module's assets and checks, built for `setup` (its partitions, clock, settings)."""

    def vault_staging(
        context: dg.AssetExecutionContext, day: str, vault: VaultResource, stores: StoresResource
    ) -> dg.MaterializeResult:
        """The vault's publishable notes, staged: the only copy of the vault anything else reads.

        Source: the owner's Markdown vault (`COMPANY_AI_VAULT_DIR`). Deterministic gate: private
        folders (`COMPANY_AI_VAULT_PRIVATE_FOLDERS`, any depth, everything under them) are
        dropped before anything is read, and so are hidden folders (`.trash/`, `.obsidian/`;
        `COMPANY_AI_VAULT_INCLUDE_HIDDEN_FOLDERS`); a renamed or moved private folder is
        recognised and refused (named by folder only); symlinks out of the vault, named pipes,
        binary, non-UTF-8 and enormous files, broken front matter and copies of private notes
        are refused with a reason, and the rest go on. Grain: one note per file; a sha256
        manifest stages only new or changed notes and records deletions. Lives in
        `<data dir>/vault_staging/`. A capture: it copies the vault as it is when it runs, so
        it runs for its current day only; a past day is declined and recorded as not taken
        (and the run's pages and index are left as they are).
        """
        result = stage_vault(
            vault.root(),
            staging_dir(stores.data_dir),
            private_folders=tuple(vault.private_folders),
            max_note_bytes=vault.max_note_bytes,
            include_hidden_folders=vault.include_hidden_folders,
            day=day,
            log=context.log.info,
            forgotten=Tombstones.load(stores.data_dir),
        )
        reasons = dict(list(result.rejected.items())[:100])
        formerly_private = sum(result.formerly_private.values())
        refused = len(result.rejected) + formerly_private
        folders = {
            folder: f"{n} notes that were private at the last run (a renamed private folder?)"
            for folder, n in sorted(result.formerly_private.items())
        }
        return dg.MaterializeResult(
            asset_key=STAGING,
            metadata={
                "items_read": result.published + refused + result.held_forgotten,
                "items_refused": refused,
                "staged": len(result.staged),
                "unchanged": result.unchanged,
                "deleted": len(result.deleted),
                "rejected": len(result.rejected),
                "refused_notes": reasons,
                "formerly_private": formerly_private,
                "private_skipped": result.private_skipped,
                "hidden_folders": result.hidden_folders,
                "ignored_files": result.ignored,
                "published_notes": result.published,
                "held_forgotten": result.held_forgotten,
            },
            check_results=[
                refused_nothing(
                    STAGING,
                    reasons | folders,
                    refused=refused,
                    formerly_private_notes=formerly_private,
                    folders=sorted(result.formerly_private),
                )
            ],
        )

    def recall_pages(
        context: dg.AssetExecutionContext,
        day: str | None,
        config: VaultNightConfig,
        llm: LLMResource,
        stores: StoresResource,
    ) -> dg.MaterializeResult:
        """Recall pages: one read-only page per staged note, distilled by the language model.

        Source: the staging folder only (never the vault). Grain: one page per title, updated
        in place (idempotent by title): type, tags, a recall paragraph for a reader with no
        context, tagged observations and typed relations, as Basic-Memory-compatible Markdown
        with the note it was derived from and the day it was distilled. A page with a number
        or name not in its note is not published. Work proportional to change: only notes
        whose staged content, path or title changed are read and distilled (and every note
        once when the distiller's version changes); only their entities are rewritten, and
        deleted notes leave recall; a night with nothing newly staged compares nothing. Lives
        in `recall.db` (`pages`, `entities`). A replay of its day's staging: a day whose
        staging a later one superseded changes nothing, and a day whose staging was never
        captured is refused. Config `max_pages` caps one run's model calls.
        """
        if day is None:
            return dg.MaterializeResult(
                asset_key=PAGES,
                metadata=SUPERSEDED,
                check_results=[
                    dg.AssetCheckResult(
                        asset_key=PAGES, check_name=spec.name, passed=True, metadata=SUPERSEDED
                    )
                    for spec in CHECKS
                    if spec.asset_key.to_user_string() == PAGES
                ],
            )

        def distill(title: str, path: str, text: str) -> Page:
            return llm.structured(
                system=SYSTEM_PROMPT,
                prompt=f"Title: {title}\nPath: {path}\n\n{text}",
                schema=Page,
                offline=lambda: offline_page(path, text),
            )

        staging = staging_dir(stores.data_dir)
        with stores.connect(Store.RECALL) as conn:
            result = distill_staging(
                conn,
                str(staging),
                day=day,
                distill=distill,
                source=llm.source,
                clock=days.clock(context, setup),
                max_pages=config.max_pages,
                log=context.log.info,
                progress=Progress("distilling", context.log.info, unit="notes"),
            )
        unsupported = result.unsupported
        return dg.MaterializeResult(
            asset_key=PAGES,
            metadata={
                "distilled": len(result.distilled),
                "unchanged": result.unchanged,
                "notes_read": result.notes_read,
                "entities_written": len(result.entities_written),
                "entities_redated": result.retouched,
                "withheld": len(result.withheld),
                "model_failures": len(result.failed),
                "removed": len(result.removed),
                "deferred": result.deferred,
                "entities": result.entities,
                "pages": result.entities,  # the recall pages recall reads now
            },
            check_results=[
                dg.AssetCheckResult(
                    asset_key=PAGES,
                    check_name=SUPPORTED,
                    passed=not unsupported,
                    # Counts, never titles: a title can be a person's name, and Dagster's
                    # event log cannot forget anyone (`company-ai forget`).
                    metadata={"offenders": len(unsupported), "where": WITHHELD_PAGES},
                ),
                dg.AssetCheckResult(
                    asset_key=PAGES,
                    check_name="no_page_was_withheld",
                    passed=not result.withheld,
                    severity=dg.AssetCheckSeverity.WARN,
                    metadata={"withheld": len(result.withheld), "where": WITHHELD_PAGES},
                ),
            ],
        )

    def recall_index(
        context: dg.AssetExecutionContext,
        day: str | None,
        config: VaultNightConfig,
        embedder: Embedder,
        stores: StoresResource,
    ) -> dg.MaterializeResult:
        """The recall search index: full text (FTS5, bm25) and dense vectors over the pages.

        Source: the `entities` table of `recall.db`. Grain: one search document per entity
        (title, recall paragraph, observations, relations); only the documents of entities
        written since the last index are rewritten (full-text row and vector), and deleted
        pages leave the index; an index already in line with the pages compares nothing.
        Vectors are cached by text hash, so only new text is embedded, shortest first in
        batches of one length. The embedding model's name and dimension are recorded; an
        index of another model's vectors is re-embedded whole, and says so (config `rebuild`
        re-embeds every page on purpose). Lives in `recall.db` (`search_docs`, `search_fts`,
        `search_vectors`). A replay of its day's pages, like `recall_pages`.
        """
        if day is None:
            return dg.MaterializeResult(asset_key=INDEX, metadata=SUPERSEDED)
        from company_ai.core.recall import count_stale, index_entities

        now, max_age = days.clock(context, setup)(), setup.settings.recall_stale_days
        with stores.connect(Store.RECALL) as conn:
            summary = index_entities(
                conn, embedder.lazy(), rebuild=config.rebuild, log=context.log.info,
                progress=Progress("indexing", context.log.info, unit="documents"),
            )  # fmt: skip
            stale = count_stale(conn, now, max_age)
        return dg.MaterializeResult(
            asset_key=INDEX,
            metadata={
                "dagster/row_count": summary["documents"],
                "pages": summary["documents"],  # pages in the index
                "rewritten": summary["rewritten"],
                "removed": summary["removed"],
                "embedded": summary["embedded"],
                "pages_per_s": summary["pages_per_s"] or 0.0,
                "reembedded_from": summary.get("reembedded_from", ""),
                "model": summary["model"],
                # A count only: titles can be people's names (`company-ai stale` lists them).
                "stale_pages": stale,
            },
        )

    def spec(make, meta: dict, **kwargs) -> dg.AssetSpec:
        return dg.AssetSpec(
            make.__name__, description=inspect.getdoc(make), group_name=VAULT,
            owners=[OWNER], metadata=meta, **kwargs,
        )  # fmt: skip

    @dg.multi_asset(
        name="vault_night",
        specs=[
            spec(vault_staging, CAPTURE_META, kinds={"python", "markdown"}),
            spec(recall_pages, REPLAY_META, kinds={"sqlite", "markdown"}, deps=[STAGING]),
            spec(recall_index, REPLAY_META, kinds={"sqlite"}, deps=[PAGES]),
        ],
        check_specs=CHECKS,
        partitions_def=setup.daily,
        can_subset=True,
        pool="recall_db",
    )
    def vault_night(
        context: dg.AssetExecutionContext,
        config: VaultNightConfig,
        vault: VaultResource,
        llm: LLMResource,
        embedder: Embedder,
        stores: StoresResource,
    ) -> Iterator[dg.MaterializeResult]:
        """The vault night in one step: staging, then pages, then the index (those selected)."""
        selected = {key.to_user_string() for key in context.selected_asset_keys}
        checks = context.selected_asset_check_keys

        def only_selected(result: dg.MaterializeResult) -> dg.MaterializeResult:
            key = dg.AssetKey.from_coercible(result.asset_key or STAGING)
            return dg.MaterializeResult(
                asset_key=key,
                metadata=result.metadata,
                check_results=[
                    check
                    for check in result.check_results or []
                    if dg.AssetCheckKey(key, check.check_name or "") in checks
                ],
            )

        if STAGING in selected:
            day: str | None = days.capture_day(context, setup, "the vault as it is", STAGING)
            if day is None:
                return  # declined: nothing staged, so the pages and index have nothing new
            yield only_selected(vault_staging(context, day, vault, stores))
            # staged just now: the pages derive from it
        else:
            day = _staged_day(context, PAGES if PAGES in selected else INDEX)
        if PAGES in selected:
            pages = recall_pages(context, day, config, llm, stores)
            yield only_selected(pages)
            blocked = any(
                not c.passed for c in pages.check_results or [] if c.check_name == SUPPORTED
            )
            if blocked and INDEX in selected:
                # The check blocks: what it failed on must not become searchable.
                raise dg.Failure(
                    description=(
                        f"recall_index was not updated: the blocking check {SUPPORTED} failed, "
                        "so pages that claim what their notes do not say stay out of search"
                    ),
                    allow_retries=False,
                )
        if INDEX in selected:
            yield only_selected(recall_index(context, day, config, embedder, stores))

    return [vault_night]
