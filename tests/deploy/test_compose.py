"""deploy/compose.yaml as a Compose client reads it (`docker compose config`): it needs
no Docker daemon, only a client, and is skipped, saying so, where none is installed."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from company_ai import deploy
from tests.deploy.test_deploy import IMAGE_SERVICES

COMPOSE_FILE = Path(__file__).resolve().parents[2] / "deploy" / "compose.yaml"


def compose_client() -> list[str] | None:
    """`docker compose` (v2), else Debian's `docker-compose`, else None."""
    if shutil.which("docker"):
        probe = subprocess.run(["docker", "compose", "version"], capture_output=True)
        if probe.returncode == 0:
            return ["docker", "compose"]
    if shutil.which("docker-compose"):
        return ["docker-compose"]
    return None


CLIENT = compose_client()
needs_client = pytest.mark.skipif(
    CLIENT is None,
    reason="no Compose client here (neither `docker compose` nor `docker-compose`): "
    "deploy/compose.yaml is checked by the structural tests in test_deploy.py only",
)


def config(env: dict[str, str], tmp_path: Path) -> subprocess.CompletedProcess:
    assert CLIENT is not None
    return subprocess.run(
        [*CLIENT, "-f", str(COMPOSE_FILE), "--project-directory", str(tmp_path), "config"],
        capture_output=True,
        text=True,
        env={"PATH": os.environ["PATH"], "HOME": str(tmp_path), **env},
        timeout=120,
    )


@needs_client
def test_compose_config_hands_every_setting_from_the_shell_to_every_service(tmp_path):
    values = {name: f"value-of-{name}" for name in deploy.names()}
    done = config(values, tmp_path)
    assert done.returncode == 0, done.stderr
    services = yaml.safe_load(done.stdout)["services"]
    for service in IMAGE_SERVICES:
        environment = services[service]["environment"]
        assert {n: environment.get(n) for n in values} == values, service
        assert "data:/srv/company_ai/data" in " ".join(services[service]["volumes"])


@needs_client
def test_compose_config_gives_its_own_defaults_and_empty_for_the_rest(tmp_path):
    done = config({"DAGSTER_PG_PASSWORD": "pw"}, tmp_path)
    assert done.returncode == 0, done.stderr
    environment = yaml.safe_load(done.stdout)["services"]["daemon"]["environment"]
    assert environment["COMPANY_AI_DATA_DIR"] == deploy.DATA_DIR
    assert environment["DAGSTER_PG_HOST"] == "postgres"
    assert environment["COMPANY_AI_TIMEZONE"] == ""  # empty: the setting's own default


@needs_client
def test_compose_refuses_to_start_without_the_postgres_password(tmp_path):
    done = config({}, tmp_path)
    assert done.returncode != 0
    assert "set DAGSTER_PG_PASSWORD in .env" in done.stderr
