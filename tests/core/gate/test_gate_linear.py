"""The gate on a long run of capitalised words: the same verdicts, in linear work.

The split of a capitalised run into phrases the sources know used to try every chunk
from the longest down, so its work grew with the cube of the run's length. The reference
below is that search, kept as the oracle the faster one must agree with."""

from __future__ import annotations

import random

import pytest

from company_ai.core.gate import find_unsupported_claims
from company_ai.core.gate import presence as gate_presence
from company_ai.core.gate.index import SourceIndex
from company_ai.core.gate.words import CONNECTORS
from evals.gate_eval import title_case_words

SOURCES = [
    "Dr Grace Hopper of Bluewind Logistics Inc. met the Bank of England in Zürich.",
    "O'Brien & Sons Ltd, a Welsh firm, works with IBM and NASA. Smith-Jones Labs (Acme-based)"
    " and Hopper's team. The De La Rue Group plc. Van der Berg. Xyz Systems, not in capitals.",
]
VOCABULARY = (
    "Dr Mr The the of de & van der La De Grace Hopper Hopper's Bluewind Logistics Inc Ltd Corp"
    " Co Group plc Bank England Zürich Zurich O'Brien Sons Welsh Wales IBM NASA XYZ Smith-Jones"
    " Smith Jones Labs Acme-based Acme Rue Berg Van Kelox Baraz Zork Quux Leeds Sales Systems"
).split()


def reference_segments(words, index):
    """The old split (cubic): from each start, every chunk tried from the longest down."""
    segments, i = [], 0
    while i < len(words):
        for j in range(len(words), i, -1):
            chunk = words[i:j]
            if chunk[0].lower() in CONNECTORS or chunk[-1].lower() in CONNECTORS:
                continue
            if gate_presence._known(chunk, index):
                segments.append((i, j, True))
                i = j
                break
        else:
            if words[i].lower() not in CONNECTORS:
                segments.append((i, i + 1, False))
            i += 1
    return segments


def test_the_split_agrees_with_the_exhaustive_search_on_random_runs():
    index = SourceIndex(SOURCES, ["Sam Rivers"])
    rng = random.Random(13)
    for _ in range(4000):
        words = [rng.choice(VOCABULARY) for _ in range(rng.randint(1, 9))]
        assert gate_presence._segments(words, index) == reference_segments(words, index), words


def test_a_long_title_case_draft_gets_its_verdict():
    words = title_case_words(840, seed=3)
    middle = len(words) // 2
    words[middle : middle + 2] = ["Grace", "Hopper"]  # a name the sources hold
    draft = "Hi Grace,\n\n" + " ".join(words) + ".\n\nBest,\nSam"
    assert len(draft) > 5000
    claims = find_unsupported_claims(draft, SOURCES, allow=["Sam"])
    first, second = " ".join(words[:middle]), " ".join(words[middle + 2 :])
    assert [(c.text, c.kind) for c in claims] == [(first, "other"), (second, "other")]
    assert draft[claims[1].start : claims[1].end] == second


def work_for(words, monkeypatch) -> int:
    """Words examined by `_known` plus characters of every phrase looked up in the sources."""
    work = 0
    known, has_phrase = gate_presence._known, SourceIndex.has_phrase

    def counting_known(chunk, index):
        nonlocal work
        work += len(chunk)
        return known(chunk, index)

    def counting_has_phrase(self, key):
        nonlocal work
        work += len(key)
        return has_phrase(self, key)

    with monkeypatch.context() as patch:
        patch.setattr(gate_presence, "_known", counting_known)
        patch.setattr(SourceIndex, "has_phrase", counting_has_phrase)
        find_unsupported_claims(" ".join(words) + ".", SOURCES)
    return work


def with_known_names(words):
    """Every tenth word starts a name the sources hold, so the split also finds phrases."""
    for k in range(0, len(words) - 1, 10):
        words[k : k + 2] = ["Grace", "Hopper"]
    return words


@pytest.mark.parametrize("shape", [list, with_known_names], ids=["unknown", "known names"])
def test_the_work_grows_linearly_with_the_run(monkeypatch, shape):
    short, long = shape(title_case_words(200, 1)), shape(title_case_words(800, 1))
    ratio = work_for(long, monkeypatch) / work_for(short, monkeypatch)
    assert ratio < 4.5, f"4x the words cost {ratio:.1f}x the work (linear: 4, cubic: 64)"
