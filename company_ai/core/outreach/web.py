"""Reading a company's real web page, politely: research's HTTP source.

`WebPages.text(url)` fetches one page over `httpx` and returns its readable text, with:
  - a timeout per request (connect, read, write) and a deadline for the whole body, so
    a server that trickles bytes cannot hold the run;
  - a size cap: a page over `max_bytes` is refused from its Content-Length, or as soon
    as the bytes read pass the cap, without reading the rest;
  - redirects followed by hand, at most `max_redirects`, each hop checked like the first;
  - robots.txt honoured, read once per host: a path it disallows for our user agent is
    not fetched; a robots.txt that is missing (4xx) allows everything, one that cannot be
    read (5xx, a timeout, a redirect) forbids the whole host for the run, as crawlers do;
  - one request per host every `min_interval_s` seconds (robots.txt included);
  - text only: html or plain text, decoded by its declared charset, scripts dropped.
Every refusal is a `SourceError` that says why; research then skips that contact with the
reason recorded. The clock and the sleep are passed in, so tests never wait for real.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from urllib.parse import urljoin, urlsplit
from urllib.robotparser import RobotFileParser

import httpx

from company_ai.core.outreach.research import MAX_PAGE_BYTES, SourceError, html_text

USER_AGENT = "company-ai-research/0.1 (reads one public page per company)"
ROBOTS_AGENT = "company-ai-research"  # the token robots.txt rules name
MAX_ROBOTS_BYTES = 512 * 1024  # what crawlers read of a robots.txt; the rest is ignored
REDIRECTS = frozenset({301, 302, 303, 307, 308})
TEXT_TYPES = ("text/html", "application/xhtml+xml", "text/plain")
_HOSTNAME = re.compile(r"^(?=.{4,253}$)([a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$")


def check_domain(domain: str) -> str:
    """A company's web domain as found in an address, or SourceError: names only (no IP
    addresses, ports, paths or single labels), so data cannot point research elsewhere."""
    if not _HOSTNAME.match(domain):
        raise SourceError(f"not a company domain: {domain[:80]!r}")
    return domain


class WebPages:
    """Fetches pages for one run; remembers each host's robots.txt and last request."""

    def __init__(
        self,
        client: httpx.Client,
        *,
        clock: Callable[[], float],
        sleep: Callable[[float], None],
        max_bytes: int = MAX_PAGE_BYTES,
        max_redirects: int = 3,
        min_interval_s: float = 2.0,
        deadline_s: float = 30.0,
    ) -> None:
        self.client = client
        self.clock = clock
        self.sleep = sleep
        self.max_bytes = max_bytes
        self.max_redirects = max_redirects
        self.min_interval_s = min_interval_s
        self.deadline_s = deadline_s
        self._robots: dict[str, RobotFileParser | str] = {}  # host -> rules, or why refused
        self._last: dict[str, float] = {}

    def text(self, url: str) -> str:
        """The readable text of the page at `url` (module docstring for the rules)."""
        for _ in range(self.max_redirects + 1):
            self._allowed(url)
            status, headers, body = self._get(url, self.max_bytes, cap_is_error=True)
            if status in REDIRECTS:
                target = headers.get("location")
                if not target:
                    raise SourceError(f"{url} redirects nowhere (HTTP {status}, no Location)")
                url = urljoin(url, target)
                continue
            if status != 200:
                raise SourceError(f"{url} answered HTTP {status}")
            return _page_text(url, headers, body)
        raise SourceError(f"more than {self.max_redirects} redirects, last to {url}")

    def _allowed(self, url: str) -> None:
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise SourceError(f"not a web address: {url[:100]!r}")
        host = f"{parts.scheme}://{parts.netloc}"
        if host not in self._robots:
            self._robots[host] = self._read_robots(host)
        rules = self._robots[host]
        if isinstance(rules, str):
            raise SourceError(f"{host}/robots.txt {rules}: not fetching {url}")
        if not rules.can_fetch(ROBOTS_AGENT, url):
            raise SourceError(f"{host}/robots.txt disallows {url} for {ROBOTS_AGENT}")

    def _read_robots(self, host: str) -> RobotFileParser | str:
        try:
            status, _, body = self._get(f"{host}/robots.txt", MAX_ROBOTS_BYTES, cap_is_error=False)
        except SourceError as exc:
            return f"could not be read ({exc})"
        rules = RobotFileParser()
        if status == 200:
            rules.parse(body.decode("utf-8", "replace").splitlines())
        elif 400 <= status < 500:
            rules.parse([])  # no robots.txt: everything is allowed
        else:
            return f"answered HTTP {status}"
        return rules

    def _get(self, url: str, limit: int, *, cap_is_error: bool) -> tuple[int, httpx.Headers, bytes]:
        """One GET, politely spaced from the last one to its host, read up to `limit` bytes."""
        host = urlsplit(url).netloc
        if host in self._last:
            wait = self._last[host] + self.min_interval_s - self.clock()
            if wait > 0:
                self.sleep(wait)
        self._last[host] = self.clock()
        started = self.clock()
        try:
            with self.client.stream("GET", url, headers={"User-Agent": USER_AGENT}) as response:
                if response.status_code != 200:  # a redirect, a refusal: no body wanted
                    return response.status_code, response.headers, b""
                declared = response.headers.get("content-length", "")
                if cap_is_error and declared.isdigit() and int(declared) > limit:
                    raise SourceError(f"{url} is {int(declared):,} bytes, over the {limit:,} limit")
                body = bytearray()
                for chunk in response.iter_bytes():
                    body += chunk
                    if len(body) > limit:
                        if cap_is_error:
                            raise SourceError(f"{url} is over the {limit:,}-byte limit")
                        del body[limit:]
                        break
                    if self.clock() - started > self.deadline_s:
                        raise SourceError(f"{url} took over {self.deadline_s:g} s to send")
                return response.status_code, response.headers, bytes(body)
        except httpx.TimeoutException as exc:
            raise SourceError(f"{url} timed out ({type(exc).__name__})") from None
        except httpx.HTTPError as exc:
            raise SourceError(f"{url} could not be fetched ({type(exc).__name__})") from None


def _page_text(url: str, headers: httpx.Headers, body: bytes) -> str:
    kind = headers.get("content-type", "text/html").split(";")[0].strip().lower()
    if kind not in TEXT_TYPES:
        raise SourceError(f"{url} is {kind}, not a web page")
    if b"\x00" in body:
        raise SourceError(f"{url} is binary, not a web page")
    charset = httpx.Response(200, headers=headers).charset_encoding or "utf-8"
    try:
        html = body.decode(charset)
    except (LookupError, UnicodeDecodeError):
        raise SourceError(f"{url} is not text in its declared charset ({charset})") from None
    return html_text(html, url)
