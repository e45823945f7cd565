"""The tables of a multi-table sink written at once, inside the pipeline's one Spark application.

A sink that receives many tables (a Jdbc ``table_list``, a CDC source's table list) stages each of
them with a few statements on the driver and one Spark job. One table after another, the driver
waits on every round trip and the executors idle between the jobs. Here the tables go through a
bounded pool of threads instead; each thread is its own FAIR scheduler pool (the local property
``spark.scheduler.pool``, with ``spark.scheduler.mode = FAIR`` set at session start for a pipeline
with a multi-table sink: :func:`session_conf`), so the tables' jobs share the executors.

Only a sink that declares it (``Capabilities.concurrent_tables``: its verbs are safe from several
threads) is written so. How many tables at once (:func:`concurrency`): the env option
:data:`ENV_OPTION` when the job sets it, else as many as keep every core busy with the sink's
writers (``cores / parallelism``), at least :data:`MIN_TABLES` (the work per table is mostly
waiting), at most :data:`MAX_TABLES`; never more than the tables. One table at a time on a Spark
Connect session (no local properties there). A STREAMING micro-batch holds several tables only when
one query writes a shared capture's tables (:mod:`.streaming_shared`): they go through the pool
too. The commit phase publishes the staged tables the same way, each table its own publish (its own transaction,
commit-log row and fencing), unless the sink publishes every table together.

:func:`each_table` runs the work: the first table alone (what a sink creates once, such as its
bookkeeping tables, is created by one writer), then the others in the pool. The first failure
stops new tables from starting, lets the running ones end, and is raised naming its table; the
caller is given every table that succeeded, to discard what they staged.
"""

from __future__ import annotations

import itertools
import logging
import os
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from typing import Any, TypeVar

from ..config.options import as_int
from ..plan.logical import CONCURRENT_TABLES
from ..spi import get_connector
from ..spi.errors import PipelineError, RuntimeConfigError
from ..spi.sessions import is_connect

log = logging.getLogger("seatunnel.runtime")

T = TypeVar("T")
#: an error as the PipelineError the run reports (the run context's ``fail`` for the sink's vertex)
Fail = Callable[[BaseException], BaseException]

#: the job's env option: tables a multi-table sink writes at once (1: one after another); the compiler
#: refuses a value that is not a positive integer (:func:`..plan.logical.read_settings`)
ENV_OPTION = CONCURRENT_TABLES
MIN_TABLES = 4
MAX_TABLES = 16
POOL_PREFIX = "seatunnel-table-"


def has_multi_table_sink(pipeline: Any) -> bool:
    return any(v.kind == "sink" and v.multi_table for v in pipeline.vertices)


#: Spark's adaptive query execution (see :func:`session_conf`)
ADAPTIVE = "spark.sql.adaptive.enabled"


def session_conf(plan: Any, pipeline: Any) -> dict[str, str]:
    """``spark.scheduler.mode = FAIR`` for a pipeline with a multi-table sink, unless the job's env
    sets the scheduler mode itself. Such a pipeline that is a plain copy (no transform; every sink
    writes its tables at once, ``Capabilities.concurrent_tables``) also runs without adaptive query
    execution (:data:`ADAPTIVE`), unless the env sets it: every shuffle of such a copy has its
    partition count from the plan's parallelism, which adaptive execution keeps, so all it would
    add is a Spark job and a re-plan per shuffle of every table (three jobs a table instead of one)."""
    if not has_multi_table_sink(pipeline):
        return {}
    out = {} if "spark.scheduler.mode" in plan.env else {"spark.scheduler.mode": "FAIR"}
    if ADAPTIVE not in plan.env and _plain_copy(pipeline):
        out[ADAPTIVE] = "false"
    return out


def _plain_copy(pipeline: Any) -> bool:
    """Sources straight into sinks that all write their tables at once."""
    sinks = [v for v in pipeline.vertices if v.kind == "sink"]
    if not sinks or any(v.kind not in ("source", "sink") for v in pipeline.vertices):
        return False
    return all(getattr(getattr(get_connector(v.plugin), "capabilities", None), "concurrent_tables", False)
               for v in sinks)


def _cores(spark: Any) -> int:
    try:
        return max(1, int(spark.sparkContext.defaultParallelism))
    except Exception:
        return os.cpu_count() or 1


