"""Measurements of the product, not part of it: the gate's labelled and adversarial drafts,
its fair drafts, the rival sets (`data/`), and the scores over them. Tests and benchmarks
import this package; the product never does (the wheel ships `company_ai` alone)."""
