"""Research's HTTP source against a local server: pages, redirects, a slow answer, a 5 MB
page, robots.txt, the per-host pace. No network: the server listens on 127.0.0.1."""

import httpx
import pytest

from company_ai.core.outreach import WebPages, check_domain
from company_ai.core.outreach.research import SourceError
from company_ai.core.outreach.web import USER_AGENT
from company_ai.resources.research import ResearchSource
from tests.fakes import FakeServer, Reply

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


def pages(clock: Clock | None = None, timeout: float = 5.0, **limits) -> WebPages:
    clock = clock or Clock()
    return WebPages(
        httpx.Client(timeout=timeout), clock=clock, sleep=clock.sleep, min_interval_s=0, **limits
    )


def paths(server) -> list[str]:
    return [path for path, _ in server.requests]


def test_a_page_is_read_as_text_without_scripts_or_title(server):
    server.script("/acme/", html())
    text = pages().text(f"{server.url}/acme/")
    assert text == "Acme Ltd\nWe make anvils in Leeds.\nAda Lovelace, CTO, Leeds"
    assert paths(server) == ["/robots.txt", "/acme/"]  # no robots.txt (404): allowed
    assert server.requests[1][1]["User-Agent"] == USER_AGENT


def test_redirects_are_followed_up_to_the_limit_and_no_further(server):
    server.script("/old", Reply(status=301, raw="", headers={"Location": "/new"}))
    server.script("/new", Reply(status=302, raw="", headers={"Location": f"{server.url}/acme/"}))
    server.script("/acme/", html())
    assert "We make anvils in Leeds." in pages().text(f"{server.url}/old")
    server.script("/loop", Reply(status=307, raw="", headers={"Location": "/loop"}))
    with pytest.raises(SourceError, match="more than 3 redirects"):
        pages().text(f"{server.url}/loop")
    assert paths(server).count("/loop") == 4  # the first request and three redirects


def test_a_redirect_into_a_path_robots_forbids_is_not_followed(server):
    server.script("/robots.txt", Reply(raw="User-agent: *\nDisallow: /private/\n"))
    server.script("/open", Reply(status=302, raw="", headers={"Location": "/private/team"}))
    with pytest.raises(SourceError, match="disallows"):
        pages().text(f"{server.url}/open")
    assert "/private/team" not in paths(server)


def test_a_slow_answer_times_out_with_a_clear_error(server):
    server.script("/slow", html(delay_s=1.0))
    with pytest.raises(SourceError, match="timed out"):
        pages(timeout=0.2).text(f"{server.url}/slow")


@pytest.mark.parametrize("length", [True, False], ids=["content-length", "no-length"])
def test_a_5_mb_page_is_refused_without_reading_it_all(server, length):
    server.script("/big", html("<p>" + "x" * 5_000_000 + "</p>", length=length))
    with pytest.raises(SourceError, match="over the 262,144"):
        pages().text(f"{server.url}/big")


def test_robots_txt_forbidding_the_path_is_honoured_and_read_once_per_host(server):
    server.script(
        "/robots.txt",
        Reply(raw="User-agent: company-ai-research\nDisallow: /acme/\n", content_type="text/plain"),
    )
    server.script("/acme/", html())
    server.script("/other/", html())
    web = pages()
    with pytest.raises(SourceError, match="robots.txt disallows"):
        web.text(f"{server.url}/acme/")
    assert web.text(f"{server.url}/other/")
    assert paths(server) == ["/robots.txt", "/other/"]  # the forbidden page never fetched


def test_a_robots_txt_that_cannot_be_read_keeps_research_off_the_host(server):
    server.script("/robots.txt", Reply(status=503, raw="down"))
    server.script("/acme/", html())
    with pytest.raises(SourceError, match="robots.txt answered HTTP 503"):
        pages().text(f"{server.url}/acme/")
    assert "/acme/" not in paths(server)


def test_one_request_per_host_every_interval_robots_included(server):
    server.script("/a", html())
    server.script("/b", html())
    clock = Clock()
    web = WebPages(httpx.Client(), clock=clock, sleep=clock.sleep, min_interval_s=2.0)
    web.text(f"{server.url}/a")
    web.text(f"{server.url}/b")
    assert clock.slept == [2.0, 2.0]  # robots.txt, then /a after 2 s, then /b after 2 s
    other = server.url.replace("127.0.0.1", "localhost")  # another host: its own pace
    web.text(f"{other}/a")
    assert clock.slept == [2.0, 2.0, 2.0]  # only between its own robots.txt and page


def test_only_text_is_read_and_its_declared_charset_is_honoured(server):
    server.script("/doc.pdf", Reply(raw=b"%PDF-1.4", content_type="application/pdf"))
    with pytest.raises(SourceError, match="application/pdf, not a web page"):
        pages().text(f"{server.url}/doc.pdf")
    server.script(
        "/latin",
        Reply(raw="<p>Zürich</p>".encode("latin-1"), content_type="text/html; charset=iso-8859-1"),
    )
    assert pages().text(f"{server.url}/latin") == "Zürich"
    server.script("/gone", Reply(status=404, raw="no"))
    with pytest.raises(SourceError, match="HTTP 404"):
        pages().text(f"{server.url}/gone")


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
    web = WebPages(httpx.Client(), clock=clock, sleep=clock.sleep, min_interval_s=0, deadline_s=5)
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
    )
    with pytest.raises(SourceError, match="timed out"):
        source.page("slow.example")
