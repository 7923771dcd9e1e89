"""Tests use a package's face, not its privates, unless they live in its folder.

`company_ai/core/` is domain packages, each naming its public face in `__init__.py`'s
`__all__`. A test under `tests/core/<package>/` may use that package's inner modules and
underscore names; any other test file (and helper) may not take an underscore name from
`company_ai.core.<package>` or its inner modules: neither by `from ... import _name` nor
as `module._name` (or `setattr(module, "_name", ...)`) on a module or name it imported.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TESTS = ROOT / "tests"
CORE = ROOT / "company_ai" / "core"
PACKAGES = frozenset(p.name for p in CORE.iterdir() if (p / "__init__.py").is_file())


def package_of(module: str) -> str | None:
    """The core package `module` (a dotted name) is or lies in, if any."""
    parts = module.split(".")
    if parts[:2] == ["company_ai", "core"] and len(parts) > 2 and parts[2] in PACKAGES:
        return parts[2]
    return None


def home_of(path: Path) -> str | None:
    """The package whose folder under tests/core/ holds `path`, if any."""
    parts = path.relative_to(TESTS).parts
    if len(parts) > 2 and parts[0] == "core" and parts[1] in PACKAGES:
        return parts[1]
    return None


def private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def violations(source: str, where: str, home: str | None) -> list[str]:
    """`where:line name` for each private of another core package `source` takes."""
    tree = ast.parse(source)
    found: list[str] = []
    imported: set[str] = set()  # local names bound to another package's modules or names
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:
                owner = package_of(node.module) or package_of(f"{node.module}.{alias.name}")
                if owner is None or owner == home:
                    continue
                if private(alias.name):
                    found.append(f"{where}:{node.lineno} {node.module}.{alias.name}")
                else:
                    imported.add(alias.asname or alias.name)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                owner = package_of(alias.name)
                if owner is not None and owner != home:
                    imported.add(alias.asname or alias.name.split(".")[0])
    for node in ast.walk(tree):
        target, name = None, None
        if isinstance(node, ast.Attribute) and private(node.attr):
            target, name = node.value, node.attr
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in ("setattr", "delattr")
            and len(node.args) >= 2
            and isinstance(node.args[1], ast.Constant)
            and isinstance(node.args[1].value, str)
            and private(node.args[1].value)
        ):
            target, name = node.args[0], node.args[1].value
        root = target
        while isinstance(root, ast.Attribute):  # company_ai.core.x.y._name
            root = root.value
        if target is not None and isinstance(root, ast.Name) and root.id in imported:
            found.append(f"{where}:{node.lineno} {ast.unparse(target)}.{name}")
    return sorted(found, key=lambda hit: int(hit.split(" ")[0].rsplit(":", 1)[1]))


def test_no_test_outside_a_package_takes_its_privates():
    found = []
    for path in sorted(TESTS.rglob("*.py")):
        where = path.relative_to(ROOT).as_posix()
        found += violations(path.read_text(encoding="utf-8"), where, home_of(path))
    assert not found, "a test outside tests/core/<package>/ uses a private:\n" + "\n".join(found)


def test_the_check_sees_each_way_of_taking_a_private():
    source = (
        "from company_ai.core.vectors.store import SYNC_THRESHOLD, _id_map\n"
        "from company_ai.core.gate import presence as gate_presence\n"
        "import company_ai.core.ops.snapshots\n"
        "gate_presence._known(1, 2)\n"
        "monkeypatch.setattr(gate_presence, '_segments', None)\n"
        "company_ai.core.ops.snapshots._copy_db\n"
    )
    assert violations(source, "t.py", None) == [
        "t.py:1 company_ai.core.vectors.store._id_map",
        "t.py:4 gate_presence._known",
        "t.py:5 gate_presence._segments",
        "t.py:6 company_ai.core.ops.snapshots._copy_db",
    ]
    # In the package's own folder the same lines are fine, and so are other packages' faces.
    assert violations(source.replace("vectors", "gate").replace("ops", "gate"), "t", "gate") == []
    assert violations("from company_ai.core.crm import normalize_email\n", "t", None) == []
