"""InMemory: SeaTunnel's test sink, which keeps nothing, with its fault options.

SeaTunnel's e2e and engine tests write into ``InMemory`` to exercise transforms and the engine: its
writer drops every row, its committer records nothing. Here it runs the same way: each table's rows
are computed in one pass at the sink's parallelism (Spark's ``noop`` writer: the counters count them)
and stored nowhere; the commit does nothing. A block that stands as a *source* names SeaTunnel's
InMemory catalog of its unit tests, not a connector: it plans, and validate says why it cannot run.

The options exist to inject faults into SeaTunnel's engine; each one raises here where SeaTunnel's
raises, with its message, so the engine's retries and restores meet them as SeaTunnel's would:

* ``throw_exception``: every prepare of a commit fails with ``write failed`` (transient; SeaTunnel
  waits 4 s first, to let its checkpoint coordinator see a slow writer: not here);
* ``throw_out_of_memory``: writing the first row fails as ``java.lang.OutOfMemoryError``
  (:class:`~..spi.errors.OutOfMemory`: not retried);
* ``throw_runtime_exception_list``: writing the first row fails with the list's message of this
  attempt (the first attempt the first message, a retry the next; past the list's end with the
  ``Index n out of bounds`` of SeaTunnel's counter), transient, as SeaTunnel's restores meet them;
* ``throw_exception_of_committer``: the commit fails with ``commit failed`` (transient);
* ``checkpoint_sleep``: SeaTunnel pauses 5 s per checkpoint to provoke its checkpoint timeout; here it
  is accepted and does nothing (no checkpoint coordinator to provoke);
* ``assert_options_key``/``assert_options_value``: after the table placeholders of each table are
  replaced (``${table_name}``, ``${primary_key}``... as every sink replaces them), the two must be
  equal, else the sink fails with SeaTunnel's ``assert key and value not match!`` (deterministic).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..spi import SINK, SOURCE, Capabilities, Connector, Dataset, RunContext, TwoPhaseSink, Vertex
from ..spi.errors import OutOfMemory, PipelineError, RuntimeConfigError
from ..spi.options import JobConfig, PluginConfig, Problem
from ..spi.optionspec import Option, OptionSpec
from ..spi.rows import data_columns
from ..spi.schema import table_keys
from .files.placeholders import TABLE_PLACEHOLDER, table_config

SPEC = OptionSpec((
    Option("throw_exception", "bool", False, "Fault: every commit's prepare fails with `write failed` (transient).",
           sections=(SINK,)),
    Option("throw_out_of_memory", "bool", False,
           "Fault: writing the first row fails as `java.lang.OutOfMemoryError` (not retried).", sections=(SINK,)),
    Option("checkpoint_sleep", "bool", False, "SeaTunnel pauses 5 s per checkpoint; accepted here and does nothing.",
           sections=(SINK,)),
    Option("throw_exception_of_committer", "bool", False, "Fault: the commit fails with `commit failed` (transient).",
           sections=(SINK,)),
    Option("assert_options_key", description="With `assert_options_value`: both must be equal once each table's "
           "placeholders are replaced, else the sink fails.", sections=(SINK,)),
    Option("assert_options_value", description="See `assert_options_key`.", sections=(SINK,)),
    Option("throw_runtime_exception_list", "list", description="Fault: writing the first row of attempt n fails "
           "with the list's n-th message (transient).", sections=(SINK,)),
))

#: why a source block cannot run
NO_SOURCE = ("SeaTunnel has no InMemory source: an InMemory block in source names the in-memory catalog of "
             "SeaTunnel's own unit tests, which no job can read")


def assertion_failure(options: Mapping[str, Any]) -> str | None:
    """SeaTunnel's message when ``assert_options_key`` (set) differs from ``assert_options_value``."""
    key, value = options.get("assert_options_key"), options.get("assert_options_value")
    if key is None or key == value:
        return None
    return f"assert key and value not match! key = {key}, value = {'null' if value is None else value}"


class InMemory(Connector, TwoPhaseSink):
    name = "InMemory"
    capabilities = Capabilities(sections=frozenset({SOURCE, SINK}), committer=True, connect=True)
    option_spec = SPEC
    description = "SeaTunnel's test sink: keeps nothing; options inject faults."

    def check(self, plugin: PluginConfig, job: JobConfig) -> list[Problem]:
        """A source block cannot run (:data:`NO_SOURCE`); a sink block's assertion without placeholders
        is checked now."""
        if plugin.section == SOURCE:
            return [job.cannot_run(NO_SOURCE, plugin, hint="read rows with FakeSource")]
        o = SPEC.valid(plugin.options, SINK)
        if o is None:
            return []
        failure = assertion_failure(o)
        templated = any(TABLE_PLACEHOLDER.search(str(o[k])) for k in ("assert_options_key", "assert_options_value"))
        if failure is None or templated:  # placeholders: checked per table when the sink runs
            return []
        return [job.problem(failure, plugin, key="assert_options_key",
                            hint="make assert_options_value equal to assert_options_key")]

    def problems(self, plugin: PluginConfig, job: JobConfig) -> list[Problem]:
        """A source block is only told why it cannot run (its options are the catalog's, not checked)."""
        return self.check(plugin, job) if plugin.section == SOURCE else super().problems(plugin, job)

    def prepare(self, ctx: RunContext, vertex: Vertex, data: Dataset) -> Any:
        """Every table's rows computed once and dropped, with the faults the options ask for."""
        o = SPEC.run_time(vertex.config, SINK)
        for table, df in data.items():
            failure = assertion_failure(table_config(o, table, data_columns(df), table_keys(vertex, table, df)))
            if failure is not None:
                raise RuntimeConfigError(failure)
            row_fault = _row_fault(o, ctx.attempt)
            if row_fault is not None:
                if df.limit(1).count():  # SeaTunnel's writer raises on the first row it is handed
                    raise row_fault
                continue
            df.write.format("noop").mode("overwrite").save()
        if o["throw_exception"]:
            raise PipelineError("write failed")
        return None

    def commit(self, ctx: RunContext, vertex: Vertex, info: Any) -> None:
        """Nothing to publish; ``throw_exception_of_committer`` fails here."""
        if SPEC.run_time(vertex.config, SINK)["throw_exception_of_committer"]:
            raise PipelineError("commit failed")

    def abort(self, ctx: RunContext, vertex: Vertex, info: Any) -> None:
        """Nothing was staged."""


def _row_fault(o: Mapping[str, Any], attempt: int) -> PipelineError | None:
    """The error writing a first row raises under these options in this attempt (1, 2...), None: none."""
    if o["throw_out_of_memory"]:
        return OutOfMemory("java.lang.OutOfMemoryError (InMemory's throw_out_of_memory fault)")
    messages = o["throw_runtime_exception_list"]
    if messages is None:
        return None
    index = max(attempt, 1) - 1
    if index >= len(messages):
        return PipelineError(f"Index {index} out of bounds for length {len(messages)}")
    return PipelineError(str(messages[index]))


CONNECTOR = InMemory()
