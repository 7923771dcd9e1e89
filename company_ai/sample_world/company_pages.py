"""The sample companies' web pages: what research reads in the sample data and the demo.

Each company's facts follow from its domain alone, so the gate's labelled drafts
(`tools/gate_eval.py`) can state them, paraphrase them or get them wrong on purpose.
"""

from __future__ import annotations

from company_ai.core.store import Store, Stores

MONTH_NAMES = (
    "January February March April May June July August September October November December"
).split()


def company_facts(company: str, domain: str) -> dict:
    """The deterministic facts of a sample company (its page says them, nothing else)."""
    seed = sum(ord(c) * (i + 1) for i, c in enumerate(domain))
    products = ("Ledger", "Relay", "Pulse", "Harbor", "Atlas")
    return {
        "company": company,
        "founded": 1990 + seed % 33,
        "people": 12 + seed % 880,
        "growth": 5 + seed % 36,
        "product": f"{company.split()[0]} {products[seed % len(products)]}",
        "raised": (1 + seed % 9) * 100_000 * (10 if seed % 3 else 1),
        "raised_year": 2019 + seed % 6,
        "office_city": ("Leeds", "Bristol", "Dublin", "Lyon", "Berlin", "Oslo")[seed % 6],
        "office_date": (2025 + seed % 2, 1 + seed % 12, 1 + seed % 28),
    }


def company_page(company: str, domain: str, team: list[tuple[str, str, str]]) -> str:
    """A deterministic HTML page for a sample company; `team` is (name, title, city)."""
    f = company_facts(company, domain)
    year, month, day = f["office_date"]
    members = "".join(f"<li>{n}, {t}, {c}</li>" for n, t, c in team[:12])
    return (
        f"<html><head><title>{company}</title><style>p {{margin: 0}}</style></head><body>\n"
        f"<h1>{company}</h1>\n"
        f"<p>{company} was founded in {f['founded']} and now employs {f['people']} people.</p>\n"
        f"<p>Revenue grew {f['growth']}% last year, led by {f['product']}.</p>\n"
        f"<p>{f['product']} helps finance teams close the month faster.</p>\n"
        f"<p>In {f['raised_year']} it raised ${f['raised']:,} from investors.</p>\n"
        f"<p>It opened an office in {f['office_city']} on {day} {MONTH_NAMES[month - 1]}"
        f" {year}.</p>\n"
        f"<h2>Team</h2><ul>{members}</ul>\n</body></html>\n"
    )


def write_company_pages(stores: Stores) -> int:
    """Write a page for every company in the CRM (by email domain); returns how many."""
    pages = stores.data_dir / "company_pages"
    pages.mkdir(parents=True, exist_ok=True)
    companies: dict[str, tuple[str, list[tuple[str, str, str]]]] = {}
    with stores.connect(Store.CRM, readonly=True) as crm:
        for cid, email, name, company, title, city in crm.execute(
            "SELECT id, email, name, company, title, city FROM contacts"
            " WHERE email IS NOT NULL ORDER BY id"
        ):
            domain = email.rpartition("@")[2]
            # One team member in four has moved on since the CRM row was written.
            if cid % 4 == 0:
                title = "Head of Operations" if title != "Head of Operations" else "COO"
            companies.setdefault(domain, (company, []))[1].append((name, title, city))
    for domain, (company, team) in companies.items():
        target = pages / f"{domain}.html"
        text = company_page(company, domain, team)
        if not target.exists() or target.read_text() != text:
            target.write_text(text)
    return len(companies)
