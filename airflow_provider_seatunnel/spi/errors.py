"""Runtime failures: each names the pipeline, the plugin and the cause.

``deterministic`` failures (a broken Assert rule, a bad option found at run time, bad data, a path
the run may not write, memory Spark ran out of) fail the same way on every attempt: Airflow must
not retry them.

:func:`error_from` turns any exception a run raises into the :class:`PipelineError` that says what
happened: a Spark error's cause is its innermost meaningful messages (the file, the malformed
record, the value), read down the Java exception's cause chain rather than py4j's "An error
occurred while calling o126.save"; a failure a retry would meet again gets its class and, where
one is known, the fix. :func:`exit_failure` does the same for a spark-submit that ended before
its pipeline reported, from the exit code and the driver log's last lines.
"""

from __future__ import annotations

import errno
import re
from collections.abc import Mapping
from typing import Any


class PipelineError(RuntimeError):
    """A pipeline failed in ``plugin`` because of ``cause``."""

    deterministic = False
    kind = "runtime"

    def __init__(self, cause: str, plugin: str | None = None, pipeline: str | None = None):
        self.cause = cause
        self.plugin = plugin
        self.pipeline = pipeline
        super().__init__(self.describe())

    def describe(self) -> str:
        where = " ".join(x for x in (f"pipeline {self.pipeline}" if self.pipeline else "",
                                     self.plugin or "") if x)
        return f"{where}: {self.cause}" if where else self.cause

    def located(self, plugin: str | None, pipeline: str | None) -> PipelineError:
        self.plugin = self.plugin or plugin
        self.pipeline = self.pipeline or pipeline
        self.args = (self.describe(),)
        return self

    def to_dict(self) -> dict:
        return {"kind": self.kind, "deterministic": self.deterministic, "plugin": self.plugin,
                "pipeline": self.pipeline, "message": self.cause}


class AssertionFailed(PipelineError):
    """An Assert rule did not hold: retrying gives the same answer."""

    deterministic = True
    kind = "assert"


class RuntimeConfigError(PipelineError):
    """An option only checkable at run time is wrong (a missing input file, a bad pattern)."""

    deterministic = True
    kind = "config"


class DataError(PipelineError):
    """The data itself breaks the job (a value that does not parse, a rule raised in a
    transform, a column Spark cannot resolve): the same input fails the same way again."""

    deterministic = True
    kind = "data"


class AccessDenied(PipelineError):
    """The run may not read or write what it needs (a read-only target, a read-only file system, a
    parent path that is a file): a retry meets the same permissions."""

    deterministic = True
    kind = "access"


class OutOfMemory(PipelineError):
    """Spark ran out of memory (``java.lang.OutOfMemoryError``, spark-submit's exit 52): the same
    data in the same memory runs out again; the message says which setting to raise."""

    deterministic = True
    kind = "memory"


#: Spark error classes that fail the same way on every attempt (retrying cannot help).
DETERMINISTIC_SPARK_ERRORS = ("USER_RAISED_EXCEPTION", "UNRESOLVED_COLUMN", "UNRESOLVED_ROUTINE",
                              "DATATYPE_MISMATCH", "PARSE_SYNTAX_ERROR", "CAST_INVALID_INPUT",
                              "MALFORMED_RECORD_IN_PARSING", "TABLE_OR_VIEW_NOT_FOUND", "PATH_NOT_FOUND",
                              "ARITHMETIC_OVERFLOW", "DIVIDE_BY_ZERO", "NUMERIC_VALUE_OUT_OF_RANGE",
                              "INVALID_ARRAY_INDEX", "CAST_OVERFLOW")
#: spark-submit's exit code when Spark's handler of uncaught exceptions stops the JVM after an
#: OutOfMemoryError (the driver's, or a task's in local mode)
SPARK_OOM_EXIT = 52
#: what a JVM (or Python) says when it runs out of memory
OUT_OF_MEMORY = re.compile(r"OutOfMemoryError|Java heap space|GC overhead limit exceeded|"
                           r"Requested array size exceeds VM limit|\bMemoryError\b")
#: what an operating system, Java, Hadoop or a database says when access is refused
ACCESS_DENIED = re.compile(r"Permission denied|AccessDeniedException|AccessControlException|"
                           r"Read-only file system|ReadOnlyFileSystemException|Operation not permitted|"
                           r"ParentNotDirectoryException|Not a directory", re.IGNORECASE)
_ACCESS_ERRNOS = (errno.EACCES, errno.EPERM, errno.EROFS, errno.ENOTDIR)
#: a Java exception's header line in a log (``Caused by: a.b.CException: message``), or a Python one's
_EXCEPTION_LINE = re.compile(r"^(?:Caused by: )?((?:[A-Za-z_$][\w$]*\.)+[A-Z][\w$]*(?:Exception|Error|Throwable))"
                             r"(?::\s*(.*))?$|^([A-Z]\w*(?:Error|Exception)): (.+)$")
