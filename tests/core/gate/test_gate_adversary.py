"""The drafts written to fool the gate (`tools/gate_adversary.py`): the set's size, its
aside quarter, and the misattribution class added after the first fifteen."""

from __future__ import annotations

import dataclasses
import functools
import random
from collections import Counter

import pytest

from company_ai.core.gate import find_unsupported_claims
from evals import gate_adversary
from evals.gate_adversary import (
    ALLOW,
    CLASSES,
    adversarial_drafts,
    aside_variants,
    known_names,
)


@functools.cache
def drafts() -> tuple[gate_adversary.Case, ...]:
    return tuple(adversarial_drafts())


def test_every_class_has_fair_and_fabricated_drafts_in_both_parts():
    cases = drafts()
    assert len(cases) >= 400  # issue 14: at least 400 drafts
    counts = Counter((c.perturbation, c.fabricated, c.aside) for c in cases)
    for name in CLASSES:
        for fabricated in (True, False):
            assert counts[name, fabricated, False] > counts[name, fabricated, True] > 0, name


def test_a_quarter_of_each_class_s_variants_is_aside():
    aside = aside_variants()
    for name, labels in CLASSES.items():
        for fabricated, variants in labels.items():
            held = [v for v in variants if (name, fabricated, v) in aside]
            assert len(held) == max(1, round(len(variants) / 4)), (name, fabricated)
    assert all(c.aside == ((c.perturbation, c.fabricated, c.variant) in aside) for c in drafts())


def test_a_class_added_later_leaves_the_first_classes_drafts_as_they_were(monkeypatch):
    first = [c for c in drafts() if c.perturbation in gate_adversary._FIRST_CLASSES]
    added = {n: v for n, v in CLASSES.items() if n not in gate_adversary._FIRST_CLASSES}
    assert added  # the misattribution class
    monkeypatch.setattr(
        gate_adversary, "CLASSES", {n: v for n, v in CLASSES.items() if n not in added}
    )
    assert adversarial_drafts() == first


@pytest.mark.parametrize("fabricated", [True, False])
def test_misattributions_hold_only_supported_claims_the_check_ties_together(fabricated):
    """Every claim of a misattribution draft is in its sources (the presence gate passes
    it); a fabricated one ties a rival's fact to the contact's company, a fair one ties
    each fact to its own subject. (The tuning part only: the aside quarter is for the
    benchmark, once.)"""
    known = known_names()
    cases = [c for c in drafts() if c.perturbation == "misattribution" and not c.aside]
    cases = [c for c in cases if c.fabricated == fabricated]
    assert len({c.variant for c in cases}) >= 6
    for case in cases:
        for text in case.parts.values():
            assert find_unsupported_claims(text, case.sources, allow=ALLOW, known=known) == []
        pairs = [
            c
            for text in case.parts.values()
            for c in find_unsupported_claims(
                text, case.sources, allow=ALLOW, known=known, together=True
            )
        ]
        assert bool(pairs) == fabricated, (case.key, case.body)


def test_a_rival_has_facts_of_its_own():
    world = gate_adversary.make_world(4, random.Random(1))
    f = world.people[0]
    same = [dataclasses.replace(o, people=f.people) for o in world.others(f)]
    assert gate_adversary.rival(f, gate_adversary.World([f, *same]), random.Random(2)) is None
    o = gate_adversary.rival(f, world, random.Random(2))
    assert o is not None and (o.people, o.growth, o.sites) != (f.people, f.growth, f.sites)
