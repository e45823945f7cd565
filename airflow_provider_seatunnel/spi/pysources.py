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
