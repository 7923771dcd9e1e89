import dagster as dg


class OpsFolders(dg.ConfigurableResource):
    """The local folders the ops and brain assets write: dated store snapshots (the newest
    `snapshot_retention` days kept, and always each store's last good one), the flat JSON
    state export and the Markdown export."""

    snapshot_dir: str
    snapshot_retention: int = 14
    state_dir: str
    export_dir: str
