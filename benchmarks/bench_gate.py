"""The fabrication gate: precision, recall and speed on labelled drafts, on drafts written
to fool it (the aside quarter), on fair drafts in the product's own shape, on drafts a
person wrote by hand against the co-occurrence check (`evals/gate_rivals.py`: the aside
half measured once), on EntFA and on SummEdits.

    export PYTHONPATH=.   # the labelled sets are read through evals/
    .venv/bin/python benchmarks/bench_gate.py
    .venv/bin/python benchmarks/bench_gate.py --entfa ../shared/data/entfa/train.json
    .venv/bin/python benchmarks/bench_gate.py --tuning   # also the part the gate was tuned on
    .venv/bin/python benchmarks/bench_gate.py --aside    # EntFA, SummEdits: aside and whole too
    .venv/bin/python benchmarks/bench_gate.py --together # EntFA, SummEdits with the check too

Outreach drafts are judged as a morning run judges them: the presence gate and the
co-occurrence check of `core/gate_context.py` (claims one sentence ties together must not
be pinned by the sources on another subject); every draft figure is printed both ways,
the product's first. A summary (a vault page) is judged by presence alone, and so are
EntFA and SummEdits; `--together` adds their figures with the check.

EntFA and SummEdits are split once into a tuning part and an aside part (about a quarter,
by a sha256 of the source article or document: `gate_eval.is_aside`). By default only the
tuning part is scored; `--aside` adds the aside part and the whole set, to be run once
after the last change to the gate (looking at the aside part while tuning spoils it).
Prints one figure a line; BENCHMARKS.md records a run. Nothing here asserts a speed.
Issue 28's 70/30 split of every set, each gate mode apart, is `python -m
evals.gate_heldout` (dev; `--aside` once); its drafts' speed is printed here too.
"""

from __future__ import annotations

import argparse
import functools
import os
import platform
import time
from collections.abc import Callable
from pathlib import Path

from company_ai.core.gate import find_unsupported_claims
from company_ai.core.gate.extract import extract
from company_ai.core.gate.index import SourceIndex
from company_ai.core.gate.presence import check
from evals.gate_eval import (
    ALLOW,
    PARTS,
    Part,
    Scores,
    adversarial_scores,
    balanced_accuracy,
    entfa_scores,
    fair_scores,
    gate_scores,
    labelled_drafts,
    rival_scores,
    summedits_scores,
    title_case_words,
)

LONG_DRAFT_CHARS = 5000
# How a draft may be judged: as a morning run judges it (with the co-occurrence check),
# and by presence alone (as a summary is).
DRAFT_GATES = ((True, "as outreach judges"), (False, "presence alone"))

