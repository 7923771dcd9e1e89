import json
import random
import sqlite3
from dataclasses import replace

import pytest

from company_ai.core.brain import RULE_IMPORTANCE, synthesize_day, top_items, write_day
from company_ai.core.brain.rows import BrainDay, Fact, bound_importance, read_day, rule_importance
from company_ai.core.runs import CheckInfo, RunInfo
from company_ai.core.store import Stores, transaction
from company_ai.core.store.db import Connection as StoreConnection
from company_ai.core.times import Day
from tests.core.brain_inputs import DAY, day_runs, seed_day

OTHER_DAY = "2026-11-28"


@pytest.fixture
def seeded(data):
    stores = Stores(data)
    return stores, seed_day(stores)


def by_key(rows):
    return {r.key: r for r in rows}


def test_runs_failures_checks_recoveries_and_a_retired_job_are_reported(stores):
    brain = synthesize_day(stores, Day.of(DAY, "UTC"), day_runs())
    facts, decisions = by_key(brain.facts), by_key(brain.decisions)
    ok, failed = facts["run:aaaaaaaa-1"], facts["run:bbbbbbbb-2"]
    assert (ok.kind, ok.importance, ok.about) == ("run_ok", 1, "job:outreach_job")
    assert "outreach_job 2026-11-29: SUCCESS in 1 min 12 s" in ok.text
    assert (failed.kind, failed.importance) == ("run_failed", 5)
    assert failed.text.endswith("in 3.0 s (run bbbbbbbb): contact_episodes: database is locked")
    assert failed.sources == ("dagster.run:bbbbbbbb-2",)
    checks = {k: f for k, f in facts.items() if k.startswith("check:")}
    assert {(f.kind, f.importance) for f in checks.values()} == {
        ("check_warn", 3),
        ("check_passed", 1),
        ("check_error", 5),
    }
    recovered = decisions["catchup:cccccccc-3"]
    assert (recovered.kind, recovered.importance) == ("recovered", 3)
    assert "catch-up attempt 1" in recovered.what and "catch-up sensor" in recovered.rule
    # A job that no longer exists is only a name in the run history: still reported.
    assert facts["run:dddddddd-4"].text.startswith("retired_job 2026-11-29: SUCCESS")
    edges = {(e.src, e.relation, e.dst) for e in brain.edges}
    assert ("job:retired_job", "ran_for", f"partition:{DAY}") in edges
    assert ("job:memory_job", "failed_for", f"partition:{DAY}") in edges
    assert ("job:vault_job", "recovered", f"partition:{DAY}") in edges
    assert facts["run:eeeeeeee-5"].kind == "run_unfinished"  # no partition: no edge
    assert not any(e.src == "job:digest_job" for e in brain.edges)


def test_a_job_run_twice_for_a_day_is_one_edge_with_both_runs_as_sources(stores):
    again = RunInfo("ffffffff-6", "outreach_job", DAY, "SUCCESS")
    brain = synthesize_day(stores, Day.of(DAY, "UTC"), [*day_runs(), again])
    (edge,) = [e for e in brain.edges if e.src == "job:outreach_job"]
    assert (edge.relation, edge.importance) == ("ran_for", 1)
    assert edge.sources == ("dagster.run:aaaaaaaa-1", "dagster.run:ffffffff-6")
    assert {"run:aaaaaaaa-1", "run:ffffffff-6"} <= set(by_key(brain.facts))


def test_a_day_with_no_runs_and_no_stores_is_empty_and_says_what_was_missing(tmp_path):
    brain = synthesize_day(Stores(tmp_path / "fresh"), Day.of(DAY, "Europe/London"), [])
    assert brain.counts() == {"facts": 0, "decisions": 0, "edges": 0}
    assert any("no outreach store" in m for m in brain.missing)
    assert any("no recall store" in m for m in brain.missing)


