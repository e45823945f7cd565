"""Where the runtime goes beyond PySpark's public API, each place guarded; and how a pipeline
driver's Python imports PySpark.

A patch reaches where no public API gives what it needs, and so can break on any PySpark
upgrade. Each one names the PySpark versions it was written for (``supported``, the major.minor
of ``pyspark.__version__``): on any other version the runtime does not apply it and takes the
public API instead; on a version it was written for, it first checks that what it relies on is
there and raises :class:`InternalsChanged`, naming the patch and the version, when it is not.
``tests/runtime/test_pyspark_internals.py`` fails the same way when an installed PySpark
changes what a patch relies on. A patch stays only while it gains 3 % or more of the runtime
benchmark's run (``benchmarks/runtime_vs_pyspark.py --variants``).

* ``status_store_counts``: row counts read from Spark's SQL status store (:func:`marker_rows`).
  Public fallback: ``DataFrame.observe`` with an ``Observation`` (``counting.py``).

``installed_pyspark`` (:func:`without_bundled_pyspark`) is no patch: it reads files, never
PySpark's objects, and changes nothing when they are not laid out as it expects.

``SEATUNNEL_PYSPARK_PATCHES`` is for benchmarks only (unset in production): ``off`` turns
everything here off, a comma-separated list of names (:data:`SWITCHES`) keeps only those on.
"""

from __future__ import annotations

import logging
import os
import re
import sys
import threading
import weakref
import zipfile
from collections import Counter as _Multiset
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

#: benchmark-only switch: "off", or the names of the patches that stay on (unset: all on)
ENV = "SEATUNNEL_PYSPARK_PATCHES"
log = logging.getLogger("seatunnel.runtime")


class InternalsChanged(RuntimeError):
    """A PySpark this runtime's patch was written for lacks what the patch relies on."""


def pyspark_version() -> str:
    """The installed PySpark's version (imports the ``pyspark`` package)."""
    import pyspark

    return str(pyspark.__version__)


@dataclass(frozen=True)
class Patch:
    """One reach into PySpark's internals: its name and the PySpark versions it was written for."""

    name: str
    supported: tuple[str, ...]

    def written_for(self, version: str | None = None) -> bool:
        """Whether ``version`` (default: the installed PySpark's) is one this patch was written for."""
        major_minor = ".".join((pyspark_version() if version is None else version).split(".")[:2])
        return major_minor in self.supported

    def applies(self) -> bool:
        """Whether the runtime uses this patch: written for the installed PySpark, and not switched off."""
        return switched_on(self.name) and self.written_for()

    def changed(self, problems: list[str]) -> InternalsChanged:
        return InternalsChanged(
            f"PySpark internals changed: the patch {self.name}, written for PySpark {', '.join(self.supported)}, "
            f"cannot work with the installed PySpark {pyspark_version()}: {'; '.join(problems)}")


STATUS_STORE_COUNTS = Patch("status_store_counts", supported=("4.2",))
PATCHES = {p.name: p for p in (STATUS_STORE_COUNTS,)}
#: what ``SEATUNNEL_PYSPARK_PATCHES`` can name: the patches, and the driver's PySpark import path
SWITCHES = (*PATCHES, "installed_pyspark")


def switched_on(name: str) -> bool:
    """Whether ``SEATUNNEL_PYSPARK_PATCHES`` leaves the patch ``name`` on."""
    value = os.environ.get(ENV, "").strip()
    if value in ("", "on", "all"):
        return True
    if value in ("off", "none"):
        return False
    names = {n.strip() for n in value.split(",") if n.strip()}
    if names - set(SWITCHES):
        raise ValueError(f"{ENV}={value}: unknown patch {', '.join(sorted(names - set(SWITCHES)))} "
                         f"(known: {', '.join(SWITCHES)}, or off)")
    return name in names


# --- the driver's start -------------------------------------------------------------------------

def prepare_driver_python() -> None:
    """The start of a pipeline driver's Python, before anything imports PySpark: PySpark from the
    installed package (:func:`without_bundled_pyspark`). Changes nothing once PySpark is imported
    (a driver started otherwise, a test's session)."""
    if "pyspark" in sys.modules or not switched_on("installed_pyspark"):
        return
    sys.path[:] = without_bundled_pyspark(sys.path)


