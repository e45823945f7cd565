"""Assert sink: checks row counts, field values and the table's catalog against rules."""

from .base import SINK, Connector

CONNECTOR = Connector(
    name="Assert",
    kinds=frozenset({SINK}),
    required=("rules",),
    description="Fails the pipeline when a row or field rule does not hold.",
)
