"""Research's HTTP source against a local server: pages, redirects, a slow answer, a 5 MB
page, robots.txt, the per-host pace, private addresses, odd numeric hosts, a header
trickle, a gzip bomb. No network: the only server listens on 127.0.0.1, allowed by name."""

import gzip
import itertools
import socket
import time
import tracemalloc

import pytest

from company_ai.core.outreach import WebPages, check_domain, web
from company_ai.core.outreach.research import SourceError
from company_ai.core.outreach.web import USER_AGENT, Forbidden
from company_ai.resources.research import ResearchSource
from tests.fakes import FakeServer, Reply
from tests.hostile.web_server import RecipeServer

PAGE = (
    "<html><head><title>Acme</title><script>var secret = 1;</script></head><body>"
    "<h1>Acme Ltd</h1><p>We make  anvils in Leeds.</p><ul><li>Ada Lovelace, CTO, Leeds</li>"
    "</ul></body></html>"
)


def html(text: str = PAGE, **fields) -> Reply:
    return Reply(raw=text, content_type="text/html; charset=utf-8", **fields)


class Clock:
    """A clock that only the fake sleep moves."""

    def __init__(self) -> None:
        self.now = 100.0
        self.slept: list[float] = []

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.slept.append(round(seconds, 3))
        self.now += seconds


@pytest.fixture
def server():
    with FakeServer() as fake:
        yield fake


def local(url: str) -> list[str]:
    """The allowance for a test's own server (`http://127.0.0.1:PORT`)."""
    return [url.removeprefix("http://")]


def pages(clock: Clock | None = None, timeout: float = 5.0, allow: str = "", **limits) -> WebPages:
    clock = clock or Clock()
    limits.setdefault("min_interval_s", 0)
    return WebPages(
        timeout_s=timeout, clock=clock, sleep=clock.sleep, allow_hosts=local(allow), **limits
    )


def paths(server) -> list[str]:
    return [path for path, _ in server.requests]


def test_a_page_is_read_as_text_without_scripts_or_title(server):
    server.script("/acme/", html())
    text = pages(allow=server.url).text(f"{server.url}/acme/")
    assert text == "Acme Ltd\nWe make anvils in Leeds.\nAda Lovelace, CTO, Leeds"
    assert paths(server) == ["/robots.txt", "/acme/"]  # no robots.txt (404): allowed
    assert server.requests[1][1]["User-Agent"] == USER_AGENT


def test_redirects_are_followed_up_to_the_limit_and_no_further(server):
    server.script("/old", Reply(status=301, raw="", headers={"Location": "/new"}))
    server.script("/new", Reply(status=302, raw="", headers={"Location": f"{server.url}/acme/"}))
    server.script("/acme/", html())
    assert "We make anvils in Leeds." in pages(allow=server.url).text(f"{server.url}/old")
    server.script("/loop", Reply(status=307, raw="", headers={"Location": "/loop"}))
    with pytest.raises(SourceError, match="more than 3 redirects"):
        pages(allow=server.url).text(f"{server.url}/loop")
    assert paths(server).count("/loop") == 4  # the first request and three redirects


def test_a_redirect_into_a_path_robots_forbids_is_not_followed(server):
    server.script("/robots.txt", Reply(raw="User-agent: *\nDisallow: /private/\n"))
    server.script("/open", Reply(status=302, raw="", headers={"Location": "/private/team"}))
    with pytest.raises(SourceError, match="disallows"):
        pages(allow=server.url).text(f"{server.url}/open")
    assert "/private/team" not in paths(server)


def test_a_slow_answer_times_out_with_a_clear_error(server):
    server.script("/slow", html(delay_s=1.0))
    with pytest.raises(SourceError, match="timed out"):
        pages(timeout=0.2, allow=server.url).text(f"{server.url}/slow")


@pytest.mark.parametrize("length", [True, False], ids=["content-length", "no-length"])
def test_a_5_mb_page_is_refused_without_reading_it_all(server, length):
    server.script("/big", html("<p>" + "x" * 5_000_000 + "</p>", length=length))
    with pytest.raises(SourceError, match="over the 262,144"):
        pages(allow=server.url).text(f"{server.url}/big")


