"""Reading a company's real web page, politely and safely: research's HTTP source.

`WebPages.text(url)` fetches one page over `httpx` and returns its readable text, with:
  - public addresses only: every hop (the page, each redirect, robots.txt) is checked
    where the connection is made (`_Guard.connect_tcp`): the host name is resolved once,
    EVERY address it resolves to must be public (not loopback, private, link-local,
    multicast, reserved, unspecified, shared/CGNAT 100.64/10, nor such an address inside
    an IPv4-mapped, 6to4 or Teredo IPv6 one), and the socket is opened to an address
    just checked: no second lookup, so a DNS answer that changes (rebinding) cannot
    slip past. A numeric host in an odd form (`2130706433`, `0x7f.1`, `127.1`) is refused
    outright. `allow_hosts` ("host:port", as written in the URL) lifts the address check
    for named hosts only; it is empty unless a caller sets it (tests do, for 127.0.0.1);
  - one deadline for the whole page (`deadline_s`): connecting, the status line and
    headers, the body and every redirect, enforced on each socket read, so a server
    that trickles one byte a second is cut off at the deadline (the waits this module
    makes itself, to pace requests to a host, are not counted against the server);
  - a size cap on the decoded bytes: a page over `max_bytes` is refused from its
    Content-Length, or as soon as the bytes read (after gzip/deflate, decoded here a
    piece at a time, so a gzip bomb never expands in memory) pass the cap;
  - redirects followed by hand, at most `max_redirects`, each hop checked like the first;
  - robots.txt honoured, read once per host: a path it disallows for our user agent is
    not fetched; a robots.txt that is missing (4xx) allows everything, one that cannot be
    read (5xx, a timeout, a redirect) forbids the whole host for the run, as crawlers do;
  - one request per host every `min_interval_s` seconds (robots.txt included);
  - text only: html or plain text, decoded by its declared charset, read as a browser
    would (`intake.html_text`: scripts, styles and templates dropped).
Every refusal is a `SourceError` that says why, naming the URL without its credentials
(`intake.safe_url`); research then refuses that contact's page with the reason recorded.
The clock and the sleep are passed in, so tests never wait for the pacing.
"""

from __future__ import annotations

import ipaddress
import logging
import re
import socket
import zlib
from collections.abc import Callable, Iterable
from typing import Any
from urllib.parse import urljoin, urlsplit
from urllib.robotparser import RobotFileParser

import httpcore
import httpx

from company_ai.core.intake import safe_url
from company_ai.core.outreach.research import MAX_PAGE_BYTES, SourceError, readable_text

USER_AGENT = "company-ai-research/0.1 (reads one public page per company)"
ROBOTS_AGENT = "company-ai-research"  # the token robots.txt rules name
MAX_ROBOTS_BYTES = 512 * 1024  # what crawlers read of a robots.txt; the rest is ignored
REDIRECTS = frozenset({301, 302, 303, 307, 308})
TEXT_TYPES = ("text/html", "application/xhtml+xml", "text/plain")
ENCODINGS = {"": None, "identity": None, "gzip": 16 + zlib.MAX_WBITS, "deflate": zlib.MAX_WBITS}
_HOSTNAME = re.compile(r"^(?=.{4,253}$)([a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$")
_NUMERIC_LABEL = re.compile(r"^(0x[0-9a-f]*|[0-9]+)$", re.I)
_SHARED = ipaddress.ip_network("100.64.0.0/10")  # carrier-grade NAT: not `is_private`


class _SafeUrls(logging.Filter):
    """httpx logs each request's full URL at INFO, credentials and all: logged safe."""

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.args, tuple):
            record.args = tuple(
                safe_url(str(a)) if isinstance(a, httpx.URL) else a for a in record.args
            )
        return True


_HTTPX_LOG = logging.getLogger("httpx")
if not any(isinstance(f, _SafeUrls) for f in _HTTPX_LOG.filters):
    _HTTPX_LOG.addFilter(_SafeUrls())


def check_domain(domain: str) -> str:
    """A company's web domain as found in an address, or SourceError: names only (no IP
    addresses, ports, paths or single labels), so data cannot point research elsewhere."""
    if not _HOSTNAME.match(domain):
        raise SourceError(f"not a company domain: {domain[:80]!r}")
    return domain


