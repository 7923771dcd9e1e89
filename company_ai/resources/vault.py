from pathlib import Path

import dagster as dg

from company_ai.core.vault import DEFAULT_MAX_NOTE_BYTES, DEFAULT_PRIVATE_FOLDERS


class VaultResource(dg.ConfigurableResource):
    """The owner's Markdown vault, read only by the `vault_staging` gate. Folders named in
    `private_folders` (at any depth) are never read; notes over `max_note_bytes` are
    refused; hidden folders (`.trash/`, `.obsidian/`, `.git/`) are skipped unless
    `include_hidden_folders`. Everything else reads the staging folder under the data
    directory."""

    path: str
    private_folders: list[str] = list(DEFAULT_PRIVATE_FOLDERS)
    max_note_bytes: int = DEFAULT_MAX_NOTE_BYTES
    include_hidden_folders: bool = False

    def root(self) -> Path:
        return Path(self.path)
