"""LocalFile: files on the local (or shared) file system, as source and sink."""

from .base import SINK, SOURCE, Connector

CONNECTOR = Connector(
    name="LocalFile",
    kinds=frozenset({SOURCE, SINK}),
    required=("path",),
    identity=("path",),
    committer=True,
    description="Reads or writes text, csv, json, parquet and orc files.",
)
