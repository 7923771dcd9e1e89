import os
import re
import shutil
import subprocess
import sys
import tempfile
import textwrap
import unicodedata
from pathlib import Path

import pytest

from company_ai.core.brain import ExportError, export_day, export_growth, synthesize_day, write_day
from company_ai.core.brain.export import (
    MAX_SLUG_BYTES,
    WINDOWS_RESERVED,
    contact_file,
    fenced,
    inline,
    slug,
)
from company_ai.core.store import Stores
from company_ai.core.times import Day
from company_ai.core.vault import distill_staging, offline_page, stage_vault, staging_dir
from tests.conftest import PRIVATE_CANARY, copy_data_dir, database_for, fixed_clock
from tests.core.brain_inputs import DAY, NEXT_DAY, day_runs, rename, seed_day
from tests.hostile.canary import find_canary

NASTY_NAMES = [
    "CON",
    "nul",
    "../../etc/passwd",
    "",
    "   ",
    "Zoë\x00 Müller\n# *bold* | [x](y) <b>",
    "李小龙",
    "\u202eevil.exe",
    "a" * 400,
    "C:\\Windows\\system32",
    "...",
]


@pytest.fixture
def seeded(data):
    stores = Stores(data)
    seeded = seed_day(stores)
    with stores.connect("brain") as brain:
        write_day(brain, DAY, synthesize_day(stores, Day.of(DAY, "UTC"), day_runs()))
    return stores, seeded


