from contextlib import closing, nullcontext

import dagster as dg

from company_ai import days, ledger
from company_ai.constants import BRAIN, OWNER, REPLAY_META
from company_ai.core.brain import ExportError, export_day, export_growth, synthesize_day, write_day
from company_ai.core.store import Store
from company_ai.core.times import parse_utc
from company_ai.resources.folders import OpsFolders
from company_ai.resources.stores import StoresResource
from company_ai.setup import Setup


def _node_id(about: str | None) -> str:
    """A node by id (contact:7, job:x), or nothing when its name is text (page:<title>)."""
    return about if about and about.split(":")[0] in ("contact", "job", "thread") else ""


def assets(setup: Setup) -> list:
    """This module's assets and checks, built for `setup` (its partitions, clock, settings)."""

    @dg.asset(
        partitions_def=setup.daily,
        group_name=BRAIN,
        kinds={"sqlite"},
        owners=[OWNER],
        pool="brain_db",
        deps=["contact_episodes"],
        metadata=REPLAY_META,
        retry_policy=days.REPLAY_RETRY,
    )
    def brain_facts(
        context: dg.AssetExecutionContext, stores: StoresResource
    ) -> dg.MaterializeResult:
        """What the system itself did on a day: facts, decisions and graph edges, each ranked.

        Source: the day's window (the 23:30 tick before to its own 23:30 tick): its Dagster
        run history (jobs, partitions, durations, failures, check results, catch-up
        recoveries; each run as it stood at that tick), the outreach recorded in it (picks and
        why, drafts, quarantines with the claims that failed, sends, refused CRM corrections),
        the replies and engagement recorded in it (`recorded_at`, so a reply dated last week
        that arrived tonight is tonight's), and the vault's changes recorded in it (recall.db
        `page_log`) (`core/brain/facts.py`). Every input is read as it stood at the window's
        end, never as a later change left it. Grain: one day's rows in `brain.db` (`facts`,
        `decisions` with the rule that chose, `edges` between contacts, companies, threads,
        jobs and pages), every row with its day, an importance 1-5 by a documented rule and
        the ids of the rows it came from. A replay: re-materialising a day replaces that day's
        rows and nothing else, and gives the same rows while its inputs are unchanged.
        """
        day = days.one_day(context)
        local = days.window(setup, "brain_facts", day)
        runs = ledger.runs_between(
            context.instance,
            parse_utc(local.start),
            parse_utc(local.end),
            as_of=days.scheduled_until(setup, "brain_facts", day),
            played=setup.settings.played_clock,
        )
        brain_day = synthesize_day(stores.stores(), local, runs)
        with stores.connect(Store.BRAIN) as conn:
            counts = write_day(conn, day, brain_day)
        top = sorted(brain_day.facts, key=lambda f: (-f.importance, f.key))[:5]
        return dg.MaterializeResult(
            metadata={
                **counts,
                "runs_read": len(runs),
                "missing_inputs": ", ".join(brain_day.missing) or "none",
                # Kinds and ids, never a fact's text or a page's title: they name people,
                # and Dagster's event log cannot forget anyone (`company-ai forget`).
                "top_facts": dg.MetadataValue.md(
                    "\n".join(f"- [{f.importance}] {f.kind} {_node_id(f.about)}" for f in top)
                ),
            }
        )

    @dg.asset(
        partitions_def=setup.daily,
        group_name=BRAIN,
        kinds={"markdown"},
        owners=[OWNER],
        deps=[brain_facts],
        metadata=REPLAY_META,
        retry_policy=days.REPLAY_RETRY,
    )
    def memory_export(
        context: dg.AssetExecutionContext, stores: StoresResource, ops_folders: OpsFolders
    ) -> dg.MaterializeResult:
        """The day as plain Markdown a person can open, with links between the files.

        Source: the day's brain facts and decisions (`brain.db`) and the memory, CRM and
        outreach stores. Grain: `<export dir>/<day>/index.md` (facts, decisions, what ran,
        failed and was recovered) and one `contacts/<name>-<id>.md` per contact touched in the
        day's window (the 23:45 tick before to its own: an episode recorded or a message sent
        in it), holding their whole timeline as known at the window's end (rows recorded
        before it), message bodies included.
        A replay: the same inputs give byte-identical files, only changed files are rewritten
        (atomically), and a day's folder never touches another day's. File names are safe
        slugs of the contact's name.
        """
        window = days.window(setup, "memory_export", days.one_day(context))
        try:
            result = export_day(stores.stores(), window, ops_folders.export_dir)
        except ExportError as exc:
            raise dg.Failure(description=str(exc), allow_retries=False) from exc
        return dg.MaterializeResult(
            metadata={
                "folder": dg.MetadataValue.path(str(result.folder)),
                "files": result.files,
                "contacts": result.contacts,
                "written": len(result.written),
                "unchanged": result.unchanged,
                "removed": len(result.removed),
            }
        )

    @dg.asset(
        partitions_def=setup.daily,
        group_name=BRAIN,
        kinds={"pandas", "markdown"},
        owners=[OWNER],
        metadata=REPLAY_META,
        retry_policy=days.REPLAY_RETRY,
    )
    def outreach_growth(
        context: dg.AssetExecutionContext, stores: StoresResource, ops_folders: OpsFolders
    ) -> dg.MaterializeResult:
        """The growth analysis: sent, opened, replied and bounced by week and angle (pandas).

        Source: the messages sent in the last 8 Monday-to-Sunday local weeks up to this
        asset's own 05:30 tick (`outreach.db`), the newest being the week in progress; an
        open or a reply counts when it came before the tick, so a replay gives that
        morning's figures (a bounce has no time and is counted as it stands). Grain: one
        table a day (a row per week for all angles, then one per angle), as Dagster table
        metadata and as `<export dir>/growth/<day>.md`; the headline (last complete week's
        sent, replies and reply rate, and the best angle of the 8 weeks) as numbers. A
        replay: re-materialising a day rewrites that day's file only, with the same bytes.
        """
        # pandas is imported in `growth_frame`, not at load: every run worker would pay for it.
        from company_ai.core.outreach import count_growth, growth_frame, plain_table, to_markdown

        day = days.one_day(context)
        window = days.window(setup, "outreach_growth", day)
        # No store yet: nothing was ever sent, every week is zero, which is the truth.
        conn = stores.stores().reader(Store.OUTREACH)
        with closing(conn) if conn else nullcontext():
            growth = count_growth(conn, window)
        table = growth_frame(growth)
        markdown = to_markdown(table)
        title = f"Outreach growth, the {growth.weeks} weeks to {growth.as_of}"
        try:
            export_growth(ops_folders.export_dir, day, title, markdown)
        except ExportError as exc:
            raise dg.Failure(description=str(exc), allow_retries=False) from exc
        plain = plain_table(table)
        head = growth.headline()
        return dg.MaterializeResult(
            metadata={
                "dagster/row_count": len(plain.rows),
                # The headline as numbers the UI can plot (last complete week; a rate is
                # None when nothing was sent, rather than a made-up 0).
                "week": head.week or "none complete",
                "sent": head.sent,
                "replies": head.replies,
                "reply_rate": head.reply_rate,
                "best_angle": head.best_angle or "none",
                "best_angle_reply_rate": head.best_angle_reply_rate,
                "growth": dg.MetadataValue.table(
                    records=[dg.TableRecord(row) for row in plain.rows],
                    schema=dg.TableSchema(
                        columns=[dg.TableColumn(name, kind) for name, kind in plain.columns]
                    ),
                ),
                "markdown": dg.MetadataValue.md(markdown),
            }
        )

    return [brain_facts, memory_export, outreach_growth]