# The hand-written sets against the check, each by another hand: the first (half aside, then
# tuned on whole), the second (held out, measured once, then tuned on), the third (held out).
RIVAL_SETS = (
    ("first set, aside half", True, None),
    ("first set, the other half", False, None),
    ("second set", True, Path(__file__).parents[1] / "evals" / "data" / "gate_rivals2.json"),
    (
        "third set (held out)",
        True,
        Path(__file__).parents[1] / "evals" / "data" / "gate_rivals3.json",
    ),
)
DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
DEFAULT_ENTFA = DATA / "entfa" / "train.json"
DEFAULT_SUMMEDITS = DATA / "summedits-dev"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--entfa", type=Path, default=DEFAULT_ENTFA)
    parser.add_argument("--summedits", type=Path, default=DEFAULT_SUMMEDITS)
    parser.add_argument("--repeat", type=int, default=20, help="timing passes over the set")
    parser.add_argument(
        "--tuning", action="store_true", help="also score the adversarial drafts tuned on"
    )
    parser.add_argument(
        "--aside",
        action="store_true",
        help="also score EntFA's and SummEdits' aside part and whole set (once, at the end)",
    )
    parser.add_argument("--no-speed", action="store_true", help="the accuracy figures only")
    parser.add_argument(
        "--together", action="store_true", help="EntFA and SummEdits with the check too"
    )
    args = parser.parse_args()

    print(
        f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores,"
        f" Python {platform.python_version()}"
    )
    cases = labelled_drafts()
    fabricated = sum(c.fabricated for c in cases)
    print(
        f"labelled drafts: {len(cases)} ({fabricated} with a fabricated claim,"
        f" {len(cases) - fabricated} clean)"
    )
    for together, how in DRAFT_GATES:
        print(f"labelled drafts, {how}: {gate_scores(cases, together=together).line()}")
    if not args.no_speed:
        speed(cases, args.repeat)
    for together, how in DRAFT_GATES:
        adversarial(args.tuning, together, how)
    for together, how in DRAFT_GATES:
        for part, aside in (("aside quarter", True), ("the rest", False)):
            s = fair_scores(aside, together=together)
            alarms = f"false alarms {s.fp}/{s.fp + s.tn}"
            print(f"fair drafts in the product's shape, {part}, {how}: {alarms}")
    for together, how in DRAFT_GATES:
        for part, aside, path in RIVAL_SETS:
            s = rival_scores(aside, together=together, path=path)
            print(
                f"drafts written by hand against the check, {part}, {how}: recall"
                f" {s.recall:.3f}, false alarms {s.false_alarm_rate:.3f}, {s.line()}"
            )
    parts = PARTS if args.aside else PARTS[:1]
    for together in (False, True) if args.together else (False,):
        if together:
            print("--- public data with the co-occurrence check (gate_context) ---")
        if args.entfa.is_file():
            for part in parts:
                gate, naive = entfa_scores(args.entfa, part, together=together)
                if together:
                    print(f"EntFA {part}, gate, every claim (misattributed too): {gate.line()}")
                    continue  # the presence claims only: the figures above
                print(f"EntFA {part}, gate (own extractor): {gate.line()}")
                print(f"EntFA {part}, naive baseline (gold entity spans): {naive.line()}")
        else:
            print(f"EntFA: {args.entfa} not found; skipped")
        if args.summedits.is_dir():
            for part in parts:
                summedits(args.summedits, part, together)
        else:
            print(f"SummEdits: {args.summedits} not found; skipped")


def summedits(folder: Path, part: Part, together: bool = False) -> None:
    by_domain = summedits_scores(folder, part, together=together)
    for domain, s in by_domain.items():
        print(
            f"SummEdits {part} {domain}: balanced accuracy {balanced_accuracy(s):.3f}, {s.line()}"
        )
    total = Scores(*(sum(getattr(s, f) for s in by_domain.values()) for f in Scores.FIELDS))
    print(f"SummEdits {part} all: balanced accuracy {balanced_accuracy(total):.3f}, {total.line()}")


def speed(cases: list, repeat: int) -> None:
    """Drafts a second: the whole gate per draft (index its sources, then check), as
    outreach runs it (with the co-occurrence check) and by presence alone; then presence
    with the sources indexed once; then the longest draft."""
    n = repeat * len(cases)
    finders = {
        together: functools.partial(find_unsupported_claims, together=together)
        for together in (True, False)
    }
    for together, how in DRAFT_GATES:
        elapsed = per_draft(finders[together], cases, repeat)
        print(
            f"speed, {how}: {n / elapsed:,.0f} drafts/s ({elapsed / n * 1e6:.0f} µs a draft,"
            " sources indexed per draft, one core)"
        )
    indexes = [SourceIndex(c.sources, ALLOW) for c in cases]
    started = time.process_time()
    for _ in range(repeat):
        for case, index in zip(cases, indexes, strict=True):
            check(extract(case.text), index)
    elapsed = time.process_time() - started
    print(f"speed, presence alone: {n / elapsed:,.0f} drafts/s with the sources indexed once")
    long_draft(cases[0].sources, repeat)
    linearity(cases, repeat)
    speed_on_sets()


