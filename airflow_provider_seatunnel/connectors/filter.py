"""Filter transform: keeps (``include_fields``) or drops (``exclude_fields``) fields."""

from .base import TRANSFORM, Connector, exactly_one_of

CONNECTOR = Connector(
    name="Filter",
    kinds=frozenset({TRANSFORM}),
    check=lambda plugin, job: exactly_one_of(plugin, job, ("include_fields", "fields"), ("exclude_fields",)),
    description="Keeps (include_fields) or drops (exclude_fields) fields.",
)
