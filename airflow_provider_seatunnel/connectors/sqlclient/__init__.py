"""The SQL family: one typed client for every connector that runs statements against a database
(Jdbc, the Iceberg JDBC catalog, the CDC sources' snapshots and checks).

* :mod:`.connection`: the connection options of a block (:class:`.connection.Conn`), the driver jar
  (``spark.jars``), and :func:`.connection.connect`, which opens a :class:`SqlConnection`: the
  driver's ``java.sql.Connection`` in the Spark driver's JVM, or on a Spark Connect session (no JVM in
  this process) the Python DB-API backend of :mod:`.pyconnection` (PostgreSQL, MySQL, MariaDB), which
  answers the same calls; ``execute``, ``query`` and ``columns_of`` run statements over either.
* :mod:`.dialects` and :mod:`.databases`: quoting, types, upserts and split hashing per database.
* :mod:`.errors`: errors classified by SQLSTATE; :mod:`.options`: single option values and the
  masking of secrets in messages.
"""

from __future__ import annotations

from typing import Any, Protocol


class SqlConnection(Protocol):
    """What both backends answer: the part of ``java.sql.Connection`` the connectors call."""

    def setAutoCommit(self, on: bool) -> None: ...

    def getAutoCommit(self) -> bool: ...

    def isValid(self, timeout: int) -> bool: ...

    def commit(self) -> None: ...

    def rollback(self, savepoint: Any = None) -> None: ...

    def setSavepoint(self) -> Any: ...

    def getCatalog(self) -> str | None: ...

    def getSchema(self) -> str | None: ...

    def getMetaData(self) -> Any: ...

    def prepareStatement(self, sql: str) -> Any: ...

    def close(self) -> None: ...


__all__ = ["SqlConnection"]
