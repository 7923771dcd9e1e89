import json

import pytest

from company_ai.core.vault import Page, distill_staging, offline_page, stage_vault
from company_ai.core.vault.distill import page_verdict
from tests.conftest import fixed_clock


def offline(title, path, text):
    return offline_page(path, text)


def run(stores, vault, staging, day="2026-11-29", distill=offline, logs=None):
    stage_vault(vault, staging, day=day)
    with stores.connect("recall") as conn:
        return distill_staging(
            conn, str(staging), day=day, distill=distill, source="model:offline",
            log=(logs.append if logs is not None else lambda _: None), clock=fixed_clock(),
        )  # fmt: skip


def test_every_staged_note_becomes_one_page_of_the_same_shape(stores, vault, tmp_path):
    result = run(stores, vault, tmp_path / "staging")
    assert len(result.distilled) == 21 and result.entities == 21 and not result.withheld
    with stores.connect("recall") as conn:
        types = dict(conn.execute("SELECT title, type FROM entities").fetchall())
        ada = conn.execute("SELECT * FROM entities WHERE title = 'Ada Okafor'").fetchone()
        categories = {r[0] for r in conn.execute("SELECT category FROM observations")}
        relations = {r[0] for r in conn.execute("SELECT relation FROM relations")}
    assert types["Ada Okafor"] == "person" and types["Billing Platform"] == "anchor"
    assert types["Invoice Migration"] == "thread" and types["Pricing Policy"] == "context"
    assert types["Offsite Ideas"] == "note"
    assert categories == {"context", "decision", "pattern", "constraint", "status", "goal"}
    assert relations == {"part_of", "depends_on", "relates_to", "maintains"}
    markdown = ada["markdown"]
    for line in ('title: "Ada Okafor"', 'type: "person"', 'derived_from: ["people/ada-okafor.md"]',
                 'distilled: "2026-11-29"', "tags: ", "## Observations",
                 "- [status] Leading the Invoice Migration until it ships.",
                 "- maintains [[Billing Platform]]"):  # fmt: skip
        assert line in markdown
    assert ada["recall"].startswith("Ada Okafor is our head of engineering.")
    assert ada["note_touched"] == "2026-11-20"


def test_a_page_is_updated_in_place_never_duplicated(stores, vault, tmp_path):
    staging = tmp_path / "staging"
    run(stores, vault, staging)
    again = run(stores, vault, staging)
    assert again.distilled == [] and again.unchanged == 21
    note = vault / "people" / "ben-harlow.md"
    note.write_text(note.read_text().replace("Leeds", "York"))
    (vault / "people" / "ben-harlow.md").rename(vault / "people" / "harlow.md")  # moved too
    edited = run(stores, vault, staging, day="2026-11-30")
    assert edited.distilled == ["Ben Harlow"]
    with stores.connect("recall") as conn:
        rows = conn.execute("SELECT * FROM pages WHERE title = 'Ben Harlow'").fetchall()
        assert len(rows) == 1 and rows[0]["distilled"] == "2026-11-30"
        assert "York" in rows[0]["markdown"] and rows[0]["note_path"] == "people/harlow.md"
        assert conn.execute("SELECT count(*) FROM pages").fetchone()[0] == 21


def test_a_deleted_note_disappears_from_recall(stores, vault, tmp_path):
    staging = tmp_path / "staging"
    run(stores, vault, staging)
    (vault / "notes" / "offsite-ideas.md").unlink()
    result = run(stores, vault, staging)
    assert result.removed == ["Offsite Ideas"] and result.entities == 20
    with stores.connect("recall") as conn:
        titles = {r[0] for r in conn.execute("SELECT title FROM entities")}
        assert "Offsite Ideas" not in titles
        assert conn.execute("SELECT count(*) FROM pages").fetchone()[0] == 20


def test_a_page_with_an_invented_number_or_name_is_not_published(stores, vault, tmp_path):
    def fabricating(title, path, text):
        page = offline_page(path, text)
        if title == "Signalcrest":
            page.recall += " They pay 99,999 pounds and Jeff Bezos is on the board."
        return page

    logs = []
    result = run(stores, vault, tmp_path / "staging", distill=fabricating, logs=logs)
    assert set(result.withheld) == {"Signalcrest"}
    claims = " | ".join(result.withheld["Signalcrest"])
    assert "99,999" in claims and "Jeff Bezos" in claims, claims
    assert result.entities == 20
    with stores.connect("recall") as conn:
        row = conn.execute("SELECT published, problems FROM pages WHERE title = 'Signalcrest'")
        published, problems = row.fetchone()
        assert published == 0 and json.loads(problems) == result.withheld["Signalcrest"]
    assert any(line.startswith("withheld a page: ") for line in logs)
    # The log is kept for good: no title and no claim (a name, here) is in it.
    assert not any("Signalcrest" in line or "Bezos" in line for line in logs)


def test_a_model_failure_costs_one_page_not_the_run(stores, vault, tmp_path):
    def flaky(title, path, text):
        if title == "Dev Patel":
            raise RuntimeError("model timed out")
        return offline_page(path, text)

    result = run(stores, vault, tmp_path / "staging", distill=flaky)
    assert result.failed == {"Dev Patel": "RuntimeError: model timed out"}
    assert result.entities == 20
    again = run(stores, vault, tmp_path / "staging")  # the next run picks it up
    assert again.distilled == ["Dev Patel"] and again.entities == 21


def test_the_page_is_basic_memory_safe_prose():
    text = "---\ntitle: X\n---\n# X\n\nX is part of [[Y]] #urgent (maybe)\n\n- a note (draft)\n"
    page = offline_page("notes/x.md", text)
    assert "[[" not in page.recall and "#urgent" not in page.recall
    assert page.relations[0].relation == "part_of" and page.relations[0].target == "Y"
    assert not page.observations[0].text.endswith(")")
    assert Page.model_validate(page.model_dump()) == page


def test_the_page_verdict_passes_what_the_notes_support():
    source = "Signalcrest renews on 31 January for 48,000 pounds. Chloe Marsh negotiates."
    page = "# Signalcrest\n\nThe renewal is worth 48,000 pounds. Chloe Marsh negotiates it."
    assert page_verdict(page, source).passed


@pytest.mark.parametrize(
    ("page", "claim"),
    [
        ("The renewal is worth 50,000 pounds.", "money 50,000 pounds"),
        ("It is negotiated by Chloe Smith.", "other Smith"),
        ("Renewal moved to 14 February.", "date 14 February"),
    ],
)
def test_the_page_verdict_fails_an_invented_number_or_name(page, claim):
    source = "Signalcrest renews on 31 January for 48,000 pounds. Chloe Marsh negotiates."
    verdict = page_verdict(page, source)
    assert not verdict.passed and claim in verdict.labels()
