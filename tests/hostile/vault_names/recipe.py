"""Build a vault whose private folders are spelt oddly (names.json says which and why).

Odd names are awkward to commit (a trailing space or dot, a zero-width character), so the
corpus is a list of names and this recipe makes them: a folder per spelling, each holding a
note with the shared canary and a token of its own (so a leak names its spelling), plus the
links of names.json. Every note made here is private: none of it may be staged.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).parent
CANARY = "wrenlatchet"  # in every note this recipe makes, and in no other file


@dataclass(frozen=True)
class Case:
    path: str  # relative to the vault
    guards: str
    token: str  # this case's own canary


def cases() -> list[Case]:
    spec = json.loads((HERE / "names.json").read_text(encoding="utf-8"))
    folders = spec["folders"]
    return [Case(f["path"], f["guards"], f"lqz{i:02d}vkt") for i, f in enumerate(folders)]


def build(vault: Path) -> list[Case]:
    """Make every folder of names.json under `vault` with a private note in it, then the
    links; returns the cases (their tokens are what must never be staged)."""
    made = cases()
    for case in made:
        folder = vault / case.path
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "secret.md").write_text(
            f"# Secret {case.token}\n\n{CANARY} {case.token}: the settlement is 40,000.\n",
            encoding="utf-8",
        )
    spec = json.loads((HERE / "names.json").read_text(encoding="utf-8"))
    for link in spec["links"]:
        source, target = vault / link["path"], vault / link["to"]
        if link["kind"] == "symlink":
            source.symlink_to(os.path.relpath(target, source.parent))
        else:
            os.link(target, source)
    return made