def test_robots_txt_forbidding_the_path_is_honoured_and_read_once_per_host(server):
    server.script(
        "/robots.txt",
        Reply(raw="User-agent: company-ai-research\nDisallow: /acme/\n", content_type="text/plain"),
    )
    server.script("/acme/", html())
    server.script("/other/", html())
    web = pages(allow=server.url)
    with pytest.raises(SourceError, match="robots.txt disallows"):
        web.text(f"{server.url}/acme/")
    assert web.text(f"{server.url}/other/")
    assert paths(server) == ["/robots.txt", "/other/"]  # the forbidden page never fetched


def test_a_robots_txt_that_cannot_be_read_keeps_research_off_the_host(server):
    server.script("/robots.txt", Reply(status=503, raw="down"))
    server.script("/acme/", html())
    with pytest.raises(SourceError, match="robots.txt answered HTTP 503"):
        pages(allow=server.url).text(f"{server.url}/acme/")
    assert "/acme/" not in paths(server)


def test_one_request_per_host_every_interval_robots_included(server):
    server.script("/a", html())
    server.script("/b", html())
    clock = Clock()
    other = server.url.replace("127.0.0.1", "localhost")  # another host: its own pace
    web = WebPages(
        clock=clock,
        sleep=clock.sleep,
        min_interval_s=2.0,
        allow_hosts=local(server.url) + local(other),
    )
    web.text(f"{server.url}/a")
    web.text(f"{server.url}/b")
    assert clock.slept == [2.0, 2.0]  # robots.txt, then /a after 2 s, then /b after 2 s
    web.text(f"{other}/a")
    assert clock.slept == [2.0, 2.0, 2.0]  # only between its own robots.txt and page


def test_only_text_is_read_and_its_declared_charset_is_honoured(server):
    server.script("/doc.pdf", Reply(raw=b"%PDF-1.4", content_type="application/pdf"))
    with pytest.raises(SourceError, match="application/pdf, not a web page"):
        pages(allow=server.url).text(f"{server.url}/doc.pdf")
    server.script(
        "/latin",
        Reply(raw="<p>Zürich</p>".encode("latin-1"), content_type="text/html; charset=iso-8859-1"),
    )
    assert pages(allow=server.url).text(f"{server.url}/latin") == "Zürich"
    server.script("/gone", Reply(status=404, raw="no"))
    with pytest.raises(SourceError, match="HTTP 404"):
        pages(allow=server.url).text(f"{server.url}/gone")


@pytest.mark.parametrize(
    "domain", ["127.0.0.1", "localhost", "acme.example:8080", "acme.example/x", "", "a..b"]
)
def test_only_a_domain_name_can_be_researched(domain):
    with pytest.raises(SourceError, match="not a company domain"):
        check_domain(domain)
    assert check_domain("northwind-labs.example") == "northwind-labs.example"


def test_the_resource_reads_real_pages_in_http_mode_and_local_pages_by_default(server, tmp_path):
    server.script("/sites/acme.example/", html())
    source = ResearchSource(
        pages_dir=str(tmp_path),
        mode="http",
        url=f"{server.url}/sites/{{domain}}/",
        min_interval_s=0,
        allow_hosts=local(server.url),
    )
    assert "Ada Lovelace, CTO, Leeds" in source.page("acme.example")
    with pytest.raises(SourceError, match="not a company domain"):
        source.page("127.0.0.1")
    (tmp_path / "acme.example.html").write_text("<p>Offline page of Acme.</p>")
    assert ResearchSource(pages_dir=str(tmp_path)).page("acme.example") == "Offline page of Acme."


def test_a_page_that_keeps_sending_past_the_deadline_is_dropped(server):
    class Ticking(Clock):
        def __call__(self) -> float:
            self.now += 10.0  # every look at the clock: 10 s later
            return self.now

    server.script("/trickle", html())
    clock = Ticking()
    web = pages(clock, allow=server.url, deadline_s=5)
    with pytest.raises(SourceError, match="took over 5 s to send"):
        web.text(f"{server.url}/trickle")


def test_the_resource_applies_its_timeout(server, tmp_path):
    server.script("/sites/slow.example/", html(delay_s=1.0))
    source = ResearchSource(
        pages_dir=str(tmp_path),
        mode="http",
        url=f"{server.url}/sites/{{domain}}/",
        min_interval_s=0,
        timeout_s=0.2,
        allow_hosts=local(server.url),
    )
    with pytest.raises(SourceError, match="timed out"):
        source.page("slow.example")


# --- addresses: every hop public, checked before any connection (defect 7) -------------


