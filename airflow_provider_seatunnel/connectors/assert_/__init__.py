"""Assert sink: checks row counts, field values and the table's catalog against rules.

The rules are SeaTunnel's ``Assert`` options (:mod:`.rules`). Without ``tables_configs`` they
hold for every input table. A BATCH run checks them all on the data it receives, type and
catalog rules from the schema first, then one aggregate pass per table (:mod:`.batch`); a
STREAMING run checks the field and catalog rules on every micro-batch and the row rules and
``table-names`` over the whole run (:mod:`.streaming`). ``equals_to`` compares natively, after
converting the expected value to the field's type (:mod:`.values`, :mod:`.expressions`): arrays
element by element, maps by size and each expected key's value (in any order, nested maps
included), rows field by field, decimals with their scale. A broken rule fails the pipeline with
every broken rule named; nothing is written, so there is nothing to commit.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any

from ...spi import SINK, Capabilities, Connector, Dataset, RunContext, SchemaInference, Sink, StreamFinish, Vertex
from ...spi.errors import AssertionFailed, RuntimeConfigError
from ...spi.options import JobConfig, PluginConfig, Problem
from ...spi.schema import Schema
from .batch import data_failures, message, missing_fields, schema_failures
from .rules import SPEC, Rules, read_rules, rule_problems, schema_problems
from .streaming import stream_failures

__all__ = ["CONNECTOR", "Assert"]

log = logging.getLogger("seatunnel.assert")


class Assert(Connector, SchemaInference, Sink, StreamFinish):
    name = "Assert"
    capabilities = Capabilities(sections=frozenset({SINK}), connect=True)
    option_spec = SPEC
    description = "Fails the pipeline when a row or field rule does not hold."

    check = staticmethod(rule_problems)

    def schema(self, plugin: PluginConfig, job: JobConfig,
               inputs: Sequence[Schema | None]) -> tuple[Schema | None, list[Problem]]:
        """No output; the rules' warnings and the field rules the input schema cannot satisfy."""
        return None, schema_problems(plugin, job, list(inputs))

    def prepare(self, ctx: RunContext, vertex: Vertex, data: Dataset) -> Any:
        """Check every rule on ``data`` (as the engine hands it: ``vertex.parallelism`` partitions);
        raise :class:`AssertionFailed` naming each broken one. A micro-batch holds part of a table:
        its row counts and set of tables are checked over the whole run by :meth:`finish_stream`."""
        rules = _rules(vertex)
        missing = missing_fields(rules, data)
        if missing:
            raise RuntimeConfigError("; ".join(missing))
        streaming = ctx.batch_id is not None
        failures = schema_failures(ctx, vertex, rules, data, streaming)
        if failures:
            raise AssertionFailed(message(failures))
        counts, failures = data_failures(rules, data, streaming)
        if failures:
            raise AssertionFailed(message(failures))
        for table, n in counts.items():
            log.info("Assert: every rule held on table %s (%d rows)", table, n)
        return None

    def finish_stream(self, ctx: RunContext, vertex: Vertex, written: Mapping[str, int]) -> None:
        """At the end of a STREAMING run: the row rules, ``table-names`` and the tables of
        ``tables_configs`` against the rows the run's micro-batches carried (``written``: table -> rows)."""
        rules, _ = read_rules(vertex.config)
        if rules is None:
            return
        failures = stream_failures(rules, written)
        if failures:
            raise AssertionFailed(message(failures))
        for table, count in written.items():
            log.info("Assert: the run's rules held on table %s (%d rows over its micro-batches)", table, count)


def _rules(vertex: Vertex) -> Rules:
    """The rules of the block; a RuntimeConfigError naming every error in them."""
    rules, issues = read_rules(vertex.config)
    errors = [f"{i.key}: {i.message}" for i in issues if i.severity == "error"]
    if errors or rules is None:
        raise RuntimeConfigError("; ".join(errors) or "no rules")
    return rules


CONNECTOR = Assert()
