"""What a reader could act on (`core/gate/actionable.py`): how often fair drafts are held
back for it, and its speed.

    PYTHONPATH=. .venv/bin/python benchmarks/bench_actionable.py

Prints, for each hand-made set of drafts in evals/, how many fair drafts (and how many
fabricated ones) name a link, address, number or instruction not the company's own (the
sets' sender company: `companyai.example`, `+44 20 7946 0018`), and which fair drafts;
then drafts a second over the labelled drafts and seconds for 5 MB on one line (CPU time,
one core).
"""

from __future__ import annotations

import time

from company_ai.core.gate import judge
from company_ai.core.gate.actionable import Own, actionable_claims
from company_ai.core.outreach.drafting import reader_addresses
from evals.gate_adversary import adversarial_drafts
from evals.gate_eval import ALLOW, labelled_drafts
from evals.gate_fair import fair_drafts
from evals.gate_rivals import load

OWN = Own.of(["companyai.example"], ["+44 20 7946 0018"])


Parts = tuple[dict[str, str], Own]


def flagged(draft: Parts) -> bool:
    return bool(actionable_claims(*draft))


def judged(parts: dict[str, str], sources: list[str]) -> Parts:
    """A draft as outreach judges it: the reader's address (in its CRM line) is theirs."""
    return parts, OWN.with_readers(reader_addresses(sources))


def rate(name: str, drafts: list[tuple[Parts, bool]]) -> None:
    fair = [p for p, fabricated in drafts if not fabricated]
    made = [p for p, fabricated in drafts if fabricated]
    print(
        f"{name}: fair drafts held back {sum(map(flagged, fair))}/{len(fair)},"
        f" fabricated drafts held back for it {sum(map(flagged, made))}/{len(made)}"
    )
    held: dict[str, int] = {}
    for draft in fair:
        for _, claim in actionable_claims(*draft):
            held[claim.kind] = held.get(claim.kind, 0) + 1
    if held:
        print(f"  fair drafts' claims by kind: {held}")


def main() -> None:
    labelled = labelled_drafts()
    rate("labelled drafts", [(judged({"b": c.text}, c.sources), c.fabricated) for c in labelled])
    rate(
        "fair drafts (gate_fair)",
        [(judged({"s": d.subject, "b": d.body}, d.sources), False) for d in fair_drafts()],
    )
    rate(
        "rival drafts (gate_rivals)",
        [
            (judged({"s": d.subject, "b": d.body}, d.sources), d.label == "fabricated")
            for d in load()
        ],
    )
    rate(
        "adversarial drafts (gate_adversary)",
        [(judged(dict(c.parts), c.sources), c.fabricated) for c in adversarial_drafts()],
    )
    started = time.process_time()
    for case in labelled:
        actionable_claims({"body": case.text}, OWN)
    elapsed = time.process_time() - started
    print(f"speed: {len(labelled) / elapsed:,.0f} drafts/s over {len(labelled)} labelled drafts")
    for how, own in (("without", None), ("with", OWN)):
        started = time.process_time()
        for case in labelled:
            judge({"b": case.text}, case.sources, ALLOW, together=True, own=own)
        elapsed = time.process_time() - started
        print(
            f"speed: the gate as outreach judges, {how} this check:"
            f" {len(labelled) / elapsed:,.0f} drafts/s (sources indexed per draft)"
        )
    pieces = ["a.", "1 ", "[.]a", "http://", "a@b.", "verify your ", "www.", "cоmpany-ai."]
    line = "".join(p * 300 for p in pieces)
    text = line * (5 * 2**20 // len(line))
    started = time.process_time()
    actionable_claims({"body": text}, OWN)
    print(
        f"speed: 5 MB of link, address, number and instruction pieces on one line in"
        f" {time.process_time() - started:.1f} s"
    )


if __name__ == "__main__":
    main()