def tree(folder: Path) -> dict[str, bytes]:
    return {
        p.relative_to(folder).as_posix(): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def test_the_day_and_each_touched_contact_get_a_file_linked_both_ways(seeded, tmp_path):
    stores, s = seeded
    result = export_day(stores, Day.of(DAY, "UTC"), tmp_path / "export")
    day_dir = tmp_path / "export" / DAY
    assert result.folder == day_dir and result.files == result.contacts + 1
    index = (day_dir / "index.md").read_text()
    for section in ("What ran", "What failed", "What was recovered", "Decisions", "Facts"):
        assert f"## {section}" in index
    assert "memory\\_job 2026-11-29: FAILURE" in index  # escaped, still readable
    assert "Ran vault\\_job for 2026-11-29 late" in index
    links = set(re.findall(r"\]\((contacts/[^)]+)\)", index))
    exported = {p.relative_to(day_dir).as_posix() for p in day_dir.glob("contacts/*")}
    assert links == exported and len(exported) == result.contacts  # every file is linked
    researched = f"contacts/{contact_file(name(stores, s.researched), s.researched)}"
    assert f"[timeline]({researched})" in index  # from the facts and decisions about them
    assert f"Touched on [{DAY}](../index.md)" in (day_dir / researched).read_text()
    # Touched by a message sent that day alone (its episode is missing): still exported.
    assert f"contacts/{contact_file(name(stores, s.messaged), s.messaged)}" in exported


def name(stores, contact_id):
    with stores.connect("crm", readonly=True) as crm:
        return crm.execute("SELECT name FROM contacts WHERE id = $1", (contact_id,)).fetchone()[0]


def test_a_timeline_holds_everything_up_to_the_end_of_the_day_and_nothing_after(seeded, tmp_path):
    stores, s = seeded
    export_day(stores, Day.of(DAY, "UTC"), tmp_path)
    page = tmp_path / DAY / "contacts" / contact_file(name(stores, s.researched), s.researched)
    text = page.read_text()
    assert f"message {s.message}: A note for {s.researched}" in text
    assert "````text\n  Hello" in text.replace("\n  ````text", "\n````text")  # body, fenced
    assert "A body with ``` fences." in text
    assert "opened" not in text  # it was opened the next day: not known that night
    assert "Recorded after the day" not in text  # an episode of the next day
    assert "Sent the next day" not in text  # a message of the next day
    with stores.connect("memory", readonly=True) as memory:
        (earlier,) = memory.execute(
            "SELECT count(*) FROM contact_episodes WHERE contact_id = $1 AND recorded_at < $2",
            (s.researched, Day.of(DAY, "UTC").end),
        ).fetchone()
    assert text.count("(episode ") == earlier  # the whole history, not only the day's
    export_day(stores, Day.of(NEXT_DAY, "UTC"), tmp_path)
    later = (tmp_path / NEXT_DAY / "contacts" / page.name).read_text()
    # An open has no recorded time (`opened_at` is updated in place): never shown.
    assert "Recorded after the day" in later and "opened" not in later
    assert "Sent the next day" in later


def test_re_exporting_gives_byte_identical_files_and_writes_nothing(seeded, tmp_path):
    stores, _ = seeded
    first = export_day(stores, Day.of(DAY, "UTC"), tmp_path / "a")
    assert len(first.written) == first.files
    again = export_day(stores, Day.of(DAY, "UTC"), tmp_path / "a")
    assert (again.written, again.removed, again.unchanged) == ((), (), first.files)
    export_day(stores, Day.of(DAY, "UTC"), tmp_path / "b")
    assert tree(tmp_path / "a") == tree(tmp_path / "b")


def test_exporting_an_older_day_leaves_newer_days_alone(seeded, tmp_path):
    stores, _ = seeded
    export_day(stores, Day.of(NEXT_DAY, "UTC"), tmp_path)
    newer = tree(tmp_path / NEXT_DAY)
    stamps = {p: p.stat().st_mtime_ns for p in (tmp_path / NEXT_DAY).rglob("*")}
    export_day(stores, Day.of(DAY, "UTC"), tmp_path)
    assert tree(tmp_path / NEXT_DAY) == newer
    assert {p: p.stat().st_mtime_ns for p in (tmp_path / NEXT_DAY).rglob("*")} == stamps


def test_files_that_should_no_longer_exist_are_removed(seeded, tmp_path):
    stores, s = seeded
    export_day(stores, Day.of(DAY, "UTC"), tmp_path)
    contacts = tmp_path / DAY / "contacts"
    old_name = contact_file(name(stores, s.replier), s.replier)
    (contacts / ".index.md.x1y2.tmp").write_text("left by a crash")
    (contacts / "notes.txt").write_text("not ours")
    rename(stores, s.replier, "Renamed Person")
    result = export_day(stores, Day.of(DAY, "UTC"), tmp_path)
    assert result.removed == (f"contacts/{old_name}",)
    assert result.written == (f"contacts/renamed-person-{s.replier}.md", "index.md")
    assert not (contacts / ".index.md.x1y2.tmp").exists()
    assert (contacts / "notes.txt").exists()


def test_contact_names_that_are_not_file_names_get_safe_unique_files(seeded, tmp_path):
    stores, _ = seeded
    with stores.connect("memory", readonly=True) as memory:
        touched = [
            r[0]
            for r in memory.execute(
                "SELECT DISTINCT contact_id FROM contact_episodes WHERE day = $1 ORDER BY 1", (DAY,)
            )
        ]
    for contact_id, nasty in zip(touched, NASTY_NAMES + ["Twin Name", "Twin Name"], strict=False):
        rename(stores, contact_id, nasty)
    result = export_day(stores, Day.of(DAY, "UTC"), tmp_path)
    files = sorted((tmp_path / DAY / "contacts").iterdir())
    assert len(files) == result.contacts == len({f.name.lower() for f in files})
    for f in files:
        assert f.parent == tmp_path / DAY / "contacts" and len(f.name.encode()) <= 255
        assert re.fullmatch(r"[\w-]+-\d+\.md", f.name), f.name
        assert f.name.split(".")[0] not in WINDOWS_RESERVED and "--" not in f.name
        title = f.read_text().splitlines()[0]
        assert title.startswith("# ") and "\x00" not in title and "\u202e" not in title
    assert len([f for f in files if f.name.startswith("twin-name-")]) == 2
    index = (tmp_path / DAY / "index.md").read_text()
    assert "Zoë Müller \\# \\*bold\\* \\| \\[x\\](y) \\<b\\>" in index
    assert not (tmp_path / "etc").exists()


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Zoë Müller", "zoe-muller"),
        ("Łukasz Søren ß", "lukasz-soren-ss"),
        ("李小龙", "李小龙"),
        ("Ива́н", "ива́н"),
        ("CON", "con-"),
        ("com1", "com1-"),
        ("LPT9", "lpt9-"),
        ("../../etc/passwd", "etc-passwd"),
        ("a\x00b\nc\td", "a-b-c-d"),
        ("", "contact"),
        ("...", "contact"),
        ("Ａｄａ", "ada"),
    ],
)
def test_slugs(text, expected):
    assert slug(text) == expected


def test_a_slug_is_never_longer_than_its_limit_even_in_multibyte_letters():
    for text in ("a" * 500, "李" * 500, "é" * 500, "👍a" * 100):
        made = slug(text)
        assert 0 < len(made.encode()) <= MAX_SLUG_BYTES
        assert made == unicodedata.normalize("NFC", made)


def test_markdown_text_cannot_break_a_line_or_a_fence():
    assert inline("a\nb\r\u2028c\x1b[31m") == "a b c [31m".replace("[", "\\[")
    assert inline("`x` *y* _z_ | # ! ~ & \\") == "\\`x\\` \\*y\\* \\_z\\_ \\| \\# \\! \\~ \\& \\\\"
    block = fenced("one\n````\ntwo\x07")
    assert block.startswith("`````text\n") and block.endswith("\n`````")
    assert "\x07" not in block


def test_a_day_with_no_stores_exports_an_index_that_says_so(tmp_path):
    result = export_day(Stores(tmp_path / "fresh"), Day.of(DAY, "UTC"), tmp_path / "export")
    assert (result.files, result.contacts) == (1, 0)
    text = (tmp_path / "export" / DAY / "index.md").read_text()
    assert "brain_facts has not run for this day yet" in text and "No runs." in text