@pytest.mark.sqlite_only("it makes empty SQLite store files by hand")
def test_stores_without_tables_give_a_partial_day_not_a_crash(tmp_path):
    stores = Stores(tmp_path / "data")
    stores.data_dir.mkdir()
    for domain in ("crm", "memory", "outreach", "recall"):
        sqlite3.connect(
            factory=StoreConnection, database=stores.path(domain)
        ).close()  # a store file with no tables
    brain = synthesize_day(stores, Day.of(DAY, "UTC"), day_runs()[:1])
    assert [f.key for f in brain.facts if f.kind.startswith("run")] == ["run:aaaaaaaa-1"]
    assert {"no contact_episodes table yet", "no drafts table yet", "no page_log table yet"} <= set(
        brain.missing
    )


def test_a_quarantined_drafts_reason_quotes_each_claim_in_its_sentence(seeded):
    stores, s = seeded
    body = "Hi Dana,\n\nYour team grew 40% last quarter.\n"
    claims = [{"field": "body", "text": "40%", "kind": "percent", "start": 25, "end": 28}]
    with stores.connect("outreach") as outreach, transaction(outreach):
        outreach.execute(
            "UPDATE drafts SET body = $1, unsupported = $2 WHERE id = $3",
            (body, json.dumps(claims), s.quarantined_draft),
        )
    brain = synthesize_day(stores, Day.of(DAY, "UTC"), [])
    rule = by_key(brain.decisions)[f"quarantine:{s.quarantined_draft}"].rule
    assert rule.endswith(
        "does not support: percent '40%' in the body"
        " (“Your team grew «40%» last quarter.”: no source gives 40% of anything)"
    )
    with stores.connect("outreach") as outreach, transaction(outreach):
        outreach.execute(
            "UPDATE drafts SET unsupported = 'not json' WHERE id = $1", (s.quarantined_draft,)
        )
    brain = synthesize_day(stores, Day.of(DAY, "UTC"), [])
    rule = by_key(brain.decisions)[f"quarantine:{s.quarantined_draft}"].rule
    assert rule.endswith("(the stored claims are unreadable)")


def test_outreach_picks_skips_writebacks_quarantines_and_sends(seeded):
    stores, s = seeded
    brain = synthesize_day(stores, Day.of(DAY, "UTC"), [])
    decisions, facts = by_key(brain.decisions), by_key(brain.facts)
    picked = decisions[f"pick:{s.researched}"]
    assert (picked.kind, picked.importance) == ("picked", 2)
    assert picked.what.endswith("at rank 1") and "warmest first," in picked.rule
    assert "now)" not in picked.rule, "a replay never names a figure the CRM has moved since"
    assert picked.sources == (f"outreach.research_picks:{DAY}:{s.researched}",)
    skipped = decisions[f"pick:{s.skipped}"]
    assert skipped.kind == "pick_skipped" and "no company page for nowhere.example" in skipped.rule
    refused = decisions[f"writeback-refused:{s.researched}"]
    assert (refused.importance, "email='x@y.z'" in refused.what) == (3, True)
    assert "title='COO'" in decisions[f"writeback:{s.researched}"].what
    assert f"writeback:{s.quarantined}" not in decisions  # nothing applied, nothing said
    quarantined = decisions[f"quarantine:{s.quarantined_draft}"]
    assert quarantined.importance == 3 and "number '40%' in the body" in quarantined.rule
    sent = decisions[f"sent:{s.sent_draft}"]
    assert sent.importance == 4
    assert sent.sources == (f"outreach.drafts:{s.sent_draft}", f"outreach.messages:{s.message}")
    assert "the body contains HTML" in decisions[f"skip:{s.sent_draft + 2}"].rule
    assert facts[f"draft:{s.sent_draft}"].kind == "drafted"
    edges = {(e.src, e.relation, e.dst): e for e in brain.edges}
    assert (
        edges[(f"contact:{s.researched}", "in_thread", f"thread:brain-{s.researched}")].importance
        == 4
    )
    works_at = [e for e in edges if e[0] == f"contact:{s.researched}" and e[1] == "works_at"]
    assert len(works_at) == 1 and works_at[0][2].startswith("company:")
    assert edges[works_at[0]].importance == 4  # the contact's most important row: the send


