"""The deployment files' environment, written from the one settings list.

Every name a run may read (settings.DEFAULTS, settings.SECRETS and Dagster's own instance
variables) is written into each place that hands the environment on: the compose file's
services, the Docker run launcher's `env_vars`, and the Kubernetes ConfigMap and Secret
that the Helm values give every pod and every run. The generated lines sit between
`# BEGIN generated: NAME` and `# END generated: NAME` in hand-written files, so the
comments around them stay. `python -m company_ai.deploy` rewrites them; `--check` (and
tests/deploy/) fails when a file is not what the list gives, so a new setting cannot miss
a run. Stdlib only; nothing here reads the environment.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Callable
from pathlib import Path

from company_ai.settings import DEFAULTS, SECRET_SETTINGS, SECRETS

ROOT = Path(__file__).resolve().parent.parent

# What deploy/dagster.yaml reads: the instance's PostgreSQL. The Helm chart sets these
# itself (its `postgresql` values and password Secret), so Kubernetes leaves them out.
INSTANCE = (
    "DAGSTER_PG_HOST",
    "DAGSTER_PG_PORT",
    "DAGSTER_PG_DB",
    "DAGSTER_PG_USER",
    "DAGSTER_PG_PASSWORD",
)
SECRET = frozenset({*SECRETS, *SECRET_SETTINGS, "DAGSTER_PG_PASSWORD"})

DATA_DIR = "/srv/company_ai/data"  # the volume every container and every run mounts

# Values the compose file gives when the shell or .env does not; every other name passes
# through empty, and an empty setting is its default (settings.Settings.from_env).
COMPOSE_VALUES = {
    "COMPANY_AI_DATA_DIR": DATA_DIR,
    "DAGSTER_PG_HOST": "postgres",
    "DAGSTER_PG_PORT": "5432",
    "DAGSTER_PG_DB": "dagster",
    "DAGSTER_PG_USER": "dagster",
    # The compose file's Chroma server; used once settings.py has COMPANY_AI_CHROMA_URL.
    "COMPANY_AI_CHROMA_URL": "http://chroma:8000",
}
# Names compose refuses to start without (`${NAME:?…}`).
COMPOSE_REQUIRED = ("DAGSTER_PG_PASSWORD",)
K8S_VALUES = {"COMPANY_AI_DATA_DIR": DATA_DIR}

CONFIGMAP = "company-ai-settings"
SECRET_NAME = "company-ai-secrets"

FILES = (
    "deploy/compose.yaml",
    "deploy/docker/dagster.yaml",
    "deploy/helm/settings.yaml",
)


def names() -> list[str]:
    """Every environment variable a run may read, in one order."""
    return [*DEFAULTS, *SECRETS, *INSTANCE]


def k8s_names() -> list[str]:
    """What the ConfigMap and the Secret carry: every setting but the chart's own."""
    return [n for n in names() if n not in INSTANCE]


def _compose_environment(old: list[str]) -> list[str]:
    lines = []
    for name in names():
        if name in COMPOSE_REQUIRED:
            lines.append(f"{name}: ${{{name}:?set {name} in .env}}")
        else:
            lines.append(f"{name}: ${{{name}:-{COMPOSE_VALUES.get(name, '')}}}")
    return lines


def _docker_env_vars(old: list[str]) -> list[str]:
    return [f"- {name}" for name in names()]


def _quoted(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _kept(old: list[str]) -> dict[str, str]:
    """`NAME: value` lines already in a block: a value someone filled in is kept."""
    return dict(line.strip().split(": ", 1) for line in old if ": " in line)


def _configmap_data(old: list[str]) -> list[str]:
    kept = _kept(old)
    return [
        f"{n}: {kept.get(n, _quoted(K8S_VALUES.get(n, '')))}"
        for n in k8s_names()
        if n not in SECRET
    ]


def _secret_data(old: list[str]) -> list[str]:
    kept = _kept(old)
    return [f"{n}: {kept.get(n, _quoted(''))}" for n in k8s_names() if n in SECRET]


BLOCKS: dict[str, Callable[[list[str]], list[str]]] = {
    "compose-environment": _compose_environment,
    "docker-env-vars": _docker_env_vars,
    "configmap-data": _configmap_data,
    "secret-data": _secret_data,
}

_BLOCK = re.compile(
    r"^(?P<indent>[ \t]*)# BEGIN generated: (?P<name>[\w-]+)\n"
    r"(?P<body>.*?)"
    r"^[ \t]*# END generated: (?P=name)\n",
    re.MULTILINE | re.DOTALL,
)


class DeployFileError(ValueError):
    """A deployment file whose generated blocks cannot be rewritten."""


def render(text: str, where: str = "text") -> str:
    """`text` with each generated block rewritten from the settings list."""
    begins = re.findall(r"# BEGIN generated: ([\w-]+)", text)
    ends = re.findall(r"# END generated: ([\w-]+)", text)
    if begins != ends:
        raise DeployFileError(f"{where}: unmatched generated blocks (BEGIN {begins}, END {ends})")
    for name in begins:
        if name not in BLOCKS:
            raise DeployFileError(f"{where}: no generated block is called {name!r}")

    def block(match: re.Match[str]) -> str:
        indent, name = match["indent"], match["name"]
        body = "".join(f"{indent}{line}\n" for line in BLOCKS[name](match["body"].splitlines()))
        return f"{indent}# BEGIN generated: {name}\n{body}{indent}# END generated: {name}\n"

    return _BLOCK.sub(block, text)


def stale(root: Path = ROOT) -> list[str]:
    """The deployment files that differ from what the settings list gives."""
    return [f for f in FILES if render((root / f).read_text(), f) != (root / f).read_text()]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m company_ai.deploy", description=__doc__)
    parser.add_argument("--check", action="store_true", help="change nothing; fail if stale")
    args = parser.parse_args(argv)
    if args.check:
        out = stale()
        for f in out:
            print(f"{f} is stale: run python -m company_ai.deploy", file=sys.stderr)
        return 1 if out else 0
    for f in FILES:
        path = ROOT / f
        text = path.read_text()
        new = render(text, f)
        if new != text:
            path.write_text(new)
            print(f"rewrote {f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
