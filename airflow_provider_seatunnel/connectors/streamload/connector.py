"""What the Stream Load family's connectors (Doris, StarRocks, SelectDB Cloud) share as connectors: the
compile-time check beyond the option spec and the storage verbs of the two-phase commit.

A member names its option parser (:attr:`StreamLoadSink.parse_options`: its ``options.parse``) and keeps its
protocol (the ``FAMILY`` of its ``sink`` module, imported when a verb first runs, not at DAG-parse time) and
its connection mapping. A member whose staged data expires on its own overrides :meth:`discard` and
:meth:`discard_older`.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any, ClassVar

from ...spi import RunContext, Vertex
from ...spi.options import JobConfig, OptionError, PluginConfig, Problem
from ...spi.optionspec import OptionSpec
from ...spi.twophase import CommitId, Published, Staged
from .endpoint import Endpoint


class StreamLoadSink:
    """The check and storage verbs of a Stream Load family sink (a mixin of the member's connector class)."""

    connection_option: str
    option_spec: ClassVar[OptionSpec | None]
    #: the member's ``options.parse(options, need_endpoint=True)``
    parse_options: ClassVar[Callable[..., Any]]

    def _family(self) -> Any:
        return importlib.import_module(f"{type(self).__module__}.sink").FAMILY

    # compile time ------------------------------------------------------------------------------

    def check(self, plugin: PluginConfig, job: JobConfig) -> list[Problem]:
        """The member's rules beyond the spec (addresses as host:port, the table's name, the load format),
        located at their keys; a connection option naming nothing is an error."""
        if self.option_spec is None or self.option_spec.valid(plugin.options, plugin.section) is None:
            return []
        try:
            self.parse_options(plugin.options, need_endpoint=False)
        except OptionError as e:
            return [job.problem(e.message, plugin, key=e.key, hint=e.hint)]
        conn = plugin.get(self.connection_option)
        if conn is not None and not str(conn).strip():
            return [job.problem(f"{self.connection_option} must name an Airflow connection", plugin,
                                key=self.connection_option)]
        return []

    # sink: the storage verbs -------------------------------------------------------------------

    def options_of(self, vertex: Vertex) -> Any:
        """The block's options, checked again (a hand-written plan skips the compiler)."""
        try:
            return self.parse_options(vertex.config)
        except OptionError as e:
            raise e.at_run_time() from None

    def _endpoint(self, vertex: Vertex) -> Endpoint:
        endpoint = self.options_of(vertex).endpoint
        assert endpoint is not None
        return endpoint

    def commit_log(self, ctx: RunContext, vertex: Vertex) -> Any:
        from .sink import TableLog

        return TableLog(self._family(), self._endpoint(vertex), self.options_of(vertex))

    def stage(self, ctx: RunContext, vertex: Vertex, commit: CommitId, token: int, df: Any) -> Staged:
        from .sink import stage

        return stage(ctx, vertex, self._family(), self.options_of(vertex), commit, token, df)

    def publish(self, ctx: RunContext, vertex: Vertex, staged: Staged) -> Published:
        from .sink import publish

        return publish(ctx, vertex, self._family(), self._endpoint(vertex), staged)

    def discard(self, ctx: RunContext, vertex: Vertex, staged: Staged) -> None:
        from .sink import discard

        discard(self._family(), self._endpoint(vertex), staged)

    def discard_older(self, ctx: RunContext, vertex: Vertex, commit: CommitId, token: int) -> int:
        from .sink import discard_older, target_of

        database, _ = target_of(self.options_of(vertex), commit.table)
        return discard_older(self._family(), self._endpoint(vertex), database, commit, token)
