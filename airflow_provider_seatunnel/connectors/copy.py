"""Copy transform: copies fields into new columns."""

from .base import TRANSFORM, Connector

CONNECTOR = Connector(
    name="Copy",
    kinds=frozenset({TRANSFORM}),
    description="Copies fields into new columns.",
)
