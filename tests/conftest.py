import itertools
import shutil
import subprocess
import tempfile
from datetime import UTC, datetime
from pathlib import Path

import pytest

from company_ai.core.store import DEFAULT_BUSY_TIMEOUT_MS, Stores
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


def pytest_addoption(parser):
    parser.addoption(
        "--stores",
        choices=("sqlite", "postgres"),
        default="sqlite",
        help="postgres: every Stores made in this process without a database URL gets a "
        "database of its own on the session's PostgreSQL server (one per data directory), "
        "so the stores' own tests run on PostgreSQL; scripts/test runs them both ways",
    )


def pytest_configure(config):
    config.addinivalue_line(
        "markers",
        "sqlite_only(why): the test reads a SQLite file itself; not run on --stores=postgres",
    )


def pytest_collection_modifyitems(config, items):
    if config.getoption("--stores") != "postgres":
        return
    for item in items:
        marker = item.get_closest_marker("sqlite_only")
        if marker is not None:
            why = marker.args[0] if marker.args else "it reads a SQLite file itself"
            item.add_marker(pytest.mark.skip(reason=f"SQLite only: {why}"))


_SERVER_DATABASES: dict[Path, str] = {}
_STORES_SERVER: list = []  # the session's PostgreSQL server, under --stores=postgres


def database_for(data_dir) -> str:
    """Under --stores=postgres, the database a data directory's stores live in ("" else)."""
    return _SERVER_DATABASES.get(Path(data_dir).resolve(), "")


@pytest.fixture(scope="session", autouse=True)
def stores_on_server(request):
    """Under --stores=postgres, `Stores(data_dir)` puts the stores in a database named for
    the data directory (the same directory, the same database, as with files)."""
    if request.config.getoption("--stores") != "postgres":
        yield None
        return
    server = request.getfixturevalue("pg_server")
    _STORES_SERVER.append(server)
    plain_init = Stores.__init__
    numbers = itertools.count(1)

    def init(
        self, data_dir, busy_timeout_ms=DEFAULT_BUSY_TIMEOUT_MS, database_url="", chroma_url=""
    ):
        if not database_url:
            key = Path(data_dir).resolve()
            if key not in _SERVER_DATABASES:
                _SERVER_DATABASES[key] = server.create_database(f"stores_{next(numbers)}")
            database_url = _SERVER_DATABASES[key]
        plain_init(self, data_dir, busy_timeout_ms, database_url, chroma_url)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(Stores, "__init__", init)
        yield server


def copy_data_dir(source: Path, target: Path) -> Path:
    """A copy of a data directory, and under --stores=postgres of its database too."""
    shutil.copytree(source, target)
    url = database_for(source)
    if url:
        name = f"copy_{len(_SERVER_DATABASES) + 1}"
        _SERVER_DATABASES[target.resolve()] = _STORES_SERVER[0].create_database(
            name, template=url.rsplit("/", 1)[1]
        )
    return target


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
    return copy_data_dir(sample_dir, tmp_path / "data")


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


@pytest.fixture(scope="module")
def chroma_server(tmp_path_factory):
    """A real Chroma server (`chroma run`, tests/chroma_server.py) for one test module; its
    persist directory is `.path`. A test that stops it starts it again before it ends."""
    from tests.chroma_server import ChromaServer

    server = ChromaServer(tmp_path_factory.mktemp("chroma") / "persist").start()
    yield server
    server.stop()


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
