import time
from pathlib import Path
from typing import Any, Literal

import dagster as dg
from pydantic import PrivateAttr

from company_ai.core.outreach import MAX_PAGE_BYTES, read_page


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
    contact is skipped with the reason recorded."""

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
    _web: Any = PrivateAttr(default=None)  # one per run: robots.txt and pacing per host

    def page(self, domain: str) -> str:
        if self.mode == "local":
            return read_page(Path(self.pages_dir), domain, self.max_bytes)
        from company_ai.core.outreach import check_domain

        return self._pages().text(self.url.format(domain=check_domain(domain)))

    def source_name(self, domain: str) -> str:
        """The provenance of a fact read from this page (`web:<domain>`)."""
        return f"web:{domain}"

    def teardown_after_execution(self, context: dg.InitResourceContext) -> None:
        if self._web is not None:
            self._web.close()

    def _pages(self):
        if self._web is None:
            from company_ai.core.outreach import WebPages

            self._web = WebPages(
                timeout_s=self.timeout_s,
                allow_hosts=self.allow_hosts,
                clock=time.monotonic,
                sleep=time.sleep,
                max_bytes=self.max_bytes,
                max_redirects=self.max_redirects,
                min_interval_s=self.min_interval_s,
                deadline_s=self.deadline_s,
            )
        return self._web
