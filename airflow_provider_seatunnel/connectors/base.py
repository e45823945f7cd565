"""What the compiler knows of a plugin: its kinds, options and identity."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..config.errors import Problem
    from ..config.loader import JobConfig, PluginConfig

SOURCE, TRANSFORM, SINK = "source", "transform", "sink"

#: Option names whose values are secrets: kept out of identities, plans and logs.
SECRET_OPTIONS = frozenset({"password", "username", "user", "auth", "token", "secret", "access_key",
                            "secret_key", "passwd", "credential", "credentials"})


_URL_SECRET = re.compile(r"(?i)\b(password|passwd|pwd|secret|token|user|username)=([^&;\s]*)")
_URL_USERINFO = re.compile(r"(//[^/:@\s]*):([^@/\s]*)@")


def mask_credentials(text: str) -> str:
    """``text`` with the credentials a connection URL may embed masked: ``password=``/``user=``
    parameters and ``user:password@`` user info."""
    text = _URL_SECRET.sub(lambda m: f"{m.group(1)}=******", str(text))
    return _URL_USERINFO.sub(r"\1:******@", text)


@dataclass(frozen=True)
class Connector:
    """A plugin the compiler knows by name.

    ``kinds`` are the sections it may stand in; it can run in a section when it has
    that section's runtime hook (others still plan, with a warning, and fail ``validate``);
    ``required`` lists options that must be set; ``identity`` lists the options that
    name its external data (a path, a table), from which pipeline task ids are derived;
    ``committer`` marks sinks that publish through a driver-side commit (a coordinator
    slot in SeaTunnel's count); ``stores_deletes`` sinks apply DELETE rows (others write
    them as plain rows and say so); ``check`` is an optional compile-time validator.
    """

    name: str
    kinds: frozenset[str]
    required: tuple[str, ...] = ()
    identity: tuple[str, ...] = ()
    committer: bool = False
    stores_deletes: bool = False
    check: Callable[[PluginConfig, JobConfig], list[Problem]] | None = field(default=None, compare=False)
    description: str = ""
    # Runtime hooks (Spark code; each imports pyspark inside, never at module level):
    #   read(ctx, vertex) -> {table id: DataFrame}                       (sources)
    #   apply(ctx, vertex, inputs: {dataset name: {table id: DataFrame}})
    #       -> {table id: DataFrame}                                     (transforms)
    #   prepare(ctx, vertex, data: {table id: DataFrame}) -> commit info (sinks: write staged data)
    #   commit(ctx, vertex, info) / abort(ctx, vertex, info)             (sinks: publish / discard)
    # Compile time, no Spark: schema(plugin, job, inputs: list[Schema | None])
    #   -> (output Schema | None if unknown, problems such as a field that does not exist)
    schema: Callable[..., Any] | None = field(default=None, compare=False)
    # No Spark, on an Airflow worker or at parse time:
    #   assets(options) -> URIs of the external data it reads or writes (Airflow lineage)
    #   save_mode(run_id, vertex) -> what was done, or None when it must wait for the data
    #       (sinks: schema/data save modes, once per run; the pipeline skips them afterwards)
    #   jars(options, env) -> jars Spark needs on its classpath for it (a JDBC driver)
    assets: Callable[..., list[str]] | None = field(default=None, compare=False)
    jars: Callable[..., list[str]] | None = field(default=None, compare=False)
    save_mode: Callable[..., list[str] | None] | None = field(default=None, compare=False)
    read: Callable[..., Any] | None = field(default=None, compare=False)
    apply: Callable[..., Any] | None = field(default=None, compare=False)
    prepare: Callable[..., Any] | None = field(default=None, compare=False)
    commit: Callable[..., Any] | None = field(default=None, compare=False)
    abort: Callable[..., Any] | None = field(default=None, compare=False)
    # STREAMING jobs (runtime/streaming.py; docs/streaming.md), all optional:
    #   read_stream(ctx, vertex) -> {table id: streaming DataFrame}       (sources that can stream)
    #   finish_stream(ctx, vertex, written: {table id: rows}) -> None     (sinks: checks at the end of a run)
    #   retire(ctx, vertex, info) -> None    (sinks: micro-batch ctx.batch_id committed (info: its prepare
    #       result); the commit records of the stream's earlier micro-batches are no longer needed)
    # Sinks write micro-batches with prepare/commit/abort, given a ctx whose run_id names the batch.
    read_stream: Callable[..., Any] | None = field(default=None, compare=False)
    finish_stream: Callable[..., Any] | None = field(default=None, compare=False)
    retire: Callable[..., Any] | None = field(default=None, compare=False)
    # emits_changes(vertex, inputs_change: bool) -> whether rows other than INSERT (UPDATE_BEFORE,
    #   UPDATE_AFTER, DELETE) can come out of it. Unset: a source may emit them, a transform passes
    #   on what its inputs carry. Sinks that cannot store deletes count such rows only where they can arrive.
    emits_changes: Callable[[Any, bool], bool] | None = field(default=None, compare=False)

    def can_run(self, kind: str) -> bool:
        """Whether this package can execute the plugin as a ``kind`` (source, transform, sink)."""
        hook = {SOURCE: self.read, TRANSFORM: self.apply, SINK: self.prepare}.get(kind)
        return kind in self.kinds and hook is not None

    def can_stream(self, kind: str) -> bool:
        """Whether this package can execute the plugin as a ``kind`` in a STREAMING job."""
        return self.can_run(kind) and (kind != SOURCE or self.read_stream is not None)

    def may_emit_changes(self, vertex: Any, inputs_change: bool) -> bool:
        """Whether rows other than INSERT can come out of ``vertex`` (see ``emits_changes``)."""
        if self.emits_changes is not None:
            return bool(self.emits_changes(vertex, inputs_change))
        return inputs_change or getattr(vertex, "kind", None) == SOURCE

    def problems(self, plugin: PluginConfig, job: JobConfig) -> list[Problem]:
        found = [job.problem(f"the option '{key}' is required", plugin, key=None,
                             hint=f"set {key} = ... in the {plugin.name} block")
                 for key in self.required if not plugin.has(key)]
        if self.check is not None:
            found.extend(self.check(plugin, job))
        return found


def exactly_one_of(plugin: PluginConfig, job: JobConfig, *groups: tuple[str, ...]) -> list[Problem]:
    """Problems unless exactly one of the option groups is set (a group lists fallback keys)."""
    present = [group[0] for group in groups if any(plugin.has(key) for key in group)]
    if len(present) == 1:
        return []
    names = ", ".join(group[0] for group in groups)
    what = "none of them is set" if not present else f"{' and '.join(present)} are all set"
    return [job.problem(f"exactly one of {names} must be set; {what}", plugin,
                        key=present[-1] if present else None, hint=f"keep one of {names}")]


def insert_only(vertex: Any, inputs_change: bool) -> bool:
    """``emits_changes`` of a plugin whose rows are all INSERT (a file or table reader, RowKindExtractor)."""
    return False
