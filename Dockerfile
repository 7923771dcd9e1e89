# One image for every process of company_ai: the webserver, the daemon, the code server,
# each run worker (Docker and Kubernetes launchers start runs from it) and `chroma run`.
# Built from requirements.lock, so the image has exactly the tested versions.
#   docker build -t company-ai:0.1.0 .        (docs/deploy.md)
# Any Debian bookworm with Python 3.11 and python3-venv will do (the lock is for 3.11).
ARG BASE=python:3.11-slim-bookworm
FROM ${BASE}

# Bytecode is compiled once at build time (uv --compile-bytecode), as scripts/setup does.
ENV PYTHONUNBUFFERED=1 \
    VIRTUAL_ENV=/opt/venv \
    PATH=/opt/venv/bin:$PATH \
    DAGSTER_HOME=/opt/dagster/home \
    COMPANY_AI_DATA_DIR=/srv/company_ai/data

# PostgreSQL's client tools (pg_dump, pg_restore) for the snapshots of stores on the
# server: Debian bookworm's are version 15, so the server is 15 too (deploy/compose.yaml).
RUN apt-get update && apt-get install -y --no-install-recommends postgresql-client \
    && rm -rf /var/lib/apt/lists/*

# The lock first: this layer is rebuilt only when the lock changes, not on every code edit.
COPY requirements.lock /tmp/requirements.lock
RUN python3 -m venv /opt/venv \
    && /opt/venv/bin/pip install --no-cache-dir --disable-pip-version-check "uv==0.13.9" \
    && /opt/venv/bin/uv pip sync --no-cache --compile-bytecode --python /opt/venv/bin/python \
        /tmp/requirements.lock \
    && rm /tmp/requirements.lock

WORKDIR /opt/company_ai
COPY pyproject.toml ./
COPY company_ai ./company_ai
COPY deploy ./deploy
RUN /opt/venv/bin/uv pip install --no-cache --compile-bytecode --no-deps \
        --python /opt/venv/bin/python .

# Not root: one fixed uid, so volumes can be owned by it on any host.
RUN useradd --uid 10001 --user-group --no-create-home --home-dir /opt/dagster/home company_ai \
    && mkdir -p /opt/dagster/home /srv/company_ai/data \
    && chown -R company_ai:company_ai /opt/dagster/home /srv/company_ai
COPY --chown=company_ai:company_ai deploy/docker/dagster.yaml /opt/dagster/home/dagster.yaml
USER company_ai

EXPOSE 3000 4000
# The code server by default; compose and the Helm chart name the other commands.
CMD ["dagster", "code-server", "start", "-h", "0.0.0.0", "-p", "4000", \
     "-m", "company_ai.definitions", "--location-name", "company_ai"]
