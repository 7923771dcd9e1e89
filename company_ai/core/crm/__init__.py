"""The CRM: the contacts, where they come from (the People sync, a CSV import), the
people `company-ai forget` removed (tombstones), and the read views of one person
(the timeline, the dossier a drafter is given). Stdlib only: the CLI's read commands
import it."""

from company_ai.core.crm.contacts import (
    Contact,
    UnknownContactError,
    find_contact,
    known_companies,
    load_contact,
    normalize_email,
)
from company_ai.core.crm.contacts_csv import import_contacts_csv
from company_ai.core.crm.dossier import build_dossier, load_dossier
from company_ai.core.crm.people_sync import (
    BUDGET_S,
    MAX_DELETED_SHARE,
    MAX_PAGES,
    PAGE_FIELDS,
    PAGE_SIZE,
    PERSON_FIELDS,
    ContactSource,
    Fetch,
    MalformedPage,
    SyncError,
    TokenRejected,
    sync_people,
)
from company_ai.core.crm.timeline import load_timeline, read_timeline, render_text
from company_ai.core.crm.tombstones import Tombstones, normal_email

__all__ = [
    "BUDGET_S",
    "Contact",
    "ContactSource",
    "Fetch",
    "MAX_DELETED_SHARE",
    "MAX_PAGES",
    "MalformedPage",
    "PAGE_FIELDS",
    "PAGE_SIZE",
    "PERSON_FIELDS",
    "SyncError",
    "TokenRejected",
    "Tombstones",
    "UnknownContactError",
    "build_dossier",
    "load_dossier",
    "find_contact",
    "import_contacts_csv",
    "known_companies",
    "load_contact",
    "load_timeline",
    "normal_email",
    "normalize_email",
    "read_timeline",
    "render_text",
    "sync_people",
]