def test_a_bad_day_is_refused_before_anything_is_written(seeded, tmp_path):
    stores, _ = seeded
    for day in ("../escape", "2026-02-30", ""):
        with pytest.raises(ValueError, match="not a day"):
            export_day(stores, Day.of(day, "UTC"), tmp_path / "export")
    assert not (tmp_path / "export").exists()


def test_an_export_folder_under_a_file_is_a_clear_error(seeded, tmp_path):
    stores, _ = seeded
    (tmp_path / "plain-file").write_text("in the way")
    with pytest.raises(ExportError, match=r"cannot write the export of 2026-11-29 at .*plain-file"):
        export_day(stores, Day.of(DAY, "UTC"), tmp_path / "plain-file" / "export")
    assert (tmp_path / "plain-file").read_text() == "in the way"


def test_a_read_only_export_folder_is_a_clear_error_and_loses_nothing(seeded):
    stores, s = seeded
    # Outside pytest's tmp dir, which only its owner may enter; the stores must be readable
    # (and their WAL index creatable) by the unprivileged user the export runs as.
    parent = Path(tempfile.mkdtemp(prefix="company-ai-export-ro-"))
    parent.chmod(0o755)
    data = copy_data_dir(stores.data_dir, parent / "data")  # with its database, if any
    url = database_for(data)
    for path in [data, *data.rglob("*")]:
        path.chmod(0o777 if path.is_dir() else 0o666)
    export = parent / "export"
    export_day(Stores(data), Day.of(DAY, "UTC"), export)
    before = tree(export)
    rename(Stores(data), s.replier, "Someone Else")  # the re-export would change files
    for path in [export, *export.rglob("*")]:
        path.chmod(0o555 if path.is_dir() else 0o444)
    script = textwrap.dedent(f"""
        import os, sys
        from company_ai.core.store.db import Stores
        from company_ai.core.brain.export import ExportError, export_day
        from company_ai.core.times import Day
        import psycopg  # now: the unprivileged user may not reach the standard library
        if os.geteuid() == 0:  # root ignores permission bits
            os.setgid(65534); os.setuid(65534)
        try:
            stores = Stores({str(data)!r}, database_url={url!r})
            export_day(stores, Day.of({DAY!r}, "UTC"), {str(export)!r})
        except ExportError as exc:
            print(exc); sys.exit(0)
        sys.exit("exported into a read-only folder")
    """)
    done = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        env=os.environ | {"PYTHONPATH": os.getcwd()},
    )
    try:
        assert done.returncode == 0, done.stderr
        assert f"cannot write the export of {DAY} at {export / DAY}" in done.stdout
        assert "Permission denied" in done.stdout and "Nothing was lost" in done.stdout
        assert tree(export) == before
    finally:
        for path in [export, *export.rglob("*")]:
            path.chmod(0o755)
        shutil.rmtree(parent)


def test_the_growth_table_is_written_once_per_day(tmp_path):
    table = "| week | sent |\n|---|---:|\n| 2026-11-23 | 3 |\n"
    assert export_growth(tmp_path, "2026-11-30", "Outreach growth", table)
    assert not export_growth(tmp_path, "2026-11-30", "Outreach growth", table)  # unchanged
    assert export_growth(tmp_path, "2026-12-01", "Outreach growth", table)
    text = (tmp_path / "growth" / "2026-11-30.md").read_text()
    assert text == f"# Outreach growth\n\n{table}"
    assert sorted(p.name for p in (tmp_path / "growth").iterdir()) == [
        "2026-11-30.md",
        "2026-12-01.md",
    ], "one day's file never removes another's"


def test_private_vault_notes_never_reach_the_brain_or_the_export(data, vault, tmp_path):
    stores = Stores(data)
    staging = staging_dir(data)
    stage_vault(vault, staging, day=DAY)
    with stores.connect("recall") as recall:
        distill_staging(
            recall, str(staging), day=DAY, distill=lambda t, p, x: offline_page(p, x),
            source="model:offline", clock=fixed_clock(),
        )  # fmt: skip
    (vault / "notes" / "offsite-ideas.md").unlink()
    stage_vault(vault, staging, day=DAY)  # a deletion of the day, named in the brain
    with stores.connect("recall") as recall:
        distill_staging(
            recall, str(staging), day=DAY, distill=lambda t, p, x: offline_page(p, x),
            source="model:offline", clock=fixed_clock("2026-11-29T00:40:00Z"),
        )  # fmt: skip
    with stores.connect("brain") as brain:
        write_day(brain, DAY, synthesize_day(stores, Day.of(DAY, "UTC"), day_runs()))
    export_day(stores, Day.of(DAY, "UTC"), tmp_path / "export")
    index = (tmp_path / "export" / DAY / "index.md").read_text()
    assert "Recall page 'Dev Patel' distilled from people/dev-patel.md" in index
    assert "its note notes/offsite-ideas.md was deleted" in index
    assert find_canary(PRIVATE_CANARY, stores.path("brain").parent, tmp_path / "export") == []