_STACK_FRAME = re.compile(r"^\s+at |^\s*\.\.\. \d+ more|^Driver stacktrace:|^JVM stacktrace:")
_SQLSTATE = re.compile(r"\s*SQLSTATE: \w+\s*$")
_ERROR_CLASS = re.compile(r"\[[A-Z][A-Z0-9_]*(\.[A-Z0-9_]+)*\] ")
_PATH = re.compile(r"inode=\"([^\"]+)\"|'(/[^']+)'|(file:/\S+|(?<![\w.])/[\w.@%+=:,/-]+)")
_MAX_PART, _MAX_CAUSE = 600, 2000


def exception_chain(error: BaseException) -> list[tuple[str, str]]:
    """``(class name, message)`` of ``error`` and of every cause below it: down the Java exception's
    ``getCause()`` chain for an error py4j or PySpark brought from the JVM (read while the JVM
    answers), else down Python's ``__cause__``."""
    chain: list[tuple[str, str]] = []
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen and len(chain) < 30:
        seen.add(id(current))
        throwable = getattr(current, "java_exception", None) or getattr(current, "_origin", None)
        if throwable is not None:
            java = _java_chain(throwable)
            if java:
                return chain + java
        chain.append((type(current).__name__, _safe_str(current)))
        current = current.__cause__
    return chain


def _java_chain(throwable: Any) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    try:
        while throwable is not None and len(out) < 30:
            message = throwable.getMessage()
            out.append((str(throwable.getClass().getName()), "" if message is None else str(message)))
            throwable = throwable.getCause()
    except Exception:  # the JVM stopped answering: what was read so far
        pass
    return out


def _safe_str(error: BaseException) -> str:
    try:
        return str(error)
    except Exception:  # py4j asks the JVM for the text: it may be gone
        return ""


#: how gRPC describes a failed call (the Spark Connect client relays it as its message)
_GRPC = re.compile(r"status = StatusCode\.(\w+)\s+details = \"([^\"]*)\"")
#: gRPC statuses no retry fixes: the server refused who we are
GRPC_REFUSED = ("UNAUTHENTICATED", "PERMISSION_DENIED")


def _clean(message: str) -> str:
    """A message's first line (what follows is a stack, a query plan or advice), without Spark's
    trailing SQLSTATE; a failed gRPC call (Spark Connect) as its status and details."""
    grpc = _GRPC.search(message)
    if grpc:
        return f"Spark Connect call failed: {grpc[1]}: {grpc[2]}"[:_MAX_PART]
    first = next((line.strip() for line in message.splitlines() if line.strip()), "")
    text = "" if _STACK_FRAME.match(first) else _SQLSTATE.sub("", first)
    return text if len(text) <= _MAX_PART else text[:_MAX_PART - 3] + "..."


def root_cause(error: BaseException) -> str:
    """What went wrong, from the outermost meaningful message to the innermost: each exception of the
    chain (:func:`exception_chain`) but the ones that only wrap another (py4j's "An error occurred
    while calling ...", a message that repeats one below it or ends in a colon), joined by
    ``"; caused by: "``. A message without Spark's ``[ERROR_CLASS]`` is prefixed with its class."""
    chain = [(name.rsplit(".", 1)[-1], _clean(message)) for name, message in exception_chain(error)]
    parts: list[str] = []
    for i, (name, message) in enumerate(chain):
        below = [m for _, m in chain[i + 1:] if m]
        if name.startswith("Py4J") and below:
            continue
        if not message:
            if not below:
                parts.append(name)
            continue
        if below and (message.endswith(":") or any(m in message for m in below)):
            continue
        part = (message if _ERROR_CLASS.match(message) else f"{name}: {message}").removesuffix(".")
        if part not in parts:
            parts.append(part)
    text = "; caused by: ".join(parts) or type(error).__name__
    return text if len(text) <= _MAX_CAUSE else text[:_MAX_CAUSE - 3] + "..."


def memory_hint(settings: Mapping[str, Any]) -> str:
    """Which memory to raise, with its value now (Spark's default 1g where unset): in local mode the
    tasks run in the driver, so its memory is the one."""
    driver = settings.get("spark.driver.memory") or "1g"
    master = str(settings.get("spark.master") or "local")
    if master.startswith("local"):
        return f"raise spark.driver.memory in env (now {driver})"
    executor = settings.get("spark.executor.memory") or "1g"
    return (f"raise spark.executor.memory in env (now {executor}) if a task ran out, spark.driver.memory "
            f"(now {driver}) if the driver did")


def access_hint(error: BaseException | None, text: str) -> str:
    """What to check, and where: the path a Python ``OSError`` names, else the first one in ``text``."""
    path = getattr(error, "filename", None) if isinstance(error, OSError) else None
    if not path:
        found = _PATH.search(text)
        path = next((g for g in found.groups() if g), None) if found else None
    return f"check the permissions of {path}" if path else "check the permissions of the target"


def _access_denied(error: BaseException, text: str) -> bool:
    return ((isinstance(error, OSError) and getattr(error, "errno", None) in _ACCESS_ERRNOS)
            or isinstance(error, PermissionError) or bool(ACCESS_DENIED.search(text)))


