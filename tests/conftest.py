import itertools
import shutil
import subprocess
import tempfile
from datetime import UTC, datetime
from pathlib import Path

import pytest

from company_ai.core.store import Stores
from company_ai.sample_world.crm import load_sample

AS_OF = datetime(2026, 11, 30, 7, 0, tzinfo=UTC)


def fixed_clock(at: str = "2026-11-29T00:30:00Z"):
    """A writer's clock that always says `at` (a stored UTC time)."""
    moment = datetime.fromisoformat(at)
    return lambda: moment


def episode(**overrides):
    """A valid episode dict; override any field."""
    return {
        "contact_id": 1,
        "episode_type": "note",
        "content": "Met at the Leeds meetup.",
        "source": "manual",
        "confidence": 1.0,
        "created_at": "2026-11-29T10:00:00Z",
    } | overrides


@pytest.fixture
def clock():
    """`clock(at)` sets the code location's clock (tests/setup.py) for the rest of the test."""
    from tests.setup import CLOCK

    def set_to(at: datetime) -> None:
        CLOCK.at = at

    yield set_to
    CLOCK.at = None


@pytest.fixture
def stores(tmp_path):
    return Stores(tmp_path / "data")


@pytest.fixture(scope="session")
def sample_dir(tmp_path_factory):
    """A small sample CRM loaded once per session; tests must only read it."""
    data = tmp_path_factory.mktemp("sample") / "data"
    load_sample(Stores(data), contacts=300, as_of=AS_OF)
    return data


@pytest.fixture
def data(tmp_path, sample_dir):
    """A private copy of the sample data directory, for tests that write to it."""
    target = tmp_path / "data"
    shutil.copytree(sample_dir, target)
    return target


@pytest.fixture
def sample_stores(sample_dir):
    return Stores(sample_dir)


SAMPLE_VAULT = Path(__file__).resolve().parent.parent / "company_ai" / "sample_vault"
# Every private note of the sample vault carries this word, and no public note does.
PRIVATE_CANARY = "quartzheron"


@pytest.fixture(scope="session")
def minilm():
    """The offline embedding model, loaded once per test session."""
    from company_ai.core.embedding import load_minilm

    return load_minilm()


@pytest.fixture
def vault(tmp_path):
    """A private copy of the sample vault that a test may edit."""
    return Path(shutil.copytree(SAMPLE_VAULT, tmp_path / "vault"))


@pytest.fixture(scope="session")
def pg_server():
    """A real PostgreSQL server for the session (tests/pg_server.py), or a skip that says why."""
    from tests.pg_server import NOT_INSTALLED, PgServer, find_bindir

    bindir = find_bindir()
    if bindir is None:
        pytest.skip(NOT_INSTALLED)
    # Not under pytest's folder: as root the server runs as `nobody`, who cannot enter it.
    root = Path(tempfile.mkdtemp(prefix="company-ai-pg-"))
    try:
        server = PgServer(bindir, root).start()
        yield server
        server.stop()
    finally:
        shutil.rmtree(root, ignore_errors=True)


_DATABASES = itertools.count(1)


@pytest.fixture
def pg_url(pg_server):
    """The URL of a fresh, empty database on the session's server, for this test only."""
    return pg_server.create_database(f"test_{next(_DATABASES)}")


@pytest.fixture(scope="session")
def demo(tmp_path_factory):
    """One demo run (150 contacts, 2 days), shared by every test that uses it: the ones that
    write copy it first (the demo costs minutes)."""
    from tests.demo_run import ENV, demo_args

    root = tmp_path_factory.mktemp("demo") / "demo"
    args = demo_args(root, "--contacts", "150", "--days", "2")
    done = subprocess.run(args, capture_output=True, text=True, env=ENV)
    assert done.returncode == 0, done.stderr[-3000:]
    return root, done
