"""deploy/helm/values.yaml against the Dagster chart's published values schema, on paper.

Helm validates a release's values (the chart's own values.yaml with ours coalesced over
it) against the chart's values.schema.json; this does the same with jsonschema, offline.
The chart files at the pinned release (1.13.27, Apache-2.0) are read from CHART below:
values.schema.json, values.yaml, LICENSE and the Kubernetes definitions the schema refers
to (`_definitions.json`, kubernetesjsonschema.dev v1.18.0), which are inlined so nothing
is fetched. Where they are not stored the check is skipped, saying which files it needs.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
CHART = Path(__file__).resolve().parent / "dagster-chart-1.13.27"
CHART_FILES = ("values.schema.json", "values.yaml", "LICENSE", "_definitions.json")
K8S_DEFINITIONS = "https://kubernetesjsonschema.dev/v1.18.0/_definitions.json#"


def coalesce(base: Any, override: Any) -> Any:
    """Helm's merge of values: maps merge key by key, anything else is replaced, and a
    null in the override removes the key."""
    if not (isinstance(base, dict) and isinstance(override, dict)):
        return copy.deepcopy(override)
    merged = copy.deepcopy(base)
    for key, value in override.items():
        if value is None:
            merged.pop(key, None)
        else:
            merged[key] = coalesce(base.get(key), value)
    return merged


def offline(schema: dict, k8s_definitions: dict) -> dict:
    """`schema` with the Kubernetes definitions inlined and every remote $ref made local;
    a remote $ref to anything else is an error, never a download."""
    schema = copy.deepcopy(schema)
    clash = set(schema.get("definitions", {})) & set(k8s_definitions.get("definitions", {}))
    if clash:
        raise ValueError(f"definitions in both schemas: {sorted(clash)}")
    schema.setdefault("definitions", {}).update(k8s_definitions.get("definitions", {}))

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            ref = node.get("$ref")
            if isinstance(ref, str) and not ref.startswith("#"):
                if not ref.startswith(K8S_DEFINITIONS):
                    raise ValueError(f"a $ref this check cannot resolve offline: {ref}")
                node["$ref"] = "#" + ref.removeprefix(K8S_DEFINITIONS)
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(schema)
    return schema


def problems(values: dict, chart_values: dict, schema: dict, k8s: dict) -> list[str]:
    """Each way the release's values break the chart's schema, as `path: message`."""
    validator = jsonschema.Draft7Validator(offline(schema, k8s))
    release = coalesce(chart_values, values)
    return sorted(
        f"{'/'.join(map(str, e.absolute_path)) or '<top>'}: {e.message}"
        for e in validator.iter_errors(release)
    )


@pytest.mark.skipif(
    not all((CHART / f).is_file() for f in CHART_FILES),
    reason=f"the Dagster chart's files at the pin are not stored in {CHART.relative_to(ROOT)} "
    f"({', '.join(CHART_FILES)}): the values are checked by test_deploy.py only",
)
def test_the_helm_values_pass_the_charts_published_schema():
    schema = json.loads((CHART / "values.schema.json").read_text())
    k8s = json.loads((CHART / "_definitions.json").read_text())
    chart_values = yaml.safe_load((CHART / "values.yaml").read_text())
    values = yaml.safe_load((ROOT / "deploy/helm/values.yaml").read_text())
    assert problems(values, chart_values, schema, k8s) == []
    assert problems(coalesce(values, {"runLauncher": {"typo": 1}}), chart_values, schema, k8s)


# The checker itself, on a small schema of the chart's shape (closed objects, a remote ref).
SCHEMA = {
    "type": "object",
    "properties": {
        "runLauncher": {"$ref": "#/definitions/RunLauncher"},
        "dagsterDaemon": {"$ref": "#/definitions/Daemon"},
    },
    "definitions": {
        "RunLauncher": {
            "type": "object",
            "properties": {"type": {"enum": ["K8sRunLauncher", "CeleryK8sRunLauncher"]}},
            "required": ["type"],
            "additionalProperties": False,
        },
        "Daemon": {
            "type": "object",
            "properties": {
                "volumes": {"type": "array", "items": {"$ref": K8S_DEFINITIONS + "/definitions/v"}}
            },
        },
    },
}
K8S = {"definitions": {"v": {"type": "object", "required": ["name"]}}}
CHART_VALUES = {"runLauncher": {"type": "CeleryK8sRunLauncher"}, "dagsterDaemon": {}}


def test_the_check_passes_good_values_over_the_chart_defaults():
    good = {
        "runLauncher": {"type": "K8sRunLauncher"},
        "dagsterDaemon": {"volumes": [{"name": "d"}]},
    }
    assert problems(good, CHART_VALUES, SCHEMA, K8S) == []


def test_the_check_finds_a_misspelt_key_a_bad_enum_and_a_bad_kubernetes_object():
    bad = {"runLauncher": {"type": "K8sLauncher", "confg": {}}, "dagsterDaemon": {"volumes": [{}]}}
    found = problems(bad, CHART_VALUES, SCHEMA, K8S)
    assert len(found) == 3
    assert any("confg" in p for p in found)
    assert any(p.startswith("runLauncher/type") for p in found)
    assert any(p.startswith("dagsterDaemon/volumes/0") and "'name'" in p for p in found)


def test_coalesce_merges_maps_replaces_lists_and_a_null_removes():
    base = {"a": {"b": 1, "c": [1, 2]}, "d": 1}
    assert coalesce(base, {"a": {"c": [3]}, "d": None}) == {"a": {"b": 1, "c": [3]}}
    assert base == {"a": {"b": 1, "c": [1, 2]}, "d": 1}


def test_an_unknown_remote_ref_is_an_error_never_a_download():
    schema = {"properties": {"x": {"$ref": "https://example.invalid/s.json#/x"}}}
    with pytest.raises(ValueError, match="cannot resolve offline"):
        offline(schema, {})