def _deterministic_classes() -> dict[str, type[PipelineError]]:
    return {c.__name__: c for c in (DataError, RuntimeConfigError, AssertionFailed, AccessDenied)}


_DETERMINISTIC_BY_NAME = _deterministic_classes()
#: the last line of a Python traceback a Spark task relays: ``<module>.DataError: message``
_WORKER_ERROR = re.compile(r"(?m)^\s*airflow_provider_seatunnel\.[\w.]+\.(" + "|".join(_DETERMINISTIC_BY_NAME)
                           + r"): (.+)$")
#: the same for the package's transient PipelineError (retrying may help)
_WORKER_TRANSIENT = re.compile(r"(?m)^\s*airflow_provider_seatunnel\.[\w.]+\.PipelineError: (.+)$")


def error_from(error: BaseException, plugin: str | None = None, pipeline: str | None = None,
               settings: Mapping[str, Any] | None = None) -> PipelineError:
    """``error`` as the PipelineError that says what happened (:func:`root_cause`), classified:
    memory exhausted → :class:`OutOfMemory` (with :func:`memory_hint` from ``settings``, the Spark
    settings in force); access refused → :class:`AccessDenied` (with the path); a Spark error
    class in :data:`DETERMINISTIC_SPARK_ERRORS` → :class:`DataError`; else a transient
    :class:`PipelineError`. A PipelineError is returned as it is, located."""
    if isinstance(error, PipelineError):
        return error.located(plugin, pipeline)
    cause = root_cause(error)
    text = "\n".join([_safe_str(error), *(f"{n}: {m}" for n, m in exception_chain(error))])
    if isinstance(error, MemoryError) or OUT_OF_MEMORY.search(text):
        return OutOfMemory(f"{cause}; {memory_hint(settings or {})}", plugin, pipeline)
    grpc = _GRPC.search(text)
    if grpc and grpc[1] in GRPC_REFUSED:
        return AccessDenied(f"{cause}; check the Spark Connect token (the connection's password, or "
                            "SPARK_CONNECT_AUTHENTICATE_TOKEN for the command line)", plugin, pipeline)
    if _access_denied(error, text):
        return AccessDenied(f"{cause}; {access_hint(error, cause)}", plugin, pipeline)
    raised = _WORKER_ERROR.search(text)
    if raised:  # a connector's own deterministic error, raised in a Python worker and relayed by Spark
        return _DETERMINISTIC_BY_NAME[raised[1]](raised[2].strip(), plugin, pipeline)
    relayed = _WORKER_TRANSIENT.search(text)
    if relayed:  # a connector's transient error from a Python worker: its message, not Spark's wrapper
        return PipelineError(relayed[1].strip(), plugin, pipeline)
    cls = DataError if any(code in text for code in DETERMINISTIC_SPARK_ERRORS) else PipelineError
    return cls(cause, plugin, pipeline)


def log_root_cause(log_text: str) -> str | None:
    """The root cause in a driver log's last lines: the last exception line (a Java ``Caused by:``
    chain ends with its innermost cause), or the last one about memory when the JVM ran out (a
    Python driver reports its lost connection after it)."""
    found = []
    for line in log_text.splitlines():
        m = _EXCEPTION_LINE.match(line.strip())
        if m:
            name, message = (m[1], m[2]) if m[1] else (m[3], m[4])
            found.append(f"{name.rsplit('.', 1)[-1]}: {_clean(message)}" if message else name.rsplit(".", 1)[-1])
    if not found:
        return None
    return next((line for line in reversed(found) if OUT_OF_MEMORY.search(line)), found[-1])


def exit_failure(code: int | None, log_tail: str = "", settings: Mapping[str, Any] | None = None, *,
                 reported: bool = False, pipeline: str | None = None, where: str = "") -> PipelineError:
    """A spark-submit that exited with ``code`` (None: unknown) before its pipeline reported (or,
    ``reported``, after it reported success), from the driver log's last lines ``log_tail``:
    :class:`OutOfMemory` for exit 52 or a log that ran out of memory, :class:`AccessDenied` when the
    root cause refuses access, else transient. The message carries the root cause
    (:func:`log_root_cause`), the fix where known and ``where`` (e.g. ``"; see LOG"``)."""
    message = f"spark-submit exited with {code}" + ("" if reported else " before the pipeline reported")
    cause = log_root_cause(log_tail)
    if cause:
        message += f": {cause}"
    if code == SPARK_OOM_EXIT or OUT_OF_MEMORY.search(log_tail):
        if code == SPARK_OOM_EXIT and not (cause and OUT_OF_MEMORY.search(cause)):
            message += " (exit 52: Spark stopped the JVM after an OutOfMemoryError)"
        return OutOfMemory(f"{message}; {memory_hint(settings or {})}{where}", pipeline=pipeline)
    if cause and ACCESS_DENIED.search(cause):
        return AccessDenied(f"{message}; {access_hint(None, cause)}{where}", pipeline=pipeline)
    return PipelineError(message + where, pipeline=pipeline)
