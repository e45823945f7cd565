"""Connections to the server (the ``pymongo`` driver, the package's extra ``mongodb``) and what their
errors mean: refused credentials or an unsupported command are configuration errors, a duplicate key or
a value the server refuses a data error, an unreachable server transient. Messages name
``mongodb <database>.<collection>``, never the uri (it may hold credentials).
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator
from typing import Any

from ...spi.errors import DataError, PipelineError, RuntimeConfigError

INSTALL_HINT = "the MongoDB connector needs pymongo: pip install 'airflow-provider-seatunnel[mongodb]'"
#: server error codes: authentication failed, unauthorized, not implemented, duplicate key, bad value...
AUTH_CODES = frozenset({13, 18})
UNSUPPORTED_CODES = frozenset({115, 238})
DATA_CODES = frozenset({2, 11000, 14, 52, 121})
_CREDENTIALS = re.compile(r"(mongodb(?:\+srv)?://)[^@/\s]*@")


def client_of(uri: str, timeout_ms: int = 30000) -> Any:
    """A client of ``uri`` without retried writes (the engine retries whole attempts; a staged batch
    sent twice would be staged twice) and with bounded waits."""
    try:
        import pymongo
    except ImportError:
        raise RuntimeConfigError(INSTALL_HINT) from None
    return pymongo.MongoClient(uri, retryWrites=False, serverSelectionTimeoutMS=timeout_ms,
                               connectTimeoutMS=10000, appname="airflow-provider-seatunnel", tz_aware=True)


def clean(text: Any) -> str:
    """``text`` with any ``user:password@`` of a connection string masked."""
    return _CREDENTIALS.sub(r"\1******@", str(text))


def error_of(e: BaseException, doing: str) -> PipelineError:
    """The connector's error for a driver exception raised while ``doing``."""
    import pymongo.errors as errors

    cause = f"{doing}: {clean(getattr(e, '_message', None) or e)}"
    code = getattr(e, "code", None)
    if isinstance(e, (errors.ConfigurationError, errors.InvalidURI)):
        return RuntimeConfigError(cause + " (check uri)")
    if code in AUTH_CODES:
        return RuntimeConfigError(cause + " (check the user and password in uri, or the mongo_conn_id connection)")
    if code in UNSUPPORTED_CODES:
        return RuntimeConfigError(cause + " (the server does not support this command)")
    if isinstance(e, errors.BulkWriteError):
        first = (e.details.get("writeErrors") or [{}])[0]
        return DataError(f"{doing}: {clean(first.get('errmsg', e))}")
    if code in DATA_CODES or isinstance(e, (errors.DuplicateKeyError, errors.DocumentTooLarge)):
        return DataError(cause)
    return PipelineError(cause)


@contextlib.contextmanager
def connected(uri: str, doing: str) -> Iterator[Any]:
    """A client, closed after the block; a driver error in the block becomes :func:`error_of`'s."""
    import pymongo.errors

    client = client_of(uri)
    try:
        yield client
    except pymongo.errors.PyMongoError as e:
        raise error_of(e, doing) from None
    finally:
        client.close()
