"""The documents stay true: every name the code defines is in docs/, every path exists.

Names are read from the code itself (the Definitions object, the CLI's parser, settings.py
and the `dg.EnvVar` secrets of definitions.py), never from a list kept here, so a new asset,
check, schedule, sensor, job, command or setting fails this test until a document names it
in backticks. Paths are those the documents name in backticks or links under the
repository's own folders; each must exist (a module may be named without `.py`).
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path

from tests.setup import DEFS

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
DOCUMENTS = [ROOT / "README.md", ROOT / "CONTRIBUTING.md", ROOT / "BENCHMARKS.md"]
PATH_ROOTS = ("company_ai", "scripts", "tests", "benchmarks", "deploy", "docs")

# Where each kind of name belongs, for the failure message.
HOME = {
    "asset": "docs/assets.md",
    "asset check": "docs/assets.md",
    "job": "docs/operations.md (the timetable)",
    "schedule": "docs/operations.md (the timetable)",
    "sensor": "docs/operations.md (sensors)",
    "CLI command": "docs/operations.md (the CLI)",
    "setting": "docs/configuration.md",
}


def defined_names() -> list[tuple[str, str]]:
    """(kind, name) for everything the code defines that the documents must name."""
    graph = DEFS.resolve_asset_graph()
    names = [("asset", k.to_user_string()) for k in graph.get_all_asset_keys()]
    names += [("asset check", k.name) for k in graph.asset_check_keys]
    names += [("job", j.name) for j in DEFS.jobs or []]
    names += [("schedule", s.name) for s in DEFS.schedules or []]
    names += [("sensor", s.name) for s in DEFS.sensors or []]
    names += [("CLI command", c) for c in cli_commands()]
    names += [("setting", s) for s in settings_names()]
    return sorted(set(names))


def cli_commands() -> list[str]:
    from company_ai.cli import _parser

    return [
        name
        for action in _parser()._actions
        if isinstance(action, argparse._SubParsersAction)
        for name in action.choices
    ]


def settings_names() -> list[str]:
    """Every environment variable settings.py reads, and every secret bound as dg.EnvVar."""
    from company_ai.settings import DEFAULTS

    secrets = re.findall(
        r"EnvVar\(\s*\"(\w+)\"", (ROOT / "company_ai" / "definitions.py").read_text()
    )
    return [*DEFAULTS, *secrets]


def spans(text: str) -> list[str]:
    """The text of every `code span` (inline; fenced blocks count line by line)."""
    found = re.findall(r"`([^`\n]+)`", text)
    for block in re.findall(r"(?ms)^```[^\n]*\n(.*?)^```", text):
        found += block.splitlines()
    return found


def named(text: str) -> set[str]:
    """The names a text gives in backticks: whole spans, and `company-ai COMMAND …`."""
    found = set()
    for span in spans(text):
        found.add(span.strip())
        words = span.removeprefix("$ ").split()
        if len(words) > 1 and words[0] in ("company-ai", ".venv/bin/company-ai"):
            found.add(words[1])
    return found


def missing_names(text: str, names: list[tuple[str, str]]) -> list[tuple[str, str]]:
    have = named(text)
    return [(kind, name) for kind, name in names if name not in have]


PATH = re.compile(r"(?<![\w./<{-])((?:" + "|".join(PATH_ROOTS) + r")/[\w./-]*)")


def named_paths(document: Path) -> list[tuple[Path, str]]:
    """(where to look it up, as written) for every repository path in a document."""
    text = document.read_text()
    found = []
    for span in spans(text):
        for match in PATH.finditer(span):
            after = span[match.end() : match.end() + 1]
            if after in ("<", "{", "*"):  # a pattern such as snapshots/<day>/
                continue
            found.append((ROOT, match.group(1).rstrip(".,:")))
    for target in re.findall(r"\]\(([^)\s#]+)[^)]*\)", text):
        if "://" not in target and not target.startswith("mailto:"):
            found.append((document.parent, target))
    return found


def tag_keys() -> set[str]:
    """Metadata and tag keys (`company_ai/day_kind`), which look like paths but are not."""
    from company_ai import constants

    return {v for v in vars(constants).values() if isinstance(v, str) and "/" in v}


def broken_paths(documents: list[Path]) -> list[str]:
    broken = []
    keys = tag_keys()
    for doc in documents:
        for base, path in named_paths(doc):
            if path in keys:
                continue
            plain = (base / path).resolve()
            if not plain.exists() and not plain.with_name(plain.name + ".py").exists():
                broken.append(f"{doc.relative_to(ROOT)}: {path}")
    return broken


def docs_text() -> str:
    return "\n".join(p.read_text() for p in sorted(DOCS.glob("*.md")))


def test_docs_name_every_asset_check_schedule_sensor_job_command_and_setting():
    missing = missing_names(docs_text(), defined_names())
    assert not missing, "docs/ does not name these; add each, in backticks, where shown:\n" + (
        "\n".join(f"  {kind} `{name}` -> {HOME[kind]}" for kind, name in missing)
    )


def test_every_path_a_document_names_exists():
    broken = broken_paths([*DOCUMENTS, *sorted(DOCS.glob("*.md"))])
    assert not broken, "these documents name paths that do not exist:\n" + "\n".join(
        f"  {b}" for b in broken
    )


def test_the_checks_catch_a_missing_name_and_a_missing_path(tmp_path):
    text = "The `crm_contacts` asset; run `company-ai timeline EMAIL`.\n```\nscripts/demo\n```"
    assert missing_names(text, [("asset", "crm_contacts"), ("CLI command", "timeline")]) == []
    assert missing_names(text, [("asset", "crm")]) == [("asset", "crm")]
    doc = tmp_path / "x.md"
    doc.write_text(
        "See `company_ai/nowhere.py`, `company_ai/settings` and `company_ai/<day>/`;"
        " [x](missing.md), [y](https://example.com/a)."
    )
    assert [p for _, p in named_paths(doc)] == ["company_ai/nowhere.py", "company_ai/settings"] + [
        "missing.md"
    ]
    assert not (tmp_path / "missing.md").exists()


def test_the_names_come_from_the_code():
    names = defined_names()
    kinds = {kind for kind, _ in names}
    assert kinds == set(HOME)
    assert ("asset check", "fabrication_gate") in names
    assert ("CLI command", "forget") in names
    assert ("setting", "COMPANY_AI_GMAIL_TOKEN") in names