def configured(env: Any) -> int | None:
    """The env option :data:`ENV_OPTION`, or None when the job leaves it out; a RuntimeConfigError
    when it is not a positive integer (a plan the compiler did not check: it refuses such a value)."""
    raw = env.get(ENV_OPTION) if hasattr(env, "get") else None
    if raw is None:
        return None
    value = as_int(raw)
    if value is None or value < 1:
        raise RuntimeConfigError(f"env {ENV_OPTION} must be a positive integer, found {raw!r}")
    return value


def concurrency(ctx: Any, vertex: Any, tables: int, sink: Any = None) -> int:
    """How many of a sink's ``tables`` are written at once (see the module's docstring); 1 unless the
    sink declares ``concurrent_tables`` (:class:`..spi.Capabilities`), and 1 where its
    ``allows_concurrent_tables(vertex)`` says the target takes one writer at a time."""
    capable = getattr(getattr(sink, "capabilities", None), "concurrent_tables", False)
    if not capable or tables <= 1 or is_connect(ctx.spark):
        return 1
    allows = getattr(sink, "allows_concurrent_tables", None)  # a target that takes one writer at a time
    if allows is not None and not allows(vertex):
        return 1
    wanted = configured(ctx.plan.env)
    if wanted is None:
        wanted = min(MAX_TABLES, max(MIN_TABLES, _cores(ctx.spark) // max(1, vertex.parallelism)))
    return max(1, min(wanted, tables))


def _in_pool(spark: Any, slots: itertools.count) -> None:
    """A pool thread's start: its own FAIR scheduler pool for every job it runs."""
    spark.sparkContext.setLocalProperty("spark.scheduler.pool", f"{POOL_PREFIX}{next(slots)}")


def _named(error: BaseException, table: str, fail: Fail | None) -> BaseException:
    """``error`` naming ``table``: an Exception as its PipelineError (``fail``: the run context's), whose
    cause gets the table when it does not name it already; without ``fail``, a note."""
    if fail is not None and isinstance(error, Exception) and not isinstance(error, PipelineError):
        error = fail(error)
    if isinstance(error, PipelineError):
        if table not in error.cause:
            error.cause = f"table {table}: {error.cause}"
            error.args = (error.describe(),)
    elif isinstance(error, Exception):
        error.add_note(f"while writing the table {table}")
    return error


def each_table(spark: Any, items: Sequence[tuple[str, Callable[[], T]]], workers: int,
               done: Callable[[T], None], fail: Fail | None = None, first_alone: bool = True) -> None:
    """Run each ``(table, work)`` of ``items``, ``workers`` at once (the first one alone unless not
    ``first_alone``); ``done`` is called with every result, in the order they finish. The first failure
    is raised once the running tables ended, after every result was handed to ``done``, naming its
    table when there are several (see :func:`_named`)."""
    several = len(items) > 1
    if workers > 1 and several and not first_alone:
        log.info("writing %d tables, %d at once", len(items), workers)
        _pooled(spark, items, workers, done, fail)
        return
    for table, work in items[:1] if workers > 1 else items:
        try:
            done(work())
        except BaseException as e:
            if not several:
                raise
            named = _named(e, table, fail)
            if named is e:
                raise
            raise named from e
    if workers > 1 and several:
        log.info("writing %d tables, %d at once", len(items), workers)
        _pooled(spark, items[1:], workers, done, fail)


def _pooled(spark: Any, items: Sequence[tuple[str, Callable[[], T]]], workers: int,
            done: Callable[[T], None], fail: Fail | None) -> None:
    waiting = list(reversed(items))
    running: dict[Future, str] = {}
    failed: tuple[str, BaseException] | None = None
    with ThreadPoolExecutor(workers, thread_name_prefix="seatunnel-table", initializer=_in_pool,
                            initargs=(spark, itertools.count())) as pool:
        try:
            while waiting or running:
                while waiting and failed is None and len(running) < workers:
                    table, work = waiting.pop()
                    running[pool.submit(work)] = table
                if not running:
                    break
                finished, _ = wait(running, return_when=FIRST_COMPLETED)
                for future in finished:
                    table = running.pop(future)
                    error = future.exception()
                    if error is None:
                        done(future.result())
                    elif failed is None:
                        failed = (table, error)
                    else:
                        log.warning("table %s failed too: %s", table, error)
        except BaseException:
            for future in running:
                future.cancel()
            raise
    if failed is not None:
        table, error = failed
        named = _named(error, table, fail)
        raise named from (None if named is error else error)
