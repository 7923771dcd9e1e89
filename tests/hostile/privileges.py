"""Run a command the way an ordinary user would meet a read-only folder.

CI runs as root, and root ignores permission bits. Rather than switch users (the
interpreter under /root would become unreadable), the child drops the two capabilities
that let root override them (CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH) from its bounding
set and re-executes itself: it stays uid 0, owner of every file, but a file or folder
without a write bit is read-only to it, as it is to anyone else.
"""

from __future__ import annotations

import os
import subprocess
import sys

_DROP_AND_EXEC = (
    "import ctypes, os, sys\n"
    "libc = ctypes.CDLL(None, use_errno=True)\n"
    "for cap in (1, 2):  # CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH\n"
    "    if libc.prctl(24, cap, 0, 0, 0) != 0:  # PR_CAPBSET_DROP\n"
    "        sys.exit(f'cannot drop capability {cap}: errno {ctypes.get_errno()}')\n"
    "os.execv(sys.executable, [sys.executable, *sys.argv[1:]])\n"
)


def run_python_unprivileged(*args: str) -> subprocess.CompletedProcess:
    """`python *args` in its own process, unable to write where permission bits forbid."""
    prefix = ["-c", _DROP_AND_EXEC] if os.geteuid() == 0 else []
    return subprocess.run(
        [sys.executable, *prefix, *args],
        capture_output=True,
        text=True,
        env=os.environ | {"PYTHONPATH": os.getcwd()},
    )