def test_replies_engagement_and_vault_changes_of_the_day(seeded):
    stores, s = seeded
    brain = synthesize_day(stores, Day.of(DAY, "UTC"), [])
    facts = by_key(brain.facts)
    replies = [f for f in brain.facts if f.kind == "reply" and f.about == f"contact:{s.replier}"]
    assert len(replies) == 1 and replies[0].importance == 4
    assert replies[0].text.endswith("Replied: interested, asked for pricing.")
    engaged = facts[f"engagement:{s.replier}"]
    assert "2 times" in engaged.text and len(engaged.sources) == 2
    edges = {(e.src, e.relation, e.dst) for e in brain.edges}
    assert (f"contact:{s.replier}", "replied_in", f"thread:{s.reply_thread}") in edges
    assert facts["page:Harbor Logistics"].kind == "page_distilled"
    assert facts["page:Offsite ideas"].importance == 3
    assert ("page:Harbor Logistics", "relates_to", "page:Ada Okafor") in edges
    assert facts["deleted:notes/gone.md"].importance == 3
    assert "deleted:notes/long-gone.md" not in facts  # deleted on another day
    # Only the day's own episodes: the note recorded the next day is not here.
    assert not any("Recorded after the day" in f.text for f in brain.facts)


def test_synthesis_is_a_pure_function_of_its_inputs(seeded):
    stores, _ = seeded
    runs = day_runs()
    first = synthesize_day(stores, Day.of(DAY, "UTC"), runs)
    random.Random(3).shuffle(runs)
    assert synthesize_day(stores, Day.of(DAY, "UTC"), runs) == first


def test_write_day_replaces_that_day_and_leaves_other_days_alone(seeded):
    stores, _ = seeded
    with stores.connect("brain") as conn:
        write_day(conn, OTHER_DAY, BrainDay(OTHER_DAY, facts=(fact("kept", 2),)))
        counts = write_day(conn, DAY, synthesize_day(stores, Day.of(DAY, "UTC"), day_runs()))
        assert counts["facts"] > 5 and counts["edges"] > 5
        write_day(conn, DAY, synthesize_day(stores, Day.of(DAY, "UTC"), day_runs()[:1]))  # again
        again = read_day(conn, DAY)
        assert "run:bbbbbbbb-2" not in by_key(again.facts)  # the old day's rows are gone
        assert "run:aaaaaaaa-1" in by_key(again.facts)
        assert again.facts == synthesize_day(stores, Day.of(DAY, "UTC"), day_runs()[:1]).facts
        assert read_day(conn, OTHER_DAY).facts == (fact("kept", 2),)


def fact(key, importance):
    return Fact(key, "run_ok", f"fact {key}", importance, ("dagster.run:x",), "job:x")


def test_write_day_is_all_or_nothing_and_checks_its_day(stores):
    with stores.connect("brain") as conn:
        write_day(conn, DAY, BrainDay(DAY, facts=(fact("old", 2),)))
        broken = BrainDay(DAY, facts=(fact("new", 3), fact("bad", 9)))  # 9 is outside 1-5
        with pytest.raises(conn.IntegrityError):
            write_day(conn, DAY, broken)
        assert [f.key for f in read_day(conn, DAY).facts] == ["old"]
        with pytest.raises(ValueError, match="is of 2026-11-29, not of 2026-11-28"):
            write_day(conn, OTHER_DAY, BrainDay(DAY, facts=(fact("x", 1),)))
        assert read_day(conn, OTHER_DAY).facts == ()


