"""Console sink: prints rows to the log."""

from .base import SINK, Connector

CONNECTOR = Connector(name="Console", kinds=frozenset({SINK}), description="Prints rows to the log.")
