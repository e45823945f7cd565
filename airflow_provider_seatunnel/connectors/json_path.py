"""JsonPath transform: extracts values from JSON text by path."""

from .base import TRANSFORM, Connector

CONNECTOR = Connector(
    name="JsonPath",
    kinds=frozenset({TRANSFORM}),
    required=("columns",),
    description="Extracts values from JSON text by path.",
)