def without_bundled_pyspark(path: Sequence[str]) -> list[str]:
    """``path`` (a driver's ``sys.path``) without spark-submit's ``pyspark.zip`` when that zip is
    the own copy of a pyspark package importable from ``path`` (``SPARK_HOME`` is the
    pip-installed PySpark) and holds the same version: PySpark is then imported from the package.
    Likewise its ``py4j-*-src.zip`` when a py4j package importable from ``path`` is the same release.

    Python keeps no bytecode for modules it imports from a zip, so a driver importing PySpark
    from spark-submit's zip compiles some two hundred modules on every start (about half a
    second: benchmarks/driver_startup.py), py4j's zip another eighteen; the packages' modules were
    byte-compiled when they were installed. Any other Spark (a cluster's ``SPARK_HOME``, another
    version) keeps its zips.

    No PySpark internal: it reads files, never PySpark's objects, and when the package's layout
    is not the one it looks for it changes nothing (the driver imports the zip, as any does).
    Its version guard is the zip's ``version.py`` being the package's, byte for byte."""
    directories = {os.path.realpath(p) for p in path if p and not p.endswith(".zip")}
    out = list(path)
    for entry in path:
        name = os.path.basename(entry)
        if name == "pyspark.zip":
            package = Path(os.path.realpath(entry)).parents[2]  # <site>/pyspark: <site>/pyspark/python/lib/x.zip
            if package.name != "pyspark" or str(package.parent) not in directories:
                continue
            installed = [package / "version.py"]
            inside = "pyspark/version.py"
        elif name.startswith("py4j-") and name.endswith(".zip"):
            installed = [Path(d) / "py4j" / "version.py" for d in sorted(directories)]
            inside = "py4j/version.py"
        else:
            continue
        if _same_file(entry, inside, [p for p in installed if p.is_file()]):
            out.remove(entry)
    return out


def _same_file(archive: str, inside: str, files: Sequence[Path]) -> bool:
    """Whether the zip ``archive``'s member ``inside`` is, byte for byte, one of ``files``."""
    if not files:
        return False
    try:
        with zipfile.ZipFile(archive) as bundled:
            data = bundled.read(inside)
        return any(f.read_bytes() == data for f in files)
    except (OSError, KeyError, zipfile.BadZipFile):
        return False


# --- status_store_counts ----------------------------------------------------------------------

#: A counting point is a filter that keeps every row (partition ids are never negative); its key
#: makes it findable in Spark's SQL plan graphs, whose "number of output rows" metric is the count.
MARKER = re.compile(r"SPARK_PARTITION_ID\(\) > -(\d+)\b", re.IGNORECASE)
#: the JVM methods :func:`marker_rows` calls, by class, with their parameter types ("SparkSession"
#: and "SparkContext" are the classes of the session's and the context's JVM objects)
STATUS_STORE_METHODS: dict[str, dict[str, tuple[str, ...]]] = {
    "SparkSession": {"sharedState": ()},
    "SparkContext": {"listenerBus": ()},
    "org.apache.spark.sql.internal.SharedState": {"statusStore": ()},
    "org.apache.spark.sql.execution.ui.SQLAppStatusStore": {
        "executionsCount": (), "executionsList": ("int", "int"), "execution": ("long",),
        "executionMetrics": ("long",), "planGraph": ("long",)},
    "org.apache.spark.sql.execution.ui.SQLExecutionUIData": {
        "executionId": (), "physicalPlanDescription": (), "completionTime": ()},
    "org.apache.spark.sql.execution.ui.SparkPlanGraph": {"allNodes": ()},
    "org.apache.spark.sql.execution.ui.SparkPlanGraphNode": {"name": (), "desc": (), "metrics": ()},
    "org.apache.spark.sql.execution.ui.SQLPlanMetric": {"name": (), "accumulatorId": ()},
    "org.apache.spark.scheduler.LiveListenerBus": {"waitUntilEmpty": ("long",)},
}
_checked_jvms: set[int] = set()
#: (application id, execution id) -> {marker key: rows} of finished SQL executions (parsed once);
#: bounded by :func:`hold`: only executions some living counter may still read are kept
_finished: dict[tuple[str, int], dict[int, int]] = {}
#: per application: the first SQL execution :func:`settle` has not yet seen finished
_settled: dict[str, int] = {}
#: per application: the ``since`` of every counter still alive (a multiset; see :func:`hold`)
_held: dict[str, _Multiset[int]] = {}
#: per application: how many kept executions trigger the next pruning while counters are alive
_prune_at: dict[str, int] = {}
_PRUNE_FLOOR = 1024
#: (application id, since) of counters collected since the last :func:`hold` or :func:`settle`
_released: deque[tuple[str, int]] = deque()
_settling = threading.Lock()


