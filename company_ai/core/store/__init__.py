"""The domain stores: one SQLite file per domain under one data directory (or a
PostgreSQL database behind the same small interface), and their versioned schemas.
Everything else reads and writes through `Stores`, `transaction` and `Store`."""

from company_ai.core.store.db import (
    DEFAULT_BUSY_TIMEOUT_MS,
    Parameters,
    Positional,
    ReadOnlyStores,
    StoreError,
    Stores,
    column_names,
    data_dir_of,
    dialect,
    max_parameters,
    numbered,
    table_exists,
    transaction,
)
from company_ai.core.store.schema import (
    DOMAINS,
    DRAFT_CAP,
    EPISODE_TYPES,
    MEMORY_V1,
    RESEARCH_CAP,
    EpisodeType,
    Store,
)

__all__ = [
    "DEFAULT_BUSY_TIMEOUT_MS",
    "DOMAINS",
    "DRAFT_CAP",
    "EPISODE_TYPES",
    "EpisodeType",
    "MEMORY_V1",
    "Parameters",
    "Positional",
    "RESEARCH_CAP",
    "ReadOnlyStores",
    "Store",
    "StoreError",
    "Stores",
    "data_dir_of",
    "column_names",
    "dialect",
    "max_parameters",
    "numbered",
    "table_exists",
    "transaction",
]
