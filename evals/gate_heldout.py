"""Score the fabrication gate on the dev part of every labelled set (`gate_split`), each
gate mode apart; the aside part only with `--aside`, run once after the last change.

    .venv/bin/python -m evals.gate_heldout            # dev parts
    .venv/bin/python -m evals.gate_heldout --aside    # the aside parts (once, at the end)

Modes: `presence` (every claim must be present in some source: how a vault page is
judged) and `presence+co-occurrence` (also the pairs one sentence ties together that no
source passage holds together: `context.check_together`). For drafts, each line also says
what the co-occurrence check adds on its own: the fabricated drafts only it caught and the
fair drafts only it held back. A draft is flagged when any claim of its subject or body is
unsupported; EntFA is scored per entity (positives: the two extrinsic labels), SummEdits
per pair (positives: the inconsistent pairs a presence check is meant to catch).
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from company_ai.core.gate.claim import Claim
from company_ai.core.gate.context import misattributed
from company_ai.core.gate.extract import extract
from company_ai.core.gate.index import SourceIndex
from company_ai.core.gate.presence import check
from evals.gate_eval import (
    ALLOW,
    EXTRINSIC,
    SUMMEDITS_DOMAINS,
    SUMMEDITS_EDITS,
    Scores,
    balanced_accuracy,
    labelled_drafts,
    score,
)
from evals.gate_split import Split, rival_company, split_of

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
RIVAL_FILES = ("gate_rivals.json", "gate_rivals2.json", "gate_rivals3.json")
MODES = ("presence", "presence+co-occurrence")


@dataclass(frozen=True)
class Draft:
    """One labelled draft: its parts, its material and what the sender may say."""

    collection: str
    fabricated: bool
    parts: tuple[str, ...]
    sources: tuple[str, ...]
    allow: tuple[str, ...] = ()
    known: tuple[str, ...] = ()


@dataclass(frozen=True)
class Judged:
    """What each check says of one text: presence claims and co-occurrence spans."""

    claims: tuple[Claim, ...]
    pairs: tuple[tuple[int, int], ...]  # [start, end) in the text's own offsets

    def flagged(self, mode: str) -> bool:
        return bool(self.claims) or (mode != "presence" and bool(self.pairs))


def judged(text: str, sources: Iterable[str], allow=(), known=()) -> Judged:
    """Both checks on one text, the sources indexed once."""
    index = SourceIndex(list(sources), tuple(allow), known=tuple(known))
    mentions = extract(text)
    origin = mentions.origin
    pairs = tuple(
        (origin[s], origin[e - 1] + 1) if origin is not None else (s, e)
        for s, e in misattributed(mentions, index)
    )
    return Judged(tuple(check(mentions, index)), pairs)


# --- the labelled sets, each cut by `split_of` --------------------------------------------


def adversarial(part: Split) -> Iterator[Draft]:
    from evals.gate_adversary import ALLOW as SENDER_ALLOW
    from evals.gate_adversary import adversarial_drafts, known_names

    known = known_names()
    for c in adversarial_drafts():
        if split_of(f"adversary/{c.perturbation}/{c.variant}") == part:
            parts = (c.subject, c.body)
            yield Draft("adversarial", c.fabricated, parts, tuple(c.sources), SENDER_ALLOW, known)


def fair(part: Split) -> Iterator[Draft]:
    from evals.gate_fair import SENDER, fair_drafts

    drafts = [d for d in fair_drafts() if split_of(f"fair/{d.shape}") == part]
    known = tuple(sorted({d.company for d in drafts}))
    for d in drafts:
        yield Draft("fair", False, (d.subject, d.body), tuple(d.sources), (SENDER,), known)


def rivals(part: Split) -> Iterator[Draft]:
    from evals.gate_rivals import load

    for name in RIVAL_FILES:
        for d in load(Path(__file__).parent / "data" / name):
            if split_of(f"rivals/{rival_company(d.id)}") == part:
                parts = (d.subject, d.body)
                sources, allow, known = tuple(d.sources), tuple(d.allow), tuple(d.known)
                yield Draft(f"rivals:{name}", d.fabricated, parts, sources, allow, known)


def labelled(part: Split) -> Iterator[Draft]:
    for c in labelled_drafts():
        if split_of(f"labelled/{c.text}") == part:
            yield Draft("labelled", c.fabricated, (c.text,), tuple(c.sources), ALLOW)


DRAFT_SETS = (
    ("drafts written to fool the gate (gate_adversary)", adversarial),
    ("hand-written rival drafts (gate_rivals 1-3)", rivals),
    ("fair drafts in the product's shape (gate_fair)", fair),
    ("labelled drafts (gate_eval)", labelled),
)


def entfa(path: Path, part: Split) -> list[tuple[dict, Judged]]:
    docs = [d for d in json.loads(path.read_text()) if split_of(f"entfa/{d['source']}") == part]
    return [(d, judged(d["prediction"], [d["source"]])) for d in docs]


def summedits(folder: Path, domain: str, part: Split) -> list[tuple[dict, Judged]]:
    items = json.loads((folder / f"summedits_{domain}.json").read_text())
    kept = [
        i
        for i in items
        if (i["label"] == 1 or (i["label"] == 0 and SUMMEDITS_EDITS & set(i["edit_types"] or ())))
        and split_of(f"summedits/{i['doc']}") == part
    ]
    return [(i, judged(i["summary"], [i["doc"]])) for i in kept]


# --- scoring ------------------------------------------------------------------------------


def draft_verdicts(drafts: Iterable[Draft]) -> list[tuple[Draft, list[Judged]]]:
    return [(d, [judged(t, d.sources, d.allow, d.known) for t in d.parts]) for d in drafts]


def draft_scores(rows: list[tuple[Draft, list[Judged]]], mode: str) -> Scores:
    flagged = [any(j.flagged(mode) for j in js) for _, js in rows]
    return score(flagged, [d.fabricated for d, _ in rows])


def co_occurrence_alone(rows: list[tuple[Draft, list[Judged]]]) -> tuple[int, int]:
    """(fabricated drafts only the co-occurrence check caught, fair drafts only it held)."""
    only = [
        any(j.flagged("presence+co-occurrence") for j in js)
        and not any(j.flagged("presence") for j in js)
        for _, js in rows
    ]
    caught = sum(o and d.fabricated for o, (d, _) in zip(only, rows, strict=True))
    return caught, sum(only) - caught


def entity_scores(rows: list[tuple[dict, Judged]], mode: str) -> Scores:
    predicted, truth = [], []
    for doc, j in rows:
        spans = [(c.start, c.end) for c in j.claims]
        if mode != "presence":
            spans += list(j.pairs)
        for ent in doc["entities"]:
            truth.append(ent["label"] in EXTRINSIC)
            predicted.append(any(s < ent["end"] and ent["start"] < e for s, e in spans))
    return score(predicted, truth)


def pair_scores(rows: list[tuple[dict, Judged]], mode: str) -> Scores:
    return score([j.flagged(mode) for _, j in rows], [i["label"] == 0 for i, _ in rows])


def total(scores: Iterable[Scores]) -> Scores:
    scores = list(scores)
    return Scores(*(sum(getattr(s, f) for s in scores) for f in Scores.FIELDS))


def report(part: Split, entfa_path: Path, summedits_dir: Path) -> None:
    every: list[tuple[Draft, list[Judged]]] = []
    for title, make in DRAFT_SETS:
        rows = draft_verdicts(make(part))
        every += rows if make is not labelled else []
        for mode in MODES:
            s = draft_scores(rows, mode)
            print(
                f"{part} {title}, {mode}: recall {s.recall:.3f}, false alarms"
                f" {s.false_alarm_rate:.3f}, {s.line()}"
            )
        caught, held = co_occurrence_alone(rows)
        print(f"{part} {title}: co-occurrence alone caught {caught}, held back {held} fair")
    for mode in MODES:
        s = draft_scores(every, mode)
        print(
            f"{part} all drafts against the gate (adversarial, rivals, fair), {mode}: recall"
            f" {s.recall:.3f}, false alarms {s.false_alarm_rate:.3f}, {s.line()}"
        )
    if entfa_path.is_file():
        rows_e = entfa(entfa_path, part)
        for mode in MODES:
            s = entity_scores(rows_e, mode)
            print(f"{part} EntFA entities ({len(rows_e)} summaries), {mode}: {s.line()}")
    else:
        print(f"EntFA: {entfa_path} not found; skipped")
    if summedits_dir.is_dir():
        by_domain = {d: summedits(summedits_dir, d, part) for d in SUMMEDITS_DOMAINS}
        for mode in MODES:
            for domain, rows_s in by_domain.items():
                s = pair_scores(rows_s, mode)
                print(
                    f"{part} SummEdits {domain}, {mode}: balanced accuracy"
                    f" {balanced_accuracy(s):.3f}, {s.line()}"
                )
            s = total(pair_scores(r, mode) for r in by_domain.values())
            print(
                f"{part} SummEdits all domains, {mode}: balanced accuracy"
                f" {balanced_accuracy(s):.3f}, {s.line()}"
            )
    else:
        print(f"SummEdits: {summedits_dir} not found; skipped")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--aside", action="store_true", help="score the aside parts (once)")
    parser.add_argument("--entfa", type=Path, default=DATA / "entfa" / "train.json")
    parser.add_argument("--summedits", type=Path, default=DATA / "summedits-dev")
    args = parser.parse_args()
    report("aside" if args.aside else "dev", args.entfa, args.summedits)


if __name__ == "__main__":
    main()
