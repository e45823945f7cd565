"""PySpark Python data sources a connector registers with the session that reads through them.

:func:`register_once` registers a :class:`pyspark.sql.datasource.DataSource` subclass with a session
the first time that session asks for it (registering again is harmless but not free)."""

from __future__ import annotations

from typing import Any

from .sessions import session_key

_REGISTERED: set[tuple[str, str]] = set()


def register_once(spark: Any, source: type) -> None:
    """Register ``source`` (a Python data source class) with ``spark``, once per session."""
    key = (session_key(spark), f"{source.__module__}.{source.__qualname__}")
    if key not in _REGISTERED:
        spark.dataSource.register(source)
        _REGISTERED.add(key)


def register_for_write(spark: Any, df: Any, source: type) -> None:
    """Register ``source`` with ``spark`` (once) and with the session of ``df``, the rows about to be
    written through it, when that is another: a STREAMING micro-batch's rows belong to a session cloned
    when the query started, which never sees later registrations (registered again at each call)."""
    register_once(spark, source)
    own = df.sparkSession
    if own is not spark:
        own.dataSource.register(source)
