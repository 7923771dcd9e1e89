"""The fair drafts the co-occurrence check alone holds back, on one part of the split, with
the pair it flagged, the draft's sentence, and each source sentence that names either side:
the material for classifying its false alarms (issue 28).

    .venv/bin/python -m evals.gate_held_fair            # dev parts
    .venv/bin/python -m evals.gate_held_fair --caught   # the fabricated drafts it alone caught
"""

from __future__ import annotations

import argparse

from company_ai.core.gate.context import sentences
from evals.gate_heldout import adversarial, draft_verdicts, fair, rivals
from evals.gate_split import Split


def _sentence(text: str, start: int, end: int) -> str:
    for a, b in sentences(text):
        if a <= start < b or a < end <= b:
            return text[a:b]
    return text[start:end]


def _naming(sources: tuple[str, ...], word: str) -> list[str]:
    """The source sentences that hold `word` (lower case), each once."""
    found = []
    for s in sources:
        for a, b in sentences(s):
            if word.lower() in s[a:b].lower():
                found.append(s[a:b])
    return found


def show(part: Split, fabricated: bool) -> None:
    rows = draft_verdicts([*adversarial(part), *rivals(part), *fair(part)])
    n = 0
    for d, js in rows:
        if d.fabricated != fabricated or any(j.claims for j in js) or not any(j.pairs for j in js):
            continue
        n += 1
        print(f"=== {n}. {d.collection}")
        for text, j in zip(d.parts, js, strict=True):
            for s, e in j.pairs:
                pair = text[s:e]
                words = pair.split()
                print(f"  pair: {pair!r}")
                print(f"  draft: {_sentence(text, s, e)}")
                for side in {words[0].strip(",.'’s"), words[-1].strip(",.")}:
                    for sentence in _naming(d.sources, side)[:4]:
                        print(f"    src[{side}]: {sentence}")
    print(f"{n} drafts")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--aside", action="store_true")
    parser.add_argument("--caught", action="store_true")
    args = parser.parse_args()
    show("aside" if args.aside else "dev", args.caught)


if __name__ == "__main__":
    main()
