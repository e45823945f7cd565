"""Jdbc: databases through a JDBC driver, as source and sink."""

from .base import SINK, SOURCE, Connector

CONNECTOR = Connector(
    name="Jdbc",
    kinds=frozenset({SOURCE, SINK}),
    required=("url", "driver"),
    identity=("url", "table_path", "database", "table", "query"),
    committer=True,
    description="Reads a query or table, or writes (upserts) a table, through JDBC.",
)