def speed_on_sets() -> None:
    """Drafts a second on the dev parts of the sets written against the gate (their
    dossiers and pages are longer, and name more companies, than the labelled drafts'),
    judged as outreach judges them: subject and body, sources indexed per draft."""
    from company_ai.core.gate import judge
    from evals.gate_heldout import adversarial, fair, rivals

    for name, make in (("adversarial", adversarial), ("rival", rivals), ("fair", fair)):
        drafts = list(make("dev"))
        chars = sum(len(" ".join(d.sources)) + sum(map(len, d.parts)) for d in drafts)
        best = float("inf")
        for _ in range(3):
            started = time.process_time()
            for d in drafts:
                parts = {"subject": d.parts[0], "body": d.parts[1]}
                judge(parts, d.sources, d.allow, known=d.known, together=True)
            best = min(best, time.process_time() - started)
        print(
            f"speed, {name} drafts (dev, {chars // len(drafts):,} characters with their"
            f" sources), as outreach judges: {len(drafts) / best:,.0f} drafts/s"
        )


def linearity(cases: list, repeat: int) -> None:
    """Time per character as drafts and their sources grow: the labelled drafts' bodies
    and sources joined 1, 4 and 16 at a time, judged as outreach judges (sources indexed
    per draft). A flat figure is a gate linear in the text."""
    for k in (1, 4, 16):
        joined = [cases[i : i + k] for i in range(0, len(cases) - k + 1, k)][:40]
        texts = [("\n".join(c.text for c in group), [s for c in group for s in c.sources])
                 for group in joined]  # fmt: skip
        chars = sum(len(t) + sum(map(len, s)) for t, s in texts)
        started = time.process_time()
        for _ in range(max(1, repeat // 4)):
            for text, sources in texts:
                find_unsupported_claims(text, sources, allow=ALLOW, together=True)
        elapsed = (time.process_time() - started) / max(1, repeat // 4)
        print(
            f"speed, {k} draft(s) and their sources as one ({chars // len(texts):,} characters"
            f" a text): {elapsed / chars * 1e9:,.0f} ns a character, as outreach judges"
        )


def per_draft(find: Callable[..., list], cases: list, repeat: int) -> float:
    """CPU seconds for `repeat` passes of `find` over the drafts, sources indexed per draft."""
    started = time.process_time()
    for _ in range(repeat):
        for case in cases:
            find(case.text, case.sources, allow=ALLOW)
    return time.process_time() - started


def adversarial(tuning: bool, together: bool, how: str) -> None:
    """Drafts written to fool the gate: the aside quarter (never tuned on) first."""
    for part, aside in (("aside quarter", True), ("tuning part", False)):
        if not aside and not tuning:
            continue
        total, by_class = adversarial_scores(aside, together=together)
        print(
            f"adversarial drafts, {part}, {how}: recall {total.recall:.3f}, false alarms"
            f" {total.false_alarm_rate:.3f}, {total.line()}"
        )
        for name, s in by_class.items():
            print(f"  {name}: caught {s.tp}/{s.tp + s.fn}, false alarms {s.fp}/{s.fp + s.tn}")


def long_draft(sources: list[str], repeat: int) -> None:
    """The worst case for the name splitter: one capitalised run the length of the draft."""
    words = title_case_words(LONG_DRAFT_CHARS // 6 + 1)  # five letters and a space each
    draft = " ".join(words)[:LONG_DRAFT_CHARS].rsplit(" ", 1)[0]
    best = float("inf")
    for _ in range(max(1, repeat // 4)):
        started = time.process_time()
        claims = find_unsupported_claims(draft, sources, allow=ALLOW)
        best = min(best, time.process_time() - started)
    print(
        f"speed: a {len(draft):,}-character draft of {len(draft.split())} title-case words:"
        f" {best * 1000:.1f} ms, {len(claims)} unsupported claim(s)"
    )


if __name__ == "__main__":
    main()
