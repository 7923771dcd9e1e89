"""A package whose names load on first use (PEP 562): importing it costs nothing until a
name is asked for, so a read path pays only for the modules it uses."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from importlib import import_module
from typing import Any


def lazy_names(
    package: str, homes: Mapping[str, str], namespace: dict[str, Any]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """`__getattr__` and `__dir__` for `package`, whose name N lives in the submodule
    `homes[N]`; a name found once is kept in `namespace` (the package's globals)."""

    def getattr_(name: str) -> Any:
        home = homes.get(name)
        if home is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = namespace[name] = getattr(import_module(f"{package}.{home}"), name)
        return value

    def dir_() -> list[str]:
        return sorted(homes)

    return getattr_, dir_
