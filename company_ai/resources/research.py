import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

import dagster as dg
from pydantic import PrivateAttr

from company_ai.core.outreach import MAX_PAGE_BYTES, read_page


class LocalPages:
    """The pages shipped with the sample data: `<pages_dir>/<domain>.html`."""

    def __init__(self, pages_dir: Path, max_bytes: int) -> None:
        self.pages_dir, self.max_bytes = pages_dir, max_bytes

    def page(self, domain: str) -> str:
        return read_page(self.pages_dir, domain, self.max_bytes)

    def close(self) -> None:
        pass


class HttpPages:
    """The company's real site (`url` with `{domain}` filled in), read politely by one
    `core.outreach.WebPages`, made by `web()` at the first page."""

    def __init__(self, url: str, web: Callable[[], Any]) -> None:
        self.url, self._make_web = url, web
        self._web: Any = None

    def page(self, domain: str) -> str:
        from company_ai.core.outreach import check_domain

        if self._web is None:
            self._web = self._make_web()
        return self._web.text(self.url.format(domain=check_domain(domain)))

    def close(self) -> None:
        if self._web is not None:
            self._web.close()


class ResearchSource(dg.ConfigurableResource):
    """Company intel for research: the page of a company's web domain, as plain text.
    `local` (the default, offline) reads the pages shipped with the sample data
    (`<data_dir>/company_pages/<domain>.html`). `http` fetches the company's real site
    (`url` with `{domain}` filled in) over httpx, politely (`core/outreach/web.py`): a timeout per
    request and a deadline per page, at most `max_redirects` redirects, robots.txt
    honoured, one request per host every `min_interval_s` seconds, text extracted from
    HTML; only public addresses on every hop (`allow_hosts` names the exceptions), one
    `deadline_s` for all of a page, its redirects included.
    Either way pages over `max_bytes`, binary or empty raise `SourceError` and that
    contact is skipped with the reason recorded. The pages (`LocalPages`, `HttpPages`) are
    chosen once, at the first use (`implementation`)."""

    pages_dir: str
    max_bytes: int = MAX_PAGE_BYTES
    mode: Literal["local", "http"] = "local"
    url: str = "https://{domain}/"
    timeout_s: float = 10.0
    deadline_s: float = 30.0
    max_redirects: int = 3
    min_interval_s: float = 2.0
    # "host:port" (as written in the page's URL) research may reach though its address is
    # not public. Empty: only public addresses. Tests name their own 127.0.0.1 server here.
    allow_hosts: list[str] = []
    _chosen: "LocalPages | HttpPages | None" = PrivateAttr(default=None)

    def page(self, domain: str) -> str:
        return self.implementation().page(domain)

    def source_name(self, domain: str) -> str:
        """The provenance of a fact read from this page (`web:<domain>`)."""
        return f"web:{domain}"

    def teardown_after_execution(self, context: dg.InitResourceContext) -> None:
        if self._chosen is not None:
            self._chosen.close()

    def implementation(self) -> "LocalPages | HttpPages":
        """The pages of `mode`, made once (one per run: robots.txt and pacing per host).
        Either is a `core.outreach.day.PageSource`."""
        if self._chosen is None:
            if self.mode == "local":
                self._chosen = LocalPages(Path(self.pages_dir), self.max_bytes)
            else:
                self._chosen = HttpPages(self.url, self._web_pages)
        return self._chosen

    def _web_pages(self) -> Any:
        from company_ai.core.outreach import WebPages

        return WebPages(
            timeout_s=self.timeout_s,
            allow_hosts=self.allow_hosts,
            clock=time.monotonic,
            sleep=time.sleep,
            max_bytes=self.max_bytes,
            max_redirects=self.max_redirects,
            min_interval_s=self.min_interval_s,
            deadline_s=self.deadline_s,
        )
