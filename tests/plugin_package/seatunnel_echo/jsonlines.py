"""JsonLines sink: JSON lines files in a local directory, exactly once per run id (a two-phase commit).

Options: ``path`` (required), the directory. Each table's rows land in
``<path>/<table>-<commit>-<n>.jsonl``, one file per writer (the sink writes at
``vertex.parallelism``, as the data arrives), one JSON object per line; deletes are written as
plain rows.

Every (run id, pipeline, sink, table) is one *commit key* (the clones of a sink in a split pipeline
share its ``ref``, not their pipeline):

* ``prepare`` writes the table with one Spark write into a hidden staging directory,
  ``<path>/.staging/<key>/attempt-<n>-<random>/`` (readers skip dot-directories). For a key whose
  marker exists (committed already) the rows pass once through Spark's ``noop`` sink (the engine
  counts them in that pass) and nothing is written.
* ``commit`` claims the key by creating its journal ``<path>/.commits/<key>.pending`` exclusively
  (one attempt wins), renames the staged files into place (``sink.move`` fault point before each),
  then renames the journal to the marker ``<key>.committed`` (``sink.commit`` just before): one
  atomic step records the commit. A key with its marker: nothing to do. A key whose journal another
  attempt wrote (a killed commit, or an overlapping attempt): that attempt's moves are finished
  (each rename is idempotent) and recorded; this attempt's own files are never published.
* ``abort`` moves back what a commit of this attempt published without recording it, then drops
  the attempt's staging (best effort).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import re
import shutil
import uuid
from collections.abc import Mapping
from typing import Any

from airflow_provider_seatunnel.spi import (
    SINK,
    Capabilities,
    Connector,
    Dataset,
    Lineage,
    RunContext,
    TwoPhaseSink,
    Vertex,
)
from airflow_provider_seatunnel.spi.errors import PipelineError, RuntimeConfigError
from airflow_provider_seatunnel.spi.options import JobConfig, PluginConfig, Problem
from airflow_provider_seatunnel.spi.rows import data_only

log = logging.getLogger(__name__)

NAME = "JsonLines"
STAGING, COMMITS = ".staging", ".commits"


def directory(options: Mapping[str, Any]) -> str:
    """The absolute local directory ``path`` names (a ``file://`` URI or a plain path)."""
    path = options.get("path")
    if not isinstance(path, str) or not path.strip():
        raise RuntimeConfigError("path must be a non-empty string")
    text = path.strip()
    return os.path.abspath(os.path.expanduser(text[len("file://"):] if text.startswith("file://") else text))


def commit_key(run_id: str, pipeline: str, sink_ref: str, table: str) -> str:
    """A file-name-safe key of (run id, pipeline, sink, table); a hash keeps distinct ones distinct."""
    text = f"{run_id}|{pipeline}|{sink_ref}|{table}"
    readable = re.sub(r"[^A-Za-z0-9_.-]+", "_", f"{run_id}-{sink_ref}-{table}").strip("._")[:80]
    return f"{readable}-{hashlib.sha1(text.encode()).hexdigest()[:10]}"


def _paths(root: str, key: str) -> dict[str, str]:
    return {"staging": os.path.join(root, STAGING, key),
            "journal": os.path.join(root, COMMITS, f"{key}.pending"),
            "marker": os.path.join(root, COMMITS, f"{key}.committed")}


def _write_exclusive(path: str, payload: Mapping[str, Any]) -> bool:
    """Create ``path`` holding ``payload`` unless it exists (False: another attempt created it)."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    except FileExistsError:
        return False
    with os.fdopen(fd, "w") as fh:
        json.dump(payload, fh)
        fh.flush()
        os.fsync(fh.fileno())
    return True


def _roll_forward(journal: str, marker: str) -> bool:
    """Finish the moves a journal names and record the commit; False when its staged files are lost
    (then the files it published are removed with the journal: the key is free again)."""
    try:
        with open(journal, encoding="utf-8") as fh:
            moves = json.load(fh)["moves"]
    except FileNotFoundError:  # its writer recorded it meanwhile
        return os.path.exists(marker)
    if any(not os.path.exists(src) and not os.path.exists(dst) for src, dst in moves):
        for _, dst in moves:
            with contextlib.suppress(FileNotFoundError):
                os.remove(dst)
        with contextlib.suppress(FileNotFoundError):
            os.remove(journal)
        return False
    for src, dst in moves:
        with contextlib.suppress(FileNotFoundError):  # moved already (by its writer, or before a kill)
            os.rename(src, dst)
    with contextlib.suppress(FileNotFoundError):
        os.rename(journal, marker)
    return True


def _prepare_table(ctx: RunContext, vertex: Vertex, root: str, table: str, df: Any) -> dict[str, Any]:
    key = commit_key(ctx.run_id, ctx.pipeline_key, vertex.ref, table)
    paths = _paths(root, key)
    if os.path.exists(paths["marker"]):
        log.info("%s: table %s of run %s is committed already; nothing to write", vertex.ref, table, ctx.run_id)
        df.write.format("noop").mode("overwrite").save()  # the one pass over the rows: the engine counts them
        return {"table": table, "key": key, "status": "committed"}
    staging = os.path.join(paths["staging"], f"attempt-{ctx.attempt}-{uuid.uuid4().hex[:8]}")
    rows = ctx.with_write_faults(vertex, data_only(df))  # restore trials may fail or kill this write
    try:
        rows.write.mode("errorifexists").option("compression", "none").json("file://" + staging)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    staged = sorted(name for name in os.listdir(staging) if name.startswith("part-") and name.endswith(".json"))
    digest = hashlib.sha1(key.encode()).hexdigest()[:10]
    moves = [[os.path.join(staging, name), os.path.join(root, f"{table}-{digest}-{n:05d}.jsonl")]
             for n, name in enumerate(staged)]
    return {"table": table, "key": key, "status": "staged", "staging": staging, "moves": moves}


def prepare(ctx: RunContext, vertex: Vertex, data: Dataset) -> dict[str, Any]:
    root = directory(vertex.config)
    tables: list[dict[str, Any]] = []
    try:
        for table, df in data.items():
            tables.append(_prepare_table(ctx, vertex, root, table, df))
    except BaseException:
        abort(ctx, vertex, {"root": root, "tables": tables})
        raise
    return {"root": root, "tables": tables}


def commit(ctx: RunContext, vertex: Vertex, info: Mapping[str, Any]) -> None:
    root = info["root"]
    for entry in info["tables"]:
        if entry["status"] != "staged":
            continue
        paths = _paths(root, entry["key"])
        if os.path.exists(paths["marker"]):
            log.info("%s: table %s of run %s was committed by another attempt", vertex.ref, entry["table"],
                     ctx.run_id)
        elif not _write_exclusive(paths["journal"], {"attempt": ctx.attempt, "moves": entry["moves"]}):
            # another attempt claimed the key: finish its commit, never publish ours
            if not _roll_forward(paths["journal"], paths["marker"]):
                raise PipelineError(f"an earlier attempt's commit of table {entry['table']} cannot be finished "
                                    "(its staged files are gone); run again to write the table afresh")
            log.info("%s: finished the commit of table %s an earlier attempt had started", vertex.ref,
                     entry["table"])
        else:
            for src, dst in entry["moves"]:
                ctx.fault_point("sink.move", vertex)
                os.rename(src, dst)
            ctx.fault_point("sink.commit", vertex)
            os.rename(paths["journal"], paths["marker"])
            log.info("%s: committed %d files of table %s", vertex.ref, len(entry["moves"]), entry["table"])
        shutil.rmtree(paths["staging"], ignore_errors=True)  # this attempt's staging and any dead one's


def abort(ctx: RunContext, vertex: Vertex, info: Mapping[str, Any] | None) -> None:
    if not info:
        return
    root = info["root"]
    for entry in info["tables"]:
        if entry["status"] != "staged":
            continue
        paths = _paths(root, entry["key"])
        mine = False
        with contextlib.suppress(OSError, ValueError, KeyError), open(paths["journal"], encoding="utf-8") as fh:
            mine = json.load(fh)["moves"] == entry["moves"]
        if mine and not os.path.exists(paths["marker"]):  # our commit started: take back what it moved
            for src, dst in entry["moves"]:
                if os.path.exists(dst) and not os.path.exists(src):
                    os.rename(dst, src)
            os.remove(paths["journal"])
        shutil.rmtree(entry["staging"], ignore_errors=True)


class JsonLines(Connector, TwoPhaseSink, Lineage):
    name = NAME
    capabilities = Capabilities(sections=frozenset({SINK}), committer=True)  # a driver-side commit
    required = ("path",)
    identity = ("path",)  # names the data: pipeline task ids and stream state keys derive from it
    description = "Writes JSON lines files into a local directory, exactly once per run id."

    def check(self, plugin: PluginConfig, job: JobConfig) -> list[Problem]:
        path = plugin.get("path")
        if plugin.has("path") and (not isinstance(path, str) or not path.strip()):
            return [job.problem("path must be a non-empty string", plugin, key="path",
                                hint='write path = "/data/out"')]
        return []

    def assets(self, options: Mapping[str, Any]) -> list[str]:
        try:
            return ["file://" + directory(options)]
        except RuntimeConfigError:
            return []

    def prepare(self, ctx: RunContext, vertex: Vertex, data: Dataset) -> Any:
        return prepare(ctx, vertex, data)

    def commit(self, ctx: RunContext, vertex: Vertex, info: Any) -> None:
        commit(ctx, vertex, info)

    def abort(self, ctx: RunContext, vertex: Vertex, info: Any) -> None:
        abort(ctx, vertex, info)


CONNECTOR = JsonLines()
