"""PySpark Python data sources a connector registers with the session that reads through them.

:func:`register_once` registers a :class:`pyspark.sql.datasource.DataSource` subclass with a session
the first time that session asks for it (registering again is harmless but not free), and makes that session
the calling thread's active one: Spark finds a Python data source by its name in the *active* session's
registry when it plans the read or write, not in the registry of the session the DataFrame belongs to. Another
session made active on the same thread since (PySpark's ``createDataFrame`` activates its own session; a second
session for Hive support does) would answer ``DATA_SOURCE_NOT_EXIST``."""

from __future__ import annotations

import threading
import weakref
from typing import Any

#: per live session object: the data sources registered with it. Keyed by the object itself (weakly), never by
#: an id or a name: a session stopped and collected can leave its id(), or its application's id, to a new
#: session that has registered nothing
_REGISTERED: weakref.WeakKeyDictionary[Any, set[str]] = weakref.WeakKeyDictionary()
_LOCK = threading.Lock()


def activate(spark: Any) -> None:
    """Make ``spark`` the calling thread's active session in its JVM, as PySpark's own ``createDataFrame``
    does (classic sessions; a Spark Connect session resolves data sources on its server by its own id)."""
    jsession = getattr(spark, "_jsparkSession", None)
    if jsession is None:
        return
    spark.__class__._get_j_spark_session_class(spark._jvm).setActiveSession(jsession)


def register_once(spark: Any, source: type) -> None:
    """Register ``source`` (a Python data source class) with ``spark``, once per session, and make ``spark``
    the thread's active session, where Spark looks the source up."""
    name = f"{source.__module__}.{source.__qualname__}"
    with _LOCK:
        done = _REGISTERED.setdefault(spark, set())
        recorded = name in done
    if not recorded:
        spark.dataSource.register(source)
        with _LOCK:
            done.add(name)
    activate(spark)


def register_for_write(spark: Any, df: Any, source: type) -> None:
    """Register ``source`` with ``spark`` (once) and with the session of ``df``, the rows about to be
    written through it, when that is another: a STREAMING micro-batch's rows belong to a session cloned
    when the query started, which never sees later registrations (registered again at each call). The
    session of ``df`` is left active: the write looks the source up there."""
    register_once(spark, source)
    own = df.sparkSession
    if own is not spark:
        own.dataSource.register(source)
        activate(own)
