"""The Doris sink's storage verbs over the Stream Load family's shared two phases (:mod:`..streamload.sink`).

Doris's member of the family: each writer loads with ``two_phase_commit: true`` (:mod:`.writer`), prepared
transactions are decided by ``_stream_load_2pc`` with their ids (:mod:`.streamload`), and the created
table's types are Doris's (``STRING``, ``DATETIMEV2(6)``, ``DECIMALV3(p,s)``...). The commit log, the claim,
the roll-forward of a claimed commit and the save modes are the family's.
"""

from __future__ import annotations

from typing import Any

from ..streamload.commitlog import LOG_TABLE, CommitLog
from ..streamload.endpoint import Endpoint
from ..streamload.sink import Family, create_statement, label_of, target_of
from .streamload import Client

__all__ = ["FAMILY", "LOG_TABLE", "CommitLog", "client_of", "create_statement", "doris_type", "label_of",
           "target_of"]


def client_of(endpoint: Endpoint, retries: int = 3) -> Client:
    return Client(endpoint.fenodes, endpoint.username, endpoint.password, retries)


def doris_type(spark_type: Any) -> str:
    """A Spark column type as Doris's (SeaTunnel's type converter: STRING for text, DATETIMEV2 for timestamps)."""
    name = spark_type.typeName()
    simple = {"boolean": "BOOLEAN", "byte": "TINYINT", "short": "SMALLINT", "integer": "INT", "long": "BIGINT",
              "float": "FLOAT", "double": "DOUBLE", "string": "STRING", "date": "DATEV2", "binary": "STRING",
              "timestamp": "DATETIMEV2(6)", "timestamp_ntz": "DATETIMEV2(6)"}
    if name == "decimal":
        return f"DECIMALV3({spark_type.precision},{spark_type.scale})"
    if name == "array":
        return f"ARRAY<{doris_type(spark_type.elementType)}>"
    return simple.get(name, "STRING" if name not in ("map", "struct") else "JSON")


def _load_partition(spec: Any, partition: int, rows: Any) -> Any:
    from .writer import load_partition

    return load_partition(spec, partition, rows)


FAMILY = Family("Doris", client_of, _load_partition, doris_type)
