"""Database failures as pipeline errors, classified by SQLSTATE: data the database refuses (a value
too long, a constraint) is a deterministic :class:`~...spi.errors.DataError`; a database that cannot
be reached a retryable :class:`~...spi.errors.PipelineError`; a missing driver, a bad table or
statement, an authentication failure a :class:`~...spi.errors.RuntimeConfigError`. Messages never
hold a password (URLs are masked)."""

from __future__ import annotations

from contextlib import suppress
from typing import Any, Protocol

from ...spi.errors import DETERMINISTIC_SPARK_ERRORS, DataError, PipelineError, RuntimeConfigError
from .options import mask


class HasPassword(Protocol):
    """What an error message needs of a connection: the password it masks (None: none)."""

    @property
    def password(self) -> str | None: ...


#: SQLSTATE classes: transient (retrying may help), data errors (the same rows fail again), and
#: configuration errors (the statement, object or credentials are wrong)
_TRANSIENT_STATES = ("08", "53", "57", "58", "40", "HY", "55P03", "57014")
_DATA_STATES = ("21", "22", "23", "27", "44")
_CONFIG_STATES = ("28", "3D", "3F", "42", "0A", "2B", "3B", "25", "26", "34")
_NETWORK_ERRORS = ("ConnectException", "UnknownHostException", "SocketTimeoutException", "NoRouteToHostException")


class StatementError(Exception):
    """A statement run through a Python database driver failed (:mod:`.pyconnection`): its message
    and SQLSTATE, as a ``java.sql.SQLException`` would carry them."""

    def __init__(self, message: str, sql_state: str | None = None) -> None:
        super().__init__(message)
        self.sql_state = sql_state


def statement_errors() -> tuple[type[BaseException], ...]:
    """What a failed statement raises: a Java ``SQLException`` through Py4J, or a :class:`StatementError`."""
    try:
        from py4j.protocol import Py4JJavaError
    except ImportError:  # a Spark Connect client without py4j
        return (StatementError,)
    return (Py4JJavaError, StatementError)


def access_errors() -> tuple[type[BaseException], ...]:
    """:func:`statement_errors` and Py4J's own (a call the JVM could not make)."""
    try:
        from py4j.protocol import Py4JError
    except ImportError:
        return (StatementError,)
    return (Py4JError, StatementError)


def java_chain(error: BaseException) -> list[Any]:
    """The Java throwables behind a Py4J or PySpark error: causes and SQL next-exceptions."""
    try:
        from py4j.protocol import Py4JError
    except ImportError:
        return []

    start = getattr(error, "java_exception", None) or getattr(error, "_origin", None)
    out: list[Any] = []
    todo = [start] if start is not None else []
    try:
        while todo and len(out) < 30:
            current = todo.pop(0)
            if current is None or any(current.equals(seen) for seen in out):
                continue
            out.append(current)
            todo.append(current.getCause())
            with suppress(Py4JError):  # java.sql.SQLException only
                todo.append(current.getNextException())
    except Py4JError:
        pass
    return out


#: SQLite's primary result codes -> the SQLSTATE of the same class (its driver reports none):
#: ERROR (a bad statement, no such table), BUSY/LOCKED/IOERR/FULL/CANTOPEN (the database file
#: cannot be used now), TOOBIG/CONSTRAINT/MISMATCH/RANGE (the data), READONLY/PERM/AUTH
_SQLITE_STATES = {1: "42000", 5: "HY000", 6: "HY000", 10: "58030", 13: "53100", 14: "08001", 18: "22001",
                  19: "23000", 20: "22000", 25: "22003", 8: "25006", 3: "28000", 23: "28000"}


def sql_state(throwable: Any) -> str | None:
    """The SQLSTATE of a ``java.sql.SQLException`` (None for other throwables); for SQLite's
    exceptions, which carry none, the state of their result code's class."""
    from py4j.protocol import Py4JError

    try:
        state = throwable.getSQLState()
        if state is None and throwable.getClass().getName() == "org.sqlite.SQLiteException":
            return _SQLITE_STATES.get(int(throwable.getErrorCode()) & 0xFF)
        return state
    except Py4JError:
        return None


def state_of(error: BaseException) -> str:
    """The innermost SQLSTATE behind ``error`` ("" when none)."""
    if isinstance(error, StatementError):
        return error.sql_state or ""
    states = [s for s in (sql_state(t) for t in java_chain(error)) if s]
    return states[-1] if states else ""


def db_error(error: BaseException, what: str, conn: HasPassword | None = None) -> Exception:
    """A PipelineError for a failed database operation, classified by SQLSTATE: data errors
    (22, 23) deterministic, unreachable databases (08, 53, 57…) retryable, bad statements,
    objects and credentials (42, 3D, 28…) RuntimeConfigError. The text never holds a password."""
    if isinstance(error, PipelineError):
        return error
    password = conn.password if conn else None
    state, cause, names = None, None, []
    if isinstance(error, StatementError):
        state, cause = error.sql_state, str(error)
    else:
        try:
            for throwable in java_chain(error):
                names.append(throwable.getClass().getName())
                found = sql_state(throwable)
                if found:
                    state, cause = found, throwable.getMessage()
        except access_errors():
            pass
    if cause is None:
        cause = _message_line(error)
    cause = mask(" ".join(str(cause).split()), password)[:600]
    message = f"{what}: {cause}" + (f" (SQLSTATE {state})" if state else "")
    wrapped = _classify(state, names, str(error))(message)
    wrapped.sql_state = state  # type: ignore[attr-defined]
    return wrapped


def _message_line(error: BaseException) -> str:
    """The line of a Java stack trace's text that says what went wrong."""
    lines = [ln for ln in str(error).strip().splitlines() if ln.strip() and not ln.lstrip().startswith("at ")]
    line = next((ln for ln in lines if "Exception: " in ln or ln.startswith(": ")),
                lines[0] if lines else type(error).__name__)
    return line.split("Exception: ", 1)[-1].lstrip(": ")


def _classify(state: str | None, names: list[str], message: str) -> type[PipelineError]:
    if state and state.startswith(_DATA_STATES):
        return DataError
    if state and state.startswith(_CONFIG_STATES):
        return RuntimeConfigError
    if state and state.startswith(_TRANSIENT_STATES):
        return PipelineError
    if any(n.endswith(_NETWORK_ERRORS) for n in names):
        return PipelineError
    if "java.lang.ClassNotFoundException" in names or "java.lang.ClassNotFoundException" in message:
        return RuntimeConfigError
    if any(code in message for code in (*DETERMINISTIC_SPARK_ERRORS, "UNSUPPORTED_DATA_TYPE")):
        return DataError
    return PipelineError


def reraise(error: BaseException, what: str, conn: HasPassword | None) -> Exception:
    """:func:`db_error` for raising ``from`` the original unless its text could hold a secret."""
    wrapped = db_error(error, what, conn)
    raw = str(error)
    wrapped.__cause__ = None if conn is None or mask(raw, conn.password) != raw else error
    wrapped.__suppress_context__ = True
    return wrapped
