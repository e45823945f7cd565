"""FieldMapper transform: keeps and renames the mapped fields."""

from .base import TRANSFORM, Connector

CONNECTOR = Connector(
    name="FieldMapper",
    kinds=frozenset({TRANSFORM}),
    required=("field_mapper",),
    description="Keeps and renames the mapped fields.",
)