@pytest.fixture
def connections(monkeypatch):
    """Every address a socket is opened to (the real connection follows)."""
    made: list[tuple] = []
    real = socket.create_connection

    def connect(address, *args, **kwargs):
        made.append(address)
        return real(address, *args, **kwargs)

    monkeypatch.setattr(socket, "create_connection", connect)
    return made


@pytest.mark.parametrize(
    ("url", "why"),
    [
        ("http://169.254.169.254/latest/meta-data/", "link-local"),
        ("http://127.0.0.2/", "loopback"),
        ("http://[::1]/", "loopback"),
        ("http://[::ffff:127.0.0.1]/", "loopback"),
        ("http://[::ffff:169.254.169.254]/", "link-local"),
        ("http://[2002:7f00:1::]/", "loopback"),  # 6to4 wrapping 127.0.0.1
        ("http://[2001:0:4136:e378:8000:63bf:80ff:fffe]/", "127.0.0.1"),  # Teredo
        ("http://10.0.0.8/", "private"),
        ("http://192.168.1.1/", "private"),
        ("http://100.64.0.1/", "shared"),
        ("http://0.0.0.0/", "unspecified"),
        ("http://224.0.0.1/", "multicast"),
        ("http://240.0.0.1/", "reserved"),
        ("http://2130706433/", "a number"),
        ("http://0x7f.1/", "a number"),
        ("http://0x7f000001/", "a number"),
        ("http://127.1/", "a number"),
        ("http://017700000001/", "a number"),
        ("http://127.0.0.01/", "a number"),
    ],
)
def test_private_and_odd_numeric_hosts_are_refused_before_any_connection(url, why, connections):
    with pytest.raises(Forbidden, match=why):
        pages().text(url)
    assert connections == []


def test_a_name_is_refused_if_any_address_it_resolves_to_is_private(monkeypatch, connections):
    asked: list[str] = []

    def resolve(host, port, *args, **kwargs):
        asked.append(host)
        return [
            (socket.AF_INET, socket.SOCK_STREAM, 6, "", ("93.184.216.34", port)),
            (socket.AF_INET, socket.SOCK_STREAM, 6, "", ("169.254.169.254", port)),
        ]

    monkeypatch.setattr(socket, "getaddrinfo", resolve)
    with pytest.raises(SourceError, match="169.254.169.254 is a link-local"):
        pages().text("http://rebind.example/")
    assert asked == ["rebind.example"] and connections == []  # robots.txt: refused too


