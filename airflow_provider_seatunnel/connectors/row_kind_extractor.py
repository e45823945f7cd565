"""RowKindExtractor transform: adds the row kind as a column."""

from .base import TRANSFORM, Connector

CONNECTOR = Connector(
    name="RowKindExtractor",
    kinds=frozenset({TRANSFORM}),
    description="Adds the row kind as a column.",
)