def hold(app: str, since: int, owner: object) -> None:
    """A counter (``owner``) reads the executions from ``since`` on for as long as it lives.

    Kept executions older than every living counter's ``since`` can never be read again and are
    dropped, so a stream of many micro-batches (each counting its rows with counters of its own)
    keeps a bounded number of them however long it runs; a batch job keeps each table's until its
    counters are gone. A counter's end is only queued when it is collected (a collection can
    happen anywhere, even inside this module); the next :func:`hold` or :func:`settle` applies it."""
    with _settling:
        _apply_releases()
        _held.setdefault(app, _Multiset())[since] += 1
        _prune(app)
    weakref.finalize(owner, _released.append, (app, since))


def _apply_releases() -> None:
    """The queued ends of counters, applied (under ``_settling``); the applications they leave are pruned."""
    touched = set()
    while _released:
        app, since = _released.popleft()
        held = _held.get(app)
        if held is not None:
            held[since] -= 1
            if held[since] <= 0:
                del held[since]
            touched.add(app)
    for app in touched:
        _prune(app)


def _prune(app: str) -> None:
    """Drop the kept executions of ``app`` no living counter can read (under ``_settling``): all of them
    when none lives, else those older than the oldest ``since``, looked for once their number doubled."""
    held = _held.get(app)
    if held and len(_finished) < _prune_at.get(app, _PRUNE_FLOOR):
        return
    floor = min(held) if held else None
    for key in [key for key in list(_finished) if key[0] == app and (floor is None or key[1] < floor)]:
        _finished.pop(key, None)
    if held:
        _prune_at[app] = max(_PRUNE_FLOOR, 2 * len(_finished))
    else:
        _held.pop(app, None)
        _prune_at.pop(app, None)


def kept_executions(app: str) -> int:
    """How many finished executions of ``app`` are kept (for tests and diagnostics)."""
    with _settling:
        return sum(1 for key in _finished if key[0] == app)


def status_store_problems(spark: Any) -> list[str]:
    """What :func:`marker_rows` relies on and ``spark``'s PySpark and JVM lack."""
    jsession: Any = getattr(spark, "_jsparkSession", None)
    jsc: Any = getattr(spark.sparkContext, "_jsc", None)
    if jsession is None or jsc is None:
        return [f"{name} is missing" for name, value in (("SparkSession._jsparkSession", jsession),
                                                         ("SparkContext._jsc", jsc)) if value is None]
    gateway, jvm = spark.sparkContext._gateway, spark.sparkContext._jvm
    primitive = {"int": jvm.java.lang.Integer.TYPE, "long": jvm.java.lang.Long.TYPE}
    problems = []
    for class_name, methods in STATUS_STORE_METHODS.items():
        try:
            if class_name == "SparkSession":
                cls = jsession.getClass()
            elif class_name == "SparkContext":
                cls = jsc.sc().getClass()
            else:
                cls = jvm.java.lang.Class.forName(class_name)
        except Exception as e:  # py4j's error for a class the JVM does not have
            problems.append(f"the JVM has no class {class_name} ({type(e).__name__})")
            continue
        for method, parameters in methods.items():
            types = gateway.new_array(jvm.java.lang.Class, len(parameters))
            for i, parameter in enumerate(parameters):
                types[i] = primitive[parameter]
            try:
                cls.getMethod(method, types)
            except Exception:  # NoSuchMethodException, through py4j
                problems.append(f"{cls.getName()}.{method}({', '.join(parameters)}) is missing")
    return problems


