"""Split transform: splits a string field into several."""

from .base import TRANSFORM, Connector

CONNECTOR = Connector(
    name="Split",
    kinds=frozenset({TRANSFORM}),
    required=("separator","split_field","output_fields",),
    description="Splits a string field into several.",
)
