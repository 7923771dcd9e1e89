import dagster as dg


class OpsFolders(dg.ConfigurableResource):
    """The local folders the ops assets write: dated store snapshots (the newest
    `snapshot_retention` kept) and the flat JSON state export."""

    snapshot_dir: str
    snapshot_retention: int = 14
    state_dir: str