def check_status_store(spark: Any) -> None:
    """Raise :class:`InternalsChanged` when the status store is not as :func:`marker_rows` reads
    it (asked once per JVM)."""
    jvm_id = id(spark.sparkContext._gateway)
    if jvm_id in _checked_jvms:
        return
    problems = status_store_problems(spark)
    if problems:
        raise STATUS_STORE_COUNTS.changed(problems)
    _checked_jvms.add(jvm_id)


def _digits(text: str) -> int:
    return int(re.sub(r"[^0-9]", "", text) or 0)


def _status_store(spark: Any) -> Any:
    return spark._jsparkSession.sharedState().statusStore()


def newest_execution(spark: Any) -> int:
    """The id of the newest SQL execution the status store holds (-1 for none)."""
    store = _status_store(spark)
    count = int(store.executionsCount())
    return int(store.executionsList(count - 1, 1).apply(0).executionId()) if count else -1


def _execution_markers(store: Any, execution_id: int, execution: Any) -> dict[int, int]:
    """{marker key: rows} of one SQL execution's counting points."""
    found: dict[int, int] = {}
    if not MARKER.search(execution.physicalPlanDescription() or ""):
        return found
    values = store.executionMetrics(execution_id)
    nodes = store.planGraph(execution_id).allNodes()
    for j in range(nodes.size()):
        node = nodes.apply(j)
        marker = MARKER.search(node.desc()) if node.name() == "Filter" else None
        if marker is None:
            continue
        metrics = node.metrics()
        for m in range(metrics.size()):
            metric = metrics.apply(m)
            if metric.name() == "number of output rows":
                value = values.get(metric.accumulatorId())
                found[int(marker.group(1))] = _digits(value.get()) if value.isDefined() else 0
    return found


def marker_rows(spark: Any, since: int, wait: float) -> dict[int, int]:
    """Rows through every counting point of the SQL executions from id ``since`` on (the largest
    value when several executions ran one: a persisted or recomputed plan runs a point again).

    Reads Spark's SQL status store, after the listener bus has delivered every event posted so
    far (the end of the action that ran the points is posted before the action returns)."""
    _drain(spark, wait)
    store = _status_store(spark)
    app = spark.sparkContext.applicationId
    rows: dict[int, int] = {}
    for execution_id in range(max(since, 0), newest_execution(spark) + 1):
        found = _finished.get((app, execution_id))
        if found is None:
            stored = store.execution(execution_id)
            if not stored.isDefined():
                continue
            execution = stored.get()
            found = _execution_markers(store, execution_id, execution)
            if execution.completionTime().isDefined():
                with _settling:
                    _finished[(app, execution_id)] = found
        for marker_key, value in found.items():
            rows[marker_key] = max(rows.get(marker_key, 0), value)
    return rows


def _drain(spark: Any, wait: float) -> None:
    try:
        if wait > 0:  # (0: what has arrived, e.g. the live metrics of a running action)
            spark.sparkContext._jsc.sc().listenerBus().waitUntilEmpty(int(wait * 1000))
    except Exception as e:  # a bus still busy after ``wait``: read what has arrived
        log.debug("listener bus not drained: %s", e)


def settle(spark: Any, wait: float = 10.0) -> None:
    """Keep the counting points of every SQL execution that finished since the last call, so that
    :func:`marker_rows` finds them later even when the status store dropped the execution.

    The store keeps the newest ``spark.sql.ui.retainedExecutions`` finished executions (1,000 by
    default); a job of many tables runs more than that before its counts are read at its end. The
    runtime calls this once each table's write returned, when the rows it wrote are final: the
    executions finished since are read once (only those), and the counts stay however many run
    after them. Safe from several threads."""
    _drain(spark, wait)
    store = _status_store(spark)
    app = spark.sparkContext.applicationId
    with _settling:
        newest = newest_execution(spark)
        first_open = None
        for execution_id in range(_settled.get(app, 0), newest + 1):
            if (app, execution_id) in _finished:
                continue
            stored = store.execution(execution_id)
            if not stored.isDefined():  # dropped before anyone read it (or never stored)
                continue
            execution = stored.get()
            if execution.completionTime().isDefined():
                _finished[(app, execution_id)] = _execution_markers(store, execution_id, execution)
            elif first_open is None:
                first_open = execution_id
        _settled[app] = newest + 1 if first_open is None else first_open
        _apply_releases()
        _prune(app)
