"""PySpark Python data sources a connector registers with the session that reads through them.

:func:`register_once` registers a :class:`pyspark.sql.datasource.DataSource` subclass with a session
the first time that session asks for it (registering again is harmless but not free)."""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

from .sessions import session_key

#: (session, source) -> the session object registered with: held, so that no other session object can
#: take its ``id`` while it is remembered; the oldest are forgotten past :data:`_REMEMBERED`
_REGISTERED: OrderedDict[tuple[str, str], Any] = OrderedDict()
_REMEMBERED = 256


def register_once(spark: Any, source: type) -> None:
    """Register ``source`` (a Python data source class) with ``spark``, once per session. Writers pass
    the session of the DataFrame they write: a STREAMING micro-batch's rows belong to a session of
    their own (a clone taken when the query started), which does not see later registrations."""
    key = (session_key(spark), f"{source.__module__}.{source.__qualname__}")
    if _REGISTERED.get(key) is spark:
        _REGISTERED.move_to_end(key)
        return
    spark.dataSource.register(source)
    _REGISTERED[key] = spark
    _REGISTERED.move_to_end(key)
    while len(_REGISTERED) > _REMEMBERED:
        _REGISTERED.popitem(last=False)
