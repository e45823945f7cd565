"""The SelectDB Cloud sink's member of the Stream Load family (:mod:`..streamload.sink`): each writer stages one
file (:mod:`.writer`); the claimed files are copied into the table one COPY INTO each (:mod:`.copy`), a file
copied before being filtered by SelectDB; aborting has nothing to undo. The commit log and the claim are the
family's; SeaTunnel's SelectDB sink has no save modes (the table must exist)."""

from __future__ import annotations

from typing import Any

from ..streamload.endpoint import Endpoint
from ..streamload.sink import Family
from .copy import CopyClient


def client_of(endpoint: Endpoint, retries: int = 3) -> CopyClient:
    return CopyClient(endpoint.fenodes, endpoint.username, endpoint.password, retries)


def _no_ddl(spark_type: Any) -> str:
    return "STRING"  # no save modes: never used in a statement


def _load_partition(spec: Any, partition: int, rows: Any) -> Any:
    from .writer import load_partition

    return load_partition(spec, partition, rows)


FAMILY = Family("SelectDBCloud", client_of, _load_partition, _no_ddl)

__all__ = ["FAMILY", "client_of"]
