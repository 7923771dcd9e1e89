import dagster as dg


class EngagementDrop(dg.ConfigurableResource):
    """The local drop folder of engagement signals: webhook payloads (site visits, portal
    signups, social touches, email opens) written there as `*.json` files; read and moved
    to `processed/` or `rejected/` by `engagement_signals` (format: core/inbox/engagement.py)."""

    folder: str
