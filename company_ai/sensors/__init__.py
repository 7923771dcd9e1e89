"""Sensors: run, check and freshness alerts, the catch-up of missed ticks, held sends."""

import dagster as dg


def asset_graph(context: dg.SensorEvaluationContext):
    """The asset graph of the code location the sensor runs in (always there for a sensor
    defined in a Definitions object)."""
    repository = context.repository_def
    if repository is None:
        raise dg.DagsterInvariantViolationError("a sensor evaluated outside its code location")
    return repository.asset_graph
