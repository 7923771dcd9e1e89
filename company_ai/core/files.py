"""Writing a file so that a reader sees the old version or the new one, never half of either."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def write_atomic(path: str | Path, data: bytes, *, durable: bool = True) -> None:
    """Write `data` to a temporary file beside `path`, then `os.replace` it over `path`.

    `durable` fsyncs the file first, so a power cut cannot leave an empty file behind the
    new name; copies that can be rebuilt (vault staging) skip it for speed. A failed write
    leaves the old file and no temporary file.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            if durable:
                handle.flush()
                os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
