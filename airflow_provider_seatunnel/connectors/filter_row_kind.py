"""FilterRowKind transform: keeps or drops rows by row kind."""

from .base import TRANSFORM, Connector, exactly_one_of

CONNECTOR = Connector(
    name="FilterRowKind",
    kinds=frozenset({TRANSFORM}),
    check=lambda plugin, job: exactly_one_of(plugin, job, ("include_kinds",), ("exclude_kinds",)),
    description="Keeps or drops rows by row kind.",
)