@pytest.mark.parametrize("day", ["2026-13-01", "../../etc", "", "2026-1-1", "2026-11-29x"])
def test_a_day_that_is_not_a_day_is_refused(stores, day):
    with pytest.raises(ValueError, match="not a day"):
        synthesize_day(stores, Day.of(day, "UTC"), [])
    with stores.connect("brain") as conn, pytest.raises(ValueError, match="not a day"):
        top_items(conn, day, 5)


def test_top_items_are_the_most_important_with_decisions_first_on_a_tie(seeded):
    stores, s = seeded
    with stores.connect("brain") as conn:
        write_day(conn, DAY, synthesize_day(stores, Day.of(DAY, "UTC"), day_runs()))
        for other in (OTHER_DAY, "2026-11-30"):
            write_day(conn, other, BrainDay(other, facts=(fact("elsewhere", 5),)))
        top = top_items(conn, DAY, 4)
    assert [(t.importance, t.type, t.key) for t in top[:3]] == [
        (5, "fact", "check:bbbbbbbb-2:contact_episodes:sealed"),
        (5, "fact", "run:bbbbbbbb-2"),
        (4, "decision", f"sent:{s.sent_draft}"),
    ]
    assert (top[3].importance, top[3].kind) == (4, "reply")
    assert "(because a draft that passed" in top[2].line()
    assert all(t.key != "elsewhere" for t in top)


def test_top_items_of_a_brain_without_tables_is_empty():
    assert top_items(sqlite3.connect(factory=StoreConnection, database=":memory:"), DAY, 10) == []


@pytest.mark.parametrize(
    ("rule", "proposed", "bounded"),
    [(3, 5, 4), (3, 1, 2), (3, 3, 3), (3, None, 3), (5, 9, 5), (5, 4, 4), (1, -7, 1), (1, 5, 2)],
)
def test_a_proposal_moves_the_rule_by_one_step_at_most_within_1_to_5(rule, proposed, bounded):
    assert bound_importance(rule, proposed) == bounded


@pytest.mark.parametrize(("rule", "proposed"), [(0, 3), (6, 3), (3, "high"), (3, True), (3, 4.5)])
def test_a_bad_importance_is_refused(rule, proposed):
    with pytest.raises(ValueError, match="importance"):
        bound_importance(rule, proposed)


def test_a_models_proposals_are_bounded_by_code(stores):
    proposals = {"run:aaaaaaaa-1": 5, "run:bbbbbbbb-2": 1, "catchup:cccccccc-3": 3, "nope": 5}
    brain = synthesize_day(stores, Day.of(DAY, "UTC"), day_runs(), proposals)
    facts, decisions = by_key(brain.facts), by_key(brain.decisions)
    assert facts["run:aaaaaaaa-1"].importance == 2  # a routine run, proposed 5
    assert facts["run:bbbbbbbb-2"].importance == 4  # a failure, proposed 1
    assert decisions["catchup:cccccccc-3"].importance == 3
    assert facts["run:dddddddd-4"].importance == 1  # no proposal: the rule's value


def test_the_importance_rule_orders_failures_over_sends_over_quarantines_over_routine():
    order = ["run_failed", "sent", "reply", "quarantined", "writeback_refused", "picked", "run_ok"]
    assert [rule_importance(k) for k in order] == [5, 4, 4, 3, 3, 2, 1]
    assert set(RULE_IMPORTANCE.values()) == {1, 2, 3, 4, 5}
    with pytest.raises(ValueError, match="no importance rule"):
        rule_importance("gossip")


def test_run_info_keeps_its_old_shape_and_checks_say_warn_or_error():
    old = RunInfo("r1234567", "memory_job", DAY, "FAILURE", None, "boom")
    assert (old.error, old.started_at, old.ended_at, old.checks) == ("boom", None, None, ())
    assert replace(old, checks=(CheckInfo("a", "b", True, "WARN"),)).checks[0].passed
    with pytest.raises(ValueError, match="severity 'FATAL'"):
        CheckInfo("a", "b", False, "FATAL")
