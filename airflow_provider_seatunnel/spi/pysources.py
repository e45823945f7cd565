"""PySpark Python data sources a connector registers with the session that reads through them.

:func:`register_once` registers a :class:`pyspark.sql.datasource.DataSource` subclass with a session
the first time that session asks for it (registering again is harmless but not free)."""

from __future__ import annotations

import threading
import weakref
from typing import Any

#: per live session object: the data sources registered with it. Keyed by the object itself (weakly), never by
#: an id or a name: a session stopped and collected can leave its id(), or its application's id, to a new
#: session that has registered nothing
_REGISTERED: weakref.WeakKeyDictionary[Any, set[str]] = weakref.WeakKeyDictionary()
_LOCK = threading.Lock()


def _session_lacks(spark: Any, source: type) -> bool:
    """Whether a classic session's JVM no longer knows ``source`` (asked only where a record says it was
    registered: a record that outlived what it records must not stop the registration). Spark Connect sessions
    and any answer but "known" are taken as they are recorded."""
    jsession = getattr(spark, "_jsparkSession", None)
    if jsession is None:
        return False
    try:
        return not bool(jsession.sessionState().dataSourceManager().dataSourceExists(source.name()))  # type: ignore[attr-defined]
    except Exception:  # py4j's error, or a Spark without these methods: trust the record
        return False


def register_once(spark: Any, source: type) -> None:
    """Register ``source`` (a Python data source class) with ``spark``, once per session (again when the
    session's JVM has lost it)."""
    name = f"{source.__module__}.{source.__qualname__}"
    with _LOCK:
        done = _REGISTERED.setdefault(spark, set())
        recorded = name in done
    if recorded and not _session_lacks(spark, source):
        return
    spark.dataSource.register(source)
    with _LOCK:
        done.add(name)


def register_for_write(spark: Any, df: Any, source: type) -> None:
    """Register ``source`` with ``spark`` (once) and with the session of ``df``, the rows about to be
    written through it, when that is another: a STREAMING micro-batch's rows belong to a session cloned
    when the query started, which never sees later registrations (registered again at each call)."""
    register_once(spark, source)
    own = df.sparkSession
    if own is not spark:
        own.dataSource.register(source)
