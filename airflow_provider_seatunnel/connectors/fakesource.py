"""FakeSource: generated rows (random, ranged, templated or explicit ``rows``)."""

from .base import SOURCE, Connector

CONNECTOR = Connector(
    name="FakeSource",
    kinds=frozenset({SOURCE}),
    identity=("schema.table",),
    description="Generates rows from a schema: random, ranged, templated or explicit.",
)
