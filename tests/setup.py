"""The code location as the tests build it: test settings and a clock the tests control.

Everything is built from a `Setup` (company_ai/setup.py), as `definitions.py` builds it,
but with partitions from 2025 on and `CLOCK`, which reads the wall clock unless a test
sets it (the `clock` fixture in conftest.py does, and puts it back after the test).
"""

from __future__ import annotations

from datetime import datetime

from company_ai.core.times import utc_now
from company_ai.definitions import all_assets, build
from company_ai.settings import Settings
from company_ai.setup import Setup


class TestClock:
    """The wall clock, or the instant a test set."""

    def __init__(self) -> None:
        self.at: datetime | None = None

    def __call__(self) -> datetime:
        return self.at or utc_now()


CLOCK = TestClock()
SETTINGS = Settings.from_env(
    {"COMPANY_AI_START_DATE": "2025-01-01", "COMPANY_AI_DATA_DIR": "/nonexistent/company-ai"}
)
SETUP = Setup(SETTINGS, CLOCK)
DEFS = build(SETUP)
_assets, _checks = all_assets(SETUP)
BUILT = {k.to_user_string(): a for a in _assets for k in a.keys} | {
    key.name: c for c in _checks for key in c.check_keys
}


def named(*names: str):
    """The built assets (or separate checks) of these names, in this order; an asset made
    in a multi-asset gives that multi-asset."""
    found = [BUILT[name] for name in names]
    return found[0] if len(found) == 1 else found
