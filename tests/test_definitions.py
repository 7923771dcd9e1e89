import ast
from pathlib import Path

import dagster as dg
import pytest

from company_ai.definitions import defs

ROOT = Path(__file__).resolve().parent.parent


def asset_specs():
    return list(defs.resolve_all_asset_specs())


def test_definitions_load():
    dg.Definitions.validate_loadable(defs)
    assert asset_specs()


@pytest.mark.parametrize("spec", asset_specs(), ids=lambda s: s.key.to_user_string())
def test_every_asset_is_described_grouped_kinded_and_owned(spec):
    assert spec.description and len(spec.description.split()) > 10, "the docstring is the UI"
    assert spec.group_name and spec.group_name != "default"
    assert spec.kinds
    assert spec.owners


def test_core_never_imports_dagster():
    offenders = []
    for path in (ROOT / "company_ai" / "core").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            names = (
                [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else [node.module or ""]
                if isinstance(node, ast.ImportFrom)
                else []
            )
            offenders += [f"{path.name}: {n}" for n in names if n.split(".")[0] == "dagster"]
    assert offenders == []


def test_every_job_has_a_max_runtime():
    for job in defs.jobs or []:
        assert int(job.tags["dagster/max_runtime"]) > 0, job.name


def test_the_readme_names_every_asset():
    readme = (ROOT / "README.md").read_text()
    missing = [
        s.key.to_user_string() for s in asset_specs() if f"`{s.key.to_user_string()}`" not in readme
    ]
    assert missing == []
