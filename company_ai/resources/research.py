from pathlib import Path

import dagster as dg

from company_ai.core.research import MAX_PAGE_BYTES, read_page


class ResearchSource(dg.ConfigurableResource):
    """Company intel for research: the page of a company's web domain, as plain text.
    The default reads the local pages shipped with the sample data
    (`<data_dir>/company_pages/<domain>.html`); a web-fetching source would implement
    the same `page(domain)` and the same limits. Pages over `max_bytes`, binary or empty
    raise `SourceError` and that contact is skipped with the reason recorded."""

    pages_dir: str
    max_bytes: int = MAX_PAGE_BYTES

    def page(self, domain: str) -> str:
        return read_page(Path(self.pages_dir), domain, self.max_bytes)

    def source_name(self, domain: str) -> str:
        """The provenance of a fact read from this page (`web:<domain>`)."""
        return f"web:{domain}"
