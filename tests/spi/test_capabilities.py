"""Capabilities as data: one frozen value per connector, derived from what it implements and its flags
(or declared), read by the planner and the runtime instead of ``isinstance`` tests."""

from __future__ import annotations

import dataclasses

import pytest

from airflow_provider_seatunnel.config.errors import ConfigError
from airflow_provider_seatunnel.plan.compiler import compile_text
from airflow_provider_seatunnel.spi import SINK, SOURCE, TRANSFORM, Capabilities, Connector, KnownPlugin, get_connector


class _Reader(Connector):
    name = "CapsReader"
    kinds = frozenset({SOURCE, SINK})
    exclusive_stream = True
    connect = True

    def read(self, ctx, vertex):
        return {}

    def read_stream(self, ctx, vertex):
        return {}


class _Declared(_Reader):
    name = "CapsDeclared"
    capabilities = Capabilities(sections=frozenset({TRANSFORM}), runs_as=frozenset({TRANSFORM}), deletes=True)


def test_derived_from_the_behaviour_it_implements_and_its_flags():
    caps = _Reader().capabilities
    assert caps.sections == {SOURCE, SINK} and caps.runs_as == {SOURCE}  # declares SINK, writes nothing
    assert caps.can_run(SOURCE) and caps.can_stream(SOURCE) and not caps.can_run(SINK)
    assert caps.exclusive_stream and caps.connect and not caps.connect_stream
    assert not (caps.deletes or caps.exactly_once or caps.committer or caps.reads_tables_by_name)
    with pytest.raises(dataclasses.FrozenInstanceError):
        caps.deletes = True  # type: ignore[misc]


def test_a_declared_value_wins_over_the_flags():
    declared = _Declared()
    assert declared.capabilities.sections == {TRANSFORM} and declared.capabilities.deletes
    assert declared.can_run(TRANSFORM) and not declared.can_run(SOURCE)  # although it implements read


def test_a_known_plugin_plans_in_its_sections_and_runs_nowhere():
    caps = KnownPlugin("Elasticsearch", frozenset({SINK})).capabilities
    assert caps.sections == {SINK} and not caps.runs_as and not caps.can_run(SINK)


def test_the_builtin_connectors_say_what_they_do():
    redis, jdbc, sql, cdc = (get_connector(n) for n in ("redis", "JDBC", "sql", "postgres-cdc"))
    assert redis.capabilities.exactly_once and jdbc.capabilities.exactly_once and jdbc.capabilities.deletes
    assert sql.capabilities.reads_tables_by_name and sql.capabilities.can_run(TRANSFORM)
    assert cdc.capabilities.exclusive_stream and cdc.capabilities.can_stream(SOURCE)
    assert not get_connector("console").capabilities.exactly_once


def test_the_planner_reads_the_sections_from_the_value(monkeypatch):
    job = """
env { job.mode = "BATCH" }
source { FakeSource { plugin_output = "f", row.num = 1, schema = { fields { id = bigint } } } }
sink { Console { plugin_input = "f" } }
"""
    assert compile_text(None, job).pipelines
    console = get_connector("Console")
    monkeypatch.setitem(console.__dict__, "_capabilities",
                        dataclasses.replace(console.capabilities, sections=frozenset({SOURCE})))
    with pytest.raises(ConfigError, match="'Console' is not a sink plugin"):
        compile_text(None, job)
