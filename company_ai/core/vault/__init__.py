"""The owner's Markdown vault: what of it may be read by anything else (staging
behind the vault gate), and its distillation into recall pages, one per staged note."""

from company_ai.core.vault.distill import SYSTEM_PROMPT, Page, distill_staging, offline_page
from company_ai.core.vault.staging import (
    DEFAULT_MAX_NOTE_BYTES,
    DEFAULT_PRIVATE_FOLDERS,
    MANIFEST,
    NOTES,
    published_note,
    read_manifest,
    stage_vault,
    staging_dir,
    write_manifest,
)

__all__ = [
    "DEFAULT_MAX_NOTE_BYTES",
    "DEFAULT_PRIVATE_FOLDERS",
    "MANIFEST",
    "NOTES",
    "Page",
    "SYSTEM_PROMPT",
    "distill_staging",
    "offline_page",
    "published_note",
    "read_manifest",
    "stage_vault",
    "staging_dir",
    "write_manifest",
]
