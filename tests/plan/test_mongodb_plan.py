"""MongoDB and MongoDB-CDC at compile time (no server, no Spark): SeaTunnel's options and rules as
located problems, the source's schema and parallelism, the uri kept out of plans, the connection's uri,
and MongoDB-CDC planned but not runnable with its reason."""

from __future__ import annotations

import json

import pytest

from airflow_provider_seatunnel.connectors.mongodb import CONNECTOR as MONGO
from airflow_provider_seatunnel.connectors.mongodb import uri_of
from airflow_provider_seatunnel.spi import ConnectionInfo
from airflow_provider_seatunnel.spi.registry import get_connector

URI = "mongodb://stu:s3cret-pw@127.0.0.1:27017/?authSource=admin"


def job(source: str = "", sink: str = "", parallelism: int = 2) -> str:
    source = source or (f'MongoDB {{ plugin_output = "m", uri = "{URI}", database = "db", collection = "src", '
                        'parallelism = 3, schema = { fields { _id = string, age = int, tags = "array<string>" } } }')
    sink = sink or f'MongoDB {{ plugin_input = "m", uri = "{URI}", database = "db", collection = "dst", parallelism = 2 }}'
    return f'env {{ job.mode = "BATCH", parallelism = {parallelism} }}\nsource {{ {source} }}\nsink {{ {sink} }}\n'


def test_a_job_plans_with_the_schema_parallelism_and_no_uri(plan_of):
    plan = plan_of(job())
    source, sink = plan.pipelines[0].vertices
    assert (source.plugin, source.parallelism, sink.parallelism) == ("MongoDB", 3, 2)
    assert source.schema == {"_id": "string", "age": "int", "tags": "array<string>"}
    assert "s3cret-pw" not in json.dumps(plan.to_dict())
    assert MONGO.capabilities.exactly_once and MONGO.capabilities.deletes and MONGO.can_run("source")
    assert "uri" in MONGO.secrets and set(MONGO.identity) >= {"database", "collection"}
    assert not MONGO.has_committer({}) and MONGO.has_committer({"transaction": True})
    assert MONGO.assets({"uri": URI, "database": "db", "collection": "c"}) == ["mongodb://127.0.0.1:27017/db.c"]


@pytest.mark.parametrize(("source", "key", "text"), [
    ('database = "db", collection = "c", schema = { fields { a = int } }', "uri", "'uri' is required"),
    (f'uri = "{URI}", collection = "c"', "database", "'database' is required"),
    ('uri = "http://x", database = "db", collection = "c"', "uri", "mongodb://"),
    (f'uri = "{URI}", database = "db", collection = "c", match.query = "{{not json"', "match.query", "is not JSON"),
    (f'uri = "{URI}", database = "db", collection = "c", match.projection = "[1]"', "match.projection",
     "JSON document"),
    (f'uri = "{URI}", database = "db", collection = "c", flat.sync-string = true, '
     'schema = { fields { a = string, b = string } }', "flat.sync-string", "exactly one string field"),
    (f'uri = "{URI}", database = "db", collection = "c", schema = {{ fields {{ a = tinyint }} }}', "schema",
     "cannot read type tinyint"),
    (f'uri = "{URI}", database = "db", collection = "c", fetch.size = 0', "fetch.size", "0"),
])
def test_source_rules_are_located_errors(config_error, source, key, text):
    err = config_error(job(source=f'MongoDB {{ plugin_output = "m", {source} }}'))
    problem = err.problems[0]
    assert (problem.plugin, problem.key) == ("source[0] MongoDB", key) and text in str(err)
    assert "s3cret-pw" not in str(err)


def test_relaxed_json_filters_plan_as_seatunnels_driver_reads_them(plan_of):
    from airflow_provider_seatunnel.connectors.mongodb.options import extended_json

    plan_of(job(source=f'MongoDB {{ plugin_output = "m", uri = "{URI}", database = "db", collection = "c", '
                       'matchQuery = "{c_int: 2}", match.projection = "{ c_bigint:0 }", '
                       'schema = { fields { c_int = int } } }'))
    assert extended_json("k", "{'a': 'x\"y', $or: [{b: null}], c: -1.5e3}") == \
        {"a": 'x"y', "$or": [{"b": None}], "c": -1500.0}


def test_sink_rules_and_warnings(config_error, plan_of):
    err = config_error(job(sink=f'MongoDB {{ plugin_input = "m", uri = "{URI}", database = "db", collection = "d", '
                                'upsert-enable = true }'))
    assert err.problems[0].key == "primary-key" and "upsert-enable needs primary-key" in str(err)
    plan = plan_of(job(sink=f'MongoDB {{ plugin_input = "m", uri = "{URI}", database = "db", collection = "d", '
                            'upsert-key = ["age"], upsert-enable = true, transaction = true }'))  # the fallback key
    assert plan.pipelines[0].vertices[1].plugin == "MongoDB"
    warned = plan_of(job(source=f'MongoDB {{ plugin_output = "m", uri = "{URI}", database = "db", '
                                'collection = "c", partition.split-size = 1024 }'))
    messages = [w["message"] for w in warned.warnings]
    assert any("schema is not set" in m for m in messages) and any("split-size is ignored" in m for m in messages)
    assert warned.pipelines[0].vertices[0].schema == {"content": "string"}


def test_mongo_conn_id_gives_the_uri_and_database():
    conn = ConnectionInfo("m", "mongo", host="db.example", port=27018, schema="shop", login="ann", password="p@ss:w",
                          extra={"ssl": True})
    assert MONGO.connection_options(conn) == {
        "uri": "mongodb://ann:p%40ss%3Aw@db.example:27018/?ssl=true&authSource=shop", "database": "shop"}
    srv = ConnectionInfo("m", "mongo", host="cluster.example", port=27017, extra={"srv": True})
    assert uri_of(srv) == "mongodb+srv://cluster.example/"
    assert MONGO.takes_default_connection({"database": "d"}) and not MONGO.takes_default_connection({"uri": URI})


def test_mongodb_cdc_plans_with_its_options_but_cannot_run(plan_of, config_error):
    cdc = get_connector("mongodb-cdc")
    assert cdc is not None and cdc.name == "MongoDB-CDC" and not cdc.can_run("source")
    src = ('MongoDB-CDC { plugin_output = "m", hosts = "127.0.0.1:27017", database = ["inventory"], '
           'collection = ["inventory.products"], username = "u", password = "cdc-secret", schema = { fields { '
           'a = int } } }')
    plan = plan_of(job(source=src))
    messages = [w["message"] for w in plan.warnings]
    assert any("change streams" in m and "FerretDB" in m for m in messages)
    assert any("cannot run" in m for m in messages) and "cdc-secret" not in json.dumps(plan.to_dict())
    err = config_error(job(source=src.replace('username = "u"', 'startup.mode = "timestamp"')))
    assert err.problems[0].key == "startup.timestamp"
    err = config_error(job(source=src.replace('username = "u"', 'stop.mode = "latest"')))
    assert err.problems[0].key == "stop.mode"
