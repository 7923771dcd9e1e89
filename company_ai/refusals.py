"""The check every capture carries: `<asset>_refused_nothing`.

A capture reads the world one item at a time (`core/intake.py`): an item it cannot use is
set aside with its reason and the run goes on. The owner sees what was set aside in one
place, the same for every capture: a non-blocking check beside the asset, evaluated in the
same run from what that run refused (never from another partition's materialization),
which fails with its severity (WARN, unless losing the item is worse) and lists each
refused item's key and reason. The asset's metadata carries the same numbers
(`items_read`, `items_refused`, `reasons`) so its plots show their course.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import dagster as dg

MAX_LISTED = 50  # reasons listed in the check's metadata; the count is always whole


def check_name(asset: str) -> str:
    return f"{asset}_refused_nothing"


def refused_nothing_spec(asset: str, what: str) -> dg.AssetCheckSpec:
    """The check's spec, for the asset's `check_specs`; `what` says what was refused and
    where it went (the UI shows it)."""
    return dg.AssetCheckSpec(check_name(asset), asset=asset, blocking=False, description=what)


def refused_nothing(
    asset: str,
    reasons: Mapping[str, str],
    *,
    refused: int | None = None,
    severity: dg.AssetCheckSeverity = dg.AssetCheckSeverity.WARN,
    **metadata: Any,
) -> dg.AssetCheckResult:
    """The check's result for this run: passed when nothing was refused. `refused` counts
    them when `reasons` is capped (defaults to its length)."""
    count = len(reasons) if refused is None else refused
    listed = dict(list(reasons.items())[:MAX_LISTED])
    return dg.AssetCheckResult(
        asset_key=dg.AssetKey(asset),  # named, so a multi-asset's step can return it too
        check_name=check_name(asset),
        passed=count == 0,
        severity=severity,
        description=_described(count, reasons),
        metadata={"refused": count, "reasons": listed, **metadata},
    )


def _described(count: int, reasons: Mapping[str, str], shown: int = 5) -> str:
    """One line for the UI: the first few refused items with their reasons."""
    if not count:
        return "nothing was refused"
    said = "; ".join(f"{key}: {why}" for key, why in list(reasons.items())[:shown])
    more = count - min(shown, len(reasons))
    return f"{count} set aside: {said}" + (f" (and {more} more)" if more > 0 else "")
