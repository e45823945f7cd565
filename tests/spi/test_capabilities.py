"""Capabilities as data: one frozen value per connector class, its facts declared by the author and its
behaviour fields completed from what the class implements, read by the planner and the runtime instead
of ``isinstance`` tests."""

from __future__ import annotations

import dataclasses

import pytest

from airflow_provider_seatunnel.config.errors import ConfigError
from airflow_provider_seatunnel.plan.compiler import compile_text
from airflow_provider_seatunnel.plan.model import PlanVertex
from airflow_provider_seatunnel.spi import SINK, SOURCE, TRANSFORM, Capabilities, Connector, KnownPlugin, get_connector


class _Reader(Connector):
    name = "CapsReader"
    capabilities = Capabilities(sections=frozenset({SOURCE, SINK}), exclusive_stream=True, connect=True)

    def read(self, ctx, vertex):
        return {}

    def read_stream(self, ctx, vertex):
        return {}


class _Overclaims(Connector):
    """Declares behaviour it lacks: a declaration cannot make a class run, stream or commit."""

    name = "CapsOverclaims"
    capabilities = Capabilities(sections=frozenset({SINK}), runs_as=frozenset({SINK}), streams=True,
                                exactly_once=True, reads_tables_by_name=True)


class _Subclass(_Reader):
    """Keeps its base's declaration; its behaviour is its own."""

    name = "CapsSubclass"

    def prepare(self, ctx, vertex, data):
        return None


def test_declared_facts_and_behaviour_from_what_the_class_implements():
    caps = _Reader().capabilities
    assert caps.sections == {SOURCE, SINK} and caps.runs_as == {SOURCE}  # declares SINK, writes nothing
    assert caps.can_run(SOURCE) and caps.can_stream(SOURCE) and not caps.can_run(SINK)
    assert caps.exclusive_stream and caps.connect and not caps.connect_stream
    assert not (caps.deletes or caps.exactly_once or caps.committer or caps.reads_tables_by_name)
    with pytest.raises(dataclasses.FrozenInstanceError):
        caps.deletes = True  # type: ignore[misc]


def test_a_declaration_cannot_claim_behaviour_the_class_lacks():
    caps = _Overclaims.capabilities
    assert caps.sections == {SINK} and not caps.runs_as and not caps.can_run(SINK)
    assert not (caps.streams or caps.exactly_once or caps.reads_tables_by_name)


def test_a_subclass_keeps_the_declared_facts_and_gets_its_own_behaviour():
    caps = _Subclass.capabilities
    assert caps.sections == {SOURCE, SINK} and caps.exclusive_stream and caps.connect
    assert caps.runs_as == {SOURCE, SINK} and _Reader.capabilities.runs_as == {SOURCE}


def test_a_known_plugin_plans_in_its_sections_and_runs_nowhere():
    caps = KnownPlugin("Elasticsearch", frozenset({SINK})).capabilities
    assert caps.sections == {SINK} and not caps.runs_as and not caps.can_run(SINK)


def test_the_builtin_connectors_say_what_they_do():
    redis, jdbc, sql, cdc = (get_connector(n) for n in ("redis", "JDBC", "sql", "postgres-cdc"))
    assert redis.capabilities.exactly_once and jdbc.capabilities.exactly_once and jdbc.capabilities.deletes
    assert sql.capabilities.reads_tables_by_name and sql.capabilities.can_run(TRANSFORM)
    assert cdc.capabilities.exclusive_stream and cdc.capabilities.can_stream(SOURCE)
    assert not get_connector("mysql-cdc").capabilities.exclusive_stream
    assert not get_connector("console").capabilities.exactly_once


class _InsertsOnly(Connector):
    """Declares that its rows are all INSERT, and emits changes by its own rule too: the declaration decides."""

    name = "CapsInsertsOnly"
    capabilities = Capabilities(sections=frozenset({SOURCE, TRANSFORM}), inserts_only=True)

    def emits_changes(self, vertex, inputs_change):
        return True


def test_inserts_only_is_declared_and_decides_whether_changes_can_come_out():
    vertex = PlanVertex(id="source-0", ref="source[0]", kind=SOURCE, plugin="x", parallelism=1, config={})
    declared = _InsertsOnly()
    assert declared.capabilities.inserts_only
    assert not declared.may_emit_changes(vertex, True)
    assert KnownPlugin("Elsewhere", frozenset({SOURCE})).may_emit_changes(vertex, False)  # undeclared: it may
    readers = {name for name in ("LocalFile", "S3File", "SftpFile", "HdfsFile", "Jdbc", "Hive", "Http", "Redis",
                                 "RowKindExtractor") if get_connector(name).capabilities.inserts_only}
    assert len(readers) == 9
    assert not any(get_connector(name).capabilities.inserts_only
                   for name in ("FakeSource", "Kafka", "Delta", "Iceberg", "Paimon", "postgres-cdc", "Sql"))


def test_http_is_a_source_and_a_sink():
    """The Http connector runs as a source (batch and stream) and as a sink (tests/runtime/test_http_sink.py);
    the registry's placeholder of a plugin known elsewhere never shadows a section a connector runs."""
    http = get_connector("Http")
    assert http.capabilities.sections == {SOURCE, SINK} and http.capabilities.runs_as == {SOURCE, SINK}
    assert http.can_stream(SOURCE) and get_connector("http", SOURCE) is http
    sink = get_connector("HTTP", SINK)
    assert sink is http and not isinstance(sink, KnownPlugin) and sink.can_run(SINK)
    assert get_connector("Console", SOURCE) is get_connector("Console")  # nothing known elsewhere: as it is


def test_the_committer_is_declared_or_decided_per_block():
    local, jdbc, redis = (get_connector(n) for n in ("LocalFile", "Jdbc", "Redis"))
    assert local.has_committer({}) and not redis.has_committer({})
    assert jdbc.has_committer({"is_exactly_once": "true"}) and not jdbc.has_committer({})


def test_the_planner_reads_the_sections_from_the_value(monkeypatch):
    job = """
env { job.mode = "BATCH" }
source { FakeSource { plugin_output = "f", row.num = 1, schema = { fields { id = bigint } } } }
sink { Console { plugin_input = "f" } }
"""
    assert compile_text(None, job).pipelines
    console = get_connector("Console")
    monkeypatch.setattr(console, "capabilities", dataclasses.replace(console.capabilities, sections=frozenset({SOURCE})))
    with pytest.raises(ConfigError, match="'Console' is not a sink plugin"):
        compile_text(None, job)


def test_a_class_setting_a_former_flag_is_refused_by_name():
    """A connector written against the flags would otherwise plan nowhere without a word."""
    with pytest.raises(TypeError, match=r"kinds -> sections, stores_deletes -> deletes"):
        type("OldStyle", (Connector,), {"name": "OldStyle", "kinds": frozenset({SINK}), "stores_deletes": True})
