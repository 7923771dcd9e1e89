"""pyproject.toml tells the truth: every third-party package imported is declared."""

import ast
import re
import sys
import tomllib
from functools import cache
from importlib.metadata import distribution, packages_distributions
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
# The benchmark scripts import each other by bare name (they run as scripts).
OWN = {"company_ai", "tests", "evals", "benchmarks"} | {
    p.stem for p in (ROOT / "benchmarks").glob("*.py")
}


def names(requirements: list[str]) -> set[str]:
    return {canonical(re.match(r"[A-Za-z0-9._-]+", r)[0]) for r in requirements}


def canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def third_party_imports(folder: Path) -> dict[str, str]:
    """Each absolute import (lazy ones in functions too) outside the stdlib: module -> file."""
    found = {}
    for path in folder.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                modules = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                modules = [node.module]
            else:
                continue
            for module in modules:
                top = module.split(".")[0]
                if top not in sys.stdlib_module_names and top not in OWN:
                    found[module] = str(path.relative_to(folder.parent))
    return found


@cache
def installed_modules() -> dict[str, list[str]]:
    return packages_distributions()


@cache
def distribution_of(module: str) -> str:
    """The installed distribution that provides `module` (namespace packages included)."""
    candidates = installed_modules().get(module.split(".")[0], [])
    if len(candidates) > 1:  # e.g. `google`: find the one holding this module's files
        prefix = module.replace(".", "/")
        candidates = [
            d for d in candidates if any(str(f).startswith(prefix) for f in distribution(d).files)
        ]
    assert candidates, f"{module} is imported but no installed distribution provides it"
    return canonical(candidates[0])


def undeclared(folder: Path, declared: set[str]) -> list[str]:
    return sorted(
        f"{file}: {module} ({distribution_of(module)})"
        for module, file in third_party_imports(folder).items()
        if distribution_of(module) not in declared
    )


def test_the_package_declares_every_package_it_imports():
    assert undeclared(ROOT / "company_ai", names(PYPROJECT["dependencies"])) == []


def test_tests_and_benchmarks_import_only_declared_and_dev_packages():
    extras = PYPROJECT["optional-dependencies"]
    declared = names(PYPROJECT["dependencies"] + extras["dev"])
    # tests/deploy/ drives the run launchers themselves: the deploy extra is in the lock.
    assert undeclared(ROOT / "tests", declared | names(extras["deploy"])) == []
    assert undeclared(ROOT / "benchmarks", declared) == []
    assert undeclared(ROOT / "evals", declared) == []


def test_the_check_finds_a_lazy_import_of_an_undeclared_package(tmp_path):
    (tmp_path / "module.py").write_text("def send():\n    import httpx\n")
    assert undeclared(tmp_path, {"pandas"}) == [f"{tmp_path.name}/module.py: httpx (httpx)"]
    assert undeclared(tmp_path, {"httpx"}) == []