class Forbidden(SourceError):
    """A host research must never connect to; raised before any connection is made."""


def address_problem(ip: ipaddress.IPv4Address | ipaddress.IPv6Address) -> str | None:
    """Why `ip` is no public address (or None): the `ipaddress` module's properties, the
    shared 100.64/10 range, and any IPv4 address an IPv6 one carries inside it."""
    if isinstance(ip, ipaddress.IPv6Address):
        inner = [ip.ipv4_mapped, ip.sixtofour, *(ip.teredo or ())]
        for v4 in inner:
            if v4 is not None and (problem := address_problem(v4)):
                return f"{problem} inside {ip}"
    for kind in ("loopback", "link_local", "multicast", "unspecified", "reserved", "private"):
        if getattr(ip, f"is_{kind}"):
            return f"{ip} is a {kind.replace('_', '-')} address"
    if isinstance(ip, ipaddress.IPv4Address) and ip in _SHARED:
        return f"{ip} is a shared (carrier-grade NAT) address"
    if not ip.is_global:
        return f"{ip} is not a public address"
    return None


def literal_host(host: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    """`host` as an IP address if it is written as one (canonical forms only), None if it
    is a name; Forbidden if it is a number in disguise (`2130706433`, `0x7f.1`, `127.1`)."""
    bare = host.strip("[]").rstrip(".")
    try:
        return ipaddress.ip_address(bare)
    except ValueError:
        pass
    last = bare.rpartition(".")[2]
    if _NUMERIC_LABEL.match(last):  # no top-level domain is a number
        raise Forbidden(f"the host {host[:60]!r} is a number written oddly, not a name")
    return None


def checked_addresses(host: str, port: int, allowed: bool) -> list[str]:
    """The addresses to connect to for `host:port`: resolved once, every one public
    (unless `allowed`), else Forbidden naming the first that is not."""
    literal = literal_host(host)
    if literal is not None:
        found = [literal]
    else:
        try:
            infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        except (OSError, UnicodeError) as exc:
            raise SourceError(f"the host {host[:60]!r} could not be resolved ({exc})") from None
        found = [ipaddress.ip_address(str(info[4][0]).partition("%")[0]) for info in infos]
    if not allowed:
        for ip in found:
            if problem := address_problem(ip):
                raise Forbidden(f"{host[:60]} resolves to {problem}: not connecting")
    return list(dict.fromkeys(str(ip) for ip in found))


def host_port(host: str, port: int) -> str:
    """`host:port` as `allow_hosts` names it (an IPv6 address in brackets), lower case."""
    host = host.strip("[]").lower()
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


class _Guard(httpcore.NetworkBackend):
    """httpcore's connections made safe: connect only to checked addresses, and cut every
    read and write at the current page's deadline (`deadline`, by `clock`)."""

    def __init__(self, clock: Callable[[], float], allow_hosts: Iterable[str]) -> None:
        self.clock = clock
        self.allow_hosts = frozenset(h.lower() for h in allow_hosts)
        self.deadline = float("inf")
        self.inner = httpcore.SyncBackend()

    def allows(self, host: str, port: int) -> bool:
        return host_port(host, port) in self.allow_hosts

    def remaining(self, timeout: float | None) -> float:
        left = self.deadline - self.clock()
        if left <= 0:
            raise httpcore.ReadTimeout("past the page's deadline")
        return left if timeout is None else min(timeout, left)

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.NetworkStream:
        allowed = self.allows(host, port)
        failure: Exception | None = None
        for address in checked_addresses(host, port, allowed):
            try:
                stream = self.inner.connect_tcp(
                    address, port, self.remaining(timeout), local_address, socket_options
                )
            except httpcore.ConnectError as exc:  # the next checked address, if any
                failure = exc
                continue
            return _Stream(stream, self)
        raise failure or httpcore.ConnectError(f"no address for {host}")

    def sleep(self, seconds: float) -> None:  # pragma: no cover (the sync API only)
        self.inner.sleep(seconds)


class _Stream(httpcore.NetworkStream):
    def __init__(self, inner: httpcore.NetworkStream, guard: _Guard) -> None:
        self.inner = inner
        self.guard = guard

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self.inner.read(max_bytes, self.guard.remaining(timeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self.inner.write(buffer, self.guard.remaining(timeout))

    def close(self) -> None:
        self.inner.close()

    def start_tls(
        self, ssl_context: Any, server_hostname: str | None = None, timeout: float | None = None
    ) -> httpcore.NetworkStream:
        tls = self.inner.start_tls(ssl_context, server_hostname, self.guard.remaining(timeout))
        return _Stream(tls, self.guard)

    def get_extra_info(self, info: str) -> Any:
        return self.inner.get_extra_info(info)


def guarded_client(guard: _Guard, timeout_s: float) -> httpx.Client:
    """An httpx client whose every connection goes through `guard`. No proxies from the
    environment (a proxy would make the connection, unchecked), no automatic redirects."""
    transport = httpx.HTTPTransport(trust_env=False)
    # httpx has no public way to choose httpcore's network backend; the pool it builds
    # (for no proxy) is replaced by the same pool with the guard as its backend.
    transport._pool = httpcore.ConnectionPool(
        ssl_context=httpx.create_ssl_context(trust_env=False), network_backend=guard
    )
    return httpx.Client(
        transport=transport, timeout=timeout_s, follow_redirects=False, trust_env=False
    )


class WebPages:
    """Fetches pages for one run; remembers each host's robots.txt and last request."""

    def __init__(
        self,
        *,
        clock: Callable[[], float],
        sleep: Callable[[float], None],
        timeout_s: float = 10.0,
        max_bytes: int = MAX_PAGE_BYTES,
        max_redirects: int = 3,
        min_interval_s: float = 2.0,
        deadline_s: float = 30.0,
        allow_hosts: Iterable[str] = (),
    ) -> None:
        self.clock = clock
        self.sleep = sleep
        self.max_bytes = max_bytes
        self.max_redirects = max_redirects
        self.min_interval_s = min_interval_s
        self.deadline_s = deadline_s
        self.guard = _Guard(clock, allow_hosts)
        self.client = guarded_client(self.guard, timeout_s)
        self._robots: dict[str, RobotFileParser | str] = {}  # host -> rules, or why refused
        self._last: dict[str, float] = {}

    def close(self) -> None:
        self.client.close()

    def text(self, url: str) -> str:
        """The readable text of the page at `url` (module docstring for the rules)."""
        self.guard.deadline = self.clock() + self.deadline_s
        try:
            return self._text(url)
        finally:
            self.guard.deadline = float("inf")

    def _text(self, url: str) -> str:
        for _ in range(self.max_redirects + 1):
            self._allowed(url)
            status, headers, body = self._get(url, self.max_bytes, cap_is_error=True)
            if status in REDIRECTS:
                target = headers.get("location")
                if not target:
                    raise SourceError(f"{safe_url(url)} redirects nowhere (HTTP {status})")
                url = urljoin(url, target)
                continue
            if status != 200:
                raise SourceError(f"{safe_url(url)} answered HTTP {status}")
            return _page_text(url, headers, body)
        raise SourceError(f"more than {self.max_redirects} redirects, last to {safe_url(url)}")

    def _allowed(self, url: str) -> None:
        try:
            parts = urlsplit(url)
            hostname, port = parts.hostname, parts.port
        except ValueError:
            raise SourceError(f"not a web address: {safe_url(url)[:100]!r}") from None
        if parts.scheme not in ("http", "https") or not hostname:
            raise SourceError(f"not a web address: {safe_url(url)[:100]!r}")
        port = port or (443 if parts.scheme == "https" else 80)
        try:  # an address written in the URL is judged before anything, robots.txt too
            literal = literal_host(hostname)
            problem = literal and not self.guard.allows(hostname, port) and address_problem(literal)
        except Forbidden as exc:
            raise Forbidden(f"{safe_url(url)} not fetched: {exc}") from None
        if problem:
            raise Forbidden(f"{safe_url(url)} not fetched: {problem}")
        host = f"{parts.scheme}://{host_port(hostname, port)}"
        if host not in self._robots:
            self._robots[host] = self._read_robots(host)
        rules = self._robots[host]
        if isinstance(rules, str):
            raise SourceError(f"{host}/robots.txt {rules}: not fetching {safe_url(url)}")
        if not rules.can_fetch(ROBOTS_AGENT, url):
            raise SourceError(f"{host}/robots.txt disallows {safe_url(url)} for {ROBOTS_AGENT}")

    def _read_robots(self, host: str) -> RobotFileParser | str:
        try:
            status, _, body = self._get(f"{host}/robots.txt", MAX_ROBOTS_BYTES, cap_is_error=False)
        except Forbidden:
            raise
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
        """One GET, politely spaced from the last one to its host, read up to `limit`
        decoded bytes, within the page's deadline."""
        shown = safe_url(url)
        host = urlsplit(url).netloc
        if host in self._last:
            wait = self._last[host] + self.min_interval_s - self.clock()
            if wait > 0:
                self.sleep(wait)
                self.guard.deadline += wait  # our own pause is not the server's time
        self._last[host] = self.clock()
        headers = {"User-Agent": USER_AGENT, "Accept-Encoding": "gzip, deflate"}
        try:
            with self.client.stream("GET", url, headers=headers) as response:
                if response.status_code != 200:  # a redirect, a refusal: no body wanted
                    return response.status_code, response.headers, b""
                declared = response.headers.get("content-length", "")
                if cap_is_error and declared.isdigit() and int(declared) > limit:
                    raise SourceError(
                        f"{shown} is {int(declared):,} bytes, over the {limit:,} limit"
                    )
                body = _read_body(response, limit)
                if len(body) > limit:
                    if cap_is_error:
                        raise SourceError(f"{shown} is over the {limit:,}-byte limit")
                    del body[limit:]
                return response.status_code, response.headers, bytes(body)
        except Forbidden as exc:
            raise Forbidden(f"{shown} not fetched: {exc}") from None
        except httpx.TimeoutException as exc:
            if self.clock() >= self.guard.deadline:
                raise SourceError(f"{shown} took over {self.deadline_s:g} s to send") from None
            raise SourceError(f"{shown} timed out ({type(exc).__name__})") from None
        except httpx.HTTPError as exc:
            raise SourceError(f"{shown} could not be fetched ({type(exc).__name__})") from None


def _read_body(response: httpx.Response, limit: int) -> bytearray:
    """The body's decoded bytes, at most `limit` + 1 of them: compressed bodies are
    inflated a bounded piece at a time, so the cap holds for what they expand to."""
    coding = response.headers.get("content-encoding", "").strip().lower()
    if coding not in ENCODINGS:
        raise SourceError(f"{safe_url(str(response.url))} is sent as {coding[:40]!r}")
    wbits = ENCODINGS[coding]
    inflate = zlib.decompressobj(wbits) if wbits is not None else None
    body = bytearray()
    for chunk in response.iter_raw():
        if inflate is None:
            body += chunk
        else:
            pending = chunk
            while pending and len(body) <= limit:
                try:
                    body += inflate.decompress(pending, limit + 1 - len(body))
                except zlib.error:
                    raise SourceError(
                        f"{safe_url(str(response.url))} is not the {coding} it claims"
                    ) from None
                pending = inflate.unconsumed_tail
        if len(body) > limit:
            break
    return body


def _page_text(url: str, headers: httpx.Headers, body: bytes) -> str:
    shown = safe_url(url)
    kind = headers.get("content-type", "text/html").split(";")[0].strip().lower()
    if kind not in TEXT_TYPES:
        raise SourceError(f"{shown} is {kind[:60]}, not a web page")
    if b"\x00" in body:
        raise SourceError(f"{shown} is binary, not a web page")
    charset = httpx.Response(200, headers=headers).charset_encoding or "utf-8"
    try:
        html = body.decode(charset)
    except (LookupError, UnicodeDecodeError):
        raise SourceError(f"{shown} is not text in its declared charset ({charset[:40]})") from None
    return readable_text(html, shown)