def test_each_connection_goes_to_the_address_its_one_lookup_checked(server, monkeypatch):
    """DNS rebinding: the name answers 127.0.0.1 (taken here for a public address) once,
    then 127.0.0.2. The socket is opened to the address checked, never to the name (which
    a second lookup would turn into 127.0.0.2), and the next connection's own lookup is
    checked again: the rebound answer is refused."""
    server.script("/acme/", html())
    port = int(server.url.rpartition(":")[2])
    answers = itertools.chain(["127.0.0.1"], itertools.repeat("127.0.0.2"))
    real_problem = web.address_problem
    monkeypatch.setattr(
        web, "address_problem", lambda ip: None if str(ip) == "127.0.0.1" else real_problem(ip)
    )
    made: list[tuple] = []
    real_connect, real_resolve = socket.create_connection, socket.getaddrinfo

    def resolve(host, port_, *args, **kwargs):
        if host != "shop.example":  # the socket's own lookup of the address given
            return real_resolve(host, port_, *args, **kwargs)
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (next(answers), port_))]

    def connect(address, *args, **kwargs):
        made.append(address)
        return real_connect(address, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", resolve)
    monkeypatch.setattr(socket, "create_connection", connect)
    with pytest.raises(Forbidden, match="127.0.0.2 is a loopback"):
        pages().text(f"http://shop.example:{port}/acme/")
    assert made == [("127.0.0.1", port)]  # robots.txt, at the checked address; no page
    assert paths(server) == ["/robots.txt"]


def test_the_local_server_itself_is_refused_without_an_explicit_allowance(server, connections):
    server.script("/acme/", html())
    with pytest.raises(Forbidden, match="127.0.0.1 is a loopback address"):
        pages().text(f"{server.url}/acme/")
    assert connections == [] and server.requests == []


def test_a_redirect_to_a_private_address_is_refused_before_connecting(server, connections):
    server.script(
        "/go", Reply(status=302, raw="", headers={"Location": "http://169.254.169.254/x"})
    )
    with pytest.raises(Forbidden, match="link-local"):
        pages(allow=server.url).text(f"{server.url}/go")
    port = int(server.url.rpartition(":")[2])
    assert set(connections) == {("127.0.0.1", port)}


# --- one deadline for the whole page --------------------------------------------------


def test_a_server_trickling_its_headers_is_cut_at_the_deadline():
    deadline = 1.0
    with RecipeServer(lambda path: {"trickle_s": 0.2, "body": "<p>Slow.</p>"}) as slow:
        web = WebPages(
            clock=time.monotonic,
            sleep=time.sleep,
            min_interval_s=0,
            deadline_s=deadline,
            timeout_s=10.0,  # each byte comes well inside the per-read timeout
            allow_hosts=[f"127.0.0.1:{slow.port}"],
        )
        started = time.monotonic()
        with pytest.raises(SourceError, match="took over 1 s to send"):
            web.text(f"{slow.base}/slow")
        assert time.monotonic() - started < 5 * deadline
        assert slow.requests == ["/robots.txt"]  # the deadline ran out on robots.txt


def test_the_deadline_covers_the_redirects_too():
    """Each hop is quick enough alone (0.5 s of trickle); four of them are not."""
    hops = {f"/r{n}": {"status": 302, "headers": {"Location": f"/r{n + 1}"}} for n in range(3)}

    def route(path):
        if path == "/robots.txt":
            return None
        return {**hops.get(path, {"body": "<p>End.</p>"}), "trickle_s": 0.005}

    with RecipeServer(route) as slow:
        web = WebPages(
            clock=time.monotonic,
            sleep=time.sleep,
            min_interval_s=0,
            deadline_s=1.0,
            allow_hosts=[f"127.0.0.1:{slow.port}"],
        )
        with pytest.raises(SourceError, match="took over 1 s"):
            web.text(f"{slow.base}/r0")
        assert len(slow.requests) >= 3  # it was the sum of the hops that ran out


# --- the size cap on decoded bytes -----------------------------------------------------


def test_a_gzip_bomb_is_refused_without_expanding_in_memory():
    size = 64 * 1024 * 1024
    bomb = {"gzip_zeros": size}
    with RecipeServer(lambda path: None if path == "/robots.txt" else bomb) as server:
        web = pages(allow=server.base)
        server.prepare(bomb)  # the server's own 64 MB, made before memory is traced
        tracemalloc.start()
        try:
            with pytest.raises(SourceError, match="over the 262,144-byte limit"):
                web.text(f"{server.base}/bomb")
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
    assert peak < 8 * 1024 * 1024, f"{peak:,} bytes held while reading a gzip bomb"


def test_a_gzipped_page_is_read():
    body = gzip.compress(b"<p>Packed Ltd ships boxes.</p>")
    server = FakeServer()
    server.script("/p", html(body, headers={"Content-Encoding": "gzip"}))
    with server:
        assert pages(allow=server.url).text(f"{server.url}/p") == "Packed Ltd ships boxes."


# --- credentials never said ------------------------------------------------------------


def test_errors_name_the_url_without_its_credentials(server):
    server.script("/gone", Reply(status=404, raw="no"))
    url = f"http://ada:hunter2pw@{server.url[7:]}/gone?api_key=SECRET123&page=2"
    with pytest.raises(SourceError) as caught:
        pages(allow=server.url).text(url)
    assert "SECRET123" not in str(caught.value) and "hunter2pw" not in str(caught.value)
    assert "api_key=REDACTED&page=2" in str(caught.value)


def test_a_research_address_with_credentials_is_kept_out_of_the_definitions(monkeypatch):
    from company_ai.definitions import resources
    from company_ai.settings import Settings

    secret = "https://{domain}/?api_key=SECRET123"
    monkeypatch.setenv("COMPANY_AI_RESEARCH_URL", secret)
    env = {"COMPANY_AI_RESEARCH_URL": secret, "COMPANY_AI_RESEARCH": "http"}
    source = resources(Settings.from_env(env))["research_source"]
    assert "SECRET123" not in repr(source._convert_to_config_dictionary())
    plain = resources(Settings.from_env({"COMPANY_AI_RESEARCH_URL": "https://{domain}/about"}))
    assert plain["research_source"].url == "https://{domain}/about"
    with pytest.raises(ValueError) as caught:
        Settings.from_env({"COMPANY_AI_RESEARCH_URL": "https://x.example/?token=SECRET123"})
    assert "SECRET123" not in str(caught.value)
