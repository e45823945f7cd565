"""The StarRocks sink's member of the Stream Load family (:mod:`..streamload.sink`): each writer begins, loads
and prepares one transaction of StarRocks's transaction interface (:mod:`.writer`), prepared transactions
are committed or rolled back by their labels (:mod:`.txn`), and the created table's types are StarRocks's
(SeaTunnel's mapping: ``STRING`` for text and bytes, ``DATETIME``, ``DECIMAL(p, s)``, ``JSON`` for maps and
rows). The commit log, the claim, the roll-forward and the save modes are the family's.
"""

from __future__ import annotations

from typing import Any

from ..streamload.endpoint import Endpoint
from ..streamload.sink import Family
from .txn import TxnClient


def client_of(endpoint: Endpoint, retries: int = 3) -> TxnClient:
    return TxnClient(endpoint.fenodes, endpoint.username, endpoint.password, retries)


def starrocks_type(spark_type: Any) -> str:
    """A Spark column type as StarRocks's, as SeaTunnel's save mode maps it."""
    name = spark_type.typeName()
    simple = {"boolean": "BOOLEAN", "byte": "TINYINT", "short": "SMALLINT", "integer": "INT", "long": "BIGINT",
              "float": "FLOAT", "double": "DOUBLE", "string": "STRING", "date": "DATE", "binary": "STRING",
              "timestamp": "DATETIME", "timestamp_ntz": "DATETIME", "void": "VARCHAR(8)"}
    if name == "decimal":
        return f"Decimal({spark_type.precision}, {spark_type.scale})"
    if name == "array":
        return f"ARRAY<{starrocks_type(spark_type.elementType)}>"
    return simple.get(name, "JSON" if name in ("map", "struct") else "STRING")


def _load_partition(spec: Any, partition: int, rows: Any) -> Any:
    from .writer import load_partition

    return load_partition(spec, partition, rows)


FAMILY = Family("StarRocks", client_of, _load_partition, starrocks_type)

__all__ = ["FAMILY", "client_of", "starrocks_type"]
