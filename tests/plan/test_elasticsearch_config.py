"""Elasticsearch and Easysearch at compile time (no server, no Spark): plans with their schemas and parallelism,
located errors in SeaTunnel's rules, Easysearch's smaller option set, what plans but cannot run, secrets kept
out of plans, and credentials from an Airflow connection."""

from __future__ import annotations

import json

from airflow_provider_seatunnel.connectors.elasticsearch import CONNECTOR as ES
from airflow_provider_seatunnel.connectors.elasticsearch import EASYSEARCH
from airflow_provider_seatunnel.connectors.elasticsearch.mapping import fields_of_mapping, java_text, read_schema
from airflow_provider_seatunnel.spi import ConnectionInfo
from airflow_provider_seatunnel.spi.registry import get_connector

HOSTS = 'hosts = ["http://es1:9200", "https://es2:9243"]'


def test_a_job_plans_with_the_schema_and_the_plans_parallelism(plan_of):
    plan = plan_of(f"""
        env {{ job.mode = "BATCH", parallelism = 2 }}
        source {{ Elasticsearch {{ plugin_output = "es", {HOSTS}, index = "people", username = "u",
                                   password = "es-s3cret", parallelism = 4,
                                   schema = {{ fields {{ id = bigint, name = string }} }},
                                   query = {{ range = {{ id = {{ gte = 5 }} }} }} }} }}
        sink {{ Easysearch {{ plugin_input = "es", {HOSTS}, index = "copy", primary_keys = ["id"] }} }}
    """)
    assert not plan.warnings, plan.warnings
    vertices = {v.ref: v for p in plan.pipelines for v in p.vertices}
    assert vertices["source[0]"].schema == {"id": "bigint", "name": "string"}
    assert vertices["source[0]"].parallelism == 4 and vertices["sink[0]"].parallelism == 4  # chained: its input's
    assert "es-s3cret" not in json.dumps(plan.to_dict())
    assert get_connector("ELASTICSEARCH") is ES and get_connector("easysearch") is EASYSEARCH
    assert ES.capabilities.exactly_once and ES.can_run("source") and EASYSEARCH.can_run("sink")


def test_seatunnels_rules_are_located_errors(config_error):
    err = config_error('source { Elasticsearch { plugin_output = "a", index = "x" } }\nsink { Console {} }')
    assert err.problems[0].key == "hosts" and "required" in err.problems[0].message
    err = config_error(f'source {{ Elasticsearch {{ plugin_output = "a", {HOSTS} }} }}\nsink {{ Console {{}} }}')
    assert err.problems[0].key == "index" and "index_list" in err.problems[0].message
    err = config_error(f"""source {{ Elasticsearch {{ plugin_output = "a", {HOSTS}, index = "x", source = ["a"],
                                  schema = {{ fields {{ a = int }} }} }} }}
                          sink {{ Console {{}} }}""")
    assert err.problems[0].key == "source" and "exclusive" in err.problems[0].message
    err = config_error(f"""source {{ Elasticsearch {{ plugin_output = "a", {HOSTS}, index = "x",
                                  scroll_time = "soon" }} }}
                          sink {{ Console {{}} }}""")
    assert (err.problems[0].key, err.problems[0].line) == ("scroll_time", 2)
    err = config_error(f"""source {{ FakeSource {{ plugin_output = "a", schema = {{ fields {{ a = int }} }} }} }}
                          sink {{ Elasticsearch {{ {HOSTS}, index = "x", data_save_mode = "TRUNCATE" }} }}""")
    assert err.problems[0].key == "data_save_mode"
    err = config_error('source { FakeSource { plugin_output = "a", schema = { fields { a = int } } } }\n'
                       'sink { Elasticsearch { hosts = ["ftp://x/y/z"], index = "x" } }')
    assert err.problems[0].key == "hosts"


def test_easysearch_has_no_save_modes_and_what_cannot_run_plans_with_a_warning(plan_of):
    plan = plan_of(f"""
        source {{ FakeSource {{ plugin_output = "a", schema = {{ fields {{ a = int, kind = string }} }} }} }}
        sink {{
          Easysearch {{ plugin_input = "a", {HOSTS}, index = "x", data_save_mode = "DROP_DATA" }}
          Elasticsearch {{ plugin_input = "a", {HOSTS}, index = "by_${{kind}}", index_type = "_doc" }}
          Elasticsearch {{ plugin_input = "a", {HOSTS}, index = "y", tls_keystore_path = "/k.jks" }}
        }}
    """)
    found = {(w["plugin"].split()[0], w.get("key"), w.get("code")) for w in plan.warnings}
    assert ("sink[0]", "data_save_mode", "unknown-option") in found
    assert ("sink[1]", "index", "not-runnable") in found and ("sink[1]", "index_type", None) in {
        (a, b, c if c == "not-runnable" else None) for a, b, c in found}
    assert ("sink[2]", "tls_keystore_path", "not-runnable") in found


def test_hosts_and_credentials_come_from_an_airflow_connection(plan_of, monkeypatch):
    from airflow_provider_seatunnel.hooks.seatunnel import with_connections

    monkeypatch.setenv("AIRFLOW_CONN_SEARCH", json.dumps({
        "conn_type": "elasticsearch", "host": "es.internal", "port": 9243, "login": "elastic", "password": "pw-1",
        "extra": {"scheme": "https", "verify_certs": "false"}}))
    plan = plan_of("""
        source { Elasticsearch { plugin_output = "a", elasticsearch_conn_id = "search", index = "x", source = ["a"] } }
        sink { Elasticsearch { plugin_input = "a", elasticsearch_conn_id = "search", index = "y", username = "w" } }
    """)
    assert "pw-1" not in json.dumps(plan.to_dict())
    source, sink = (v.config for v in with_connections(plan).pipelines[0].vertices)
    assert (source["hosts"], source["username"], source["password"]) == (["https://es.internal:9243"], "elastic", "pw-1")
    assert source["tls_verify_certificate"] is False and sink["username"] == "w"  # what the block sets wins
    assert ES.connection_options(ConnectionInfo("c", "elasticsearch", host="h")) == {"hosts": ["http://h"]}


def test_the_mapping_gives_seatunnels_types_and_values_javas_text():
    import datetime as dt

    answer = {"i1": {"mappings": {"properties": {"id": {"type": "long"}, "name": {"type": "text"},
                                                 "at": {"type": "date"}, "n": {"type": "unsigned_long"},
                                                 "geo": {"properties": {"lat": {"type": "double"}}}}}},
              "i2": {"mappings": {"properties": {"id": {"type": "integer"}, "tags": {"type": "keyword"}}}}}
    mapped = fields_of_mapping(answer)
    assert mapped == {"id": "bigint", "name": "string", "at": "timestamp", "n": "decimal(20, 0)",
                      "geo": "map<string, string>", "tags": "string"}
    schema = read_schema(mapped, ["_id", "id", "tags"], {"tags": "array<string>"})
    assert [(f.name, str(f.type)) for f in schema.fields] == [("_id", "string"), ("id", "bigint"),
                                                               ("tags", "array<string>")]
    assert java_text(dt.datetime(2024, 1, 2, 10, 0)) == "2024-01-02T10:00"
    assert java_text(dt.datetime(2024, 1, 2, 10, 0, 5, 120000)) == "2024-01-02T10:00:05.120"
    assert java_text(dt.datetime(2024, 1, 2, 10, 0, 0, 1)) == "2024-01-02T10:00:00.000001"


def test_a_keyed_staging_operation_becomes_seatunnels_bulk_action_with_every_digit():
    """What the copy sends per staged key (pure Python): a merge is SeaTunnel's ``update`` with
    ``doc_as_upsert``, a replace an ``index``, a delete a ``delete`` by id; a DELETE after which the same task
    upserts the key stages a replace. Decimals read back from the staging keep their digits."""
    import decimal

    from airflow_provider_seatunnel.connectors.elasticsearch.client import _json
    from airflow_provider_seatunnel.connectors.elasticsearch.datasource import staged_op
    from airflow_provider_seatunnel.connectors.elasticsearch.sink import _bulk_lines

    hit = _json(b'{"_id": "7", "_source": {"op": "u", "doc": {"id": 7, "price": 12345678901234567.125}}}', True)
    update, body = _bulk_lines("t", hit)
    assert json.loads(update) == {"update": {"_index": "t", "_id": "7"}}
    assert json.loads(body, parse_float=decimal.Decimal) == {
        "doc": {"id": 7, "price": decimal.Decimal("12345678901234567.125")}, "doc_as_upsert": True}
    index, doc = _bulk_lines("t", {"_id": "7", "_source": {"op": "r", "doc": {"id": 7}}})
    assert json.loads(index) == {"index": {"_index": "t", "_id": "7"}} and json.loads(doc) == {"id": 7}
    assert [json.loads(x) for x in _bulk_lines("t", {"_id": "7", "_source": {"op": "d"}})] == [
        {"delete": {"_index": "t", "_id": "7"}}]
    assert (staged_op(0, False), staged_op(2, False), staged_op(3, False), staged_op(0, True)) == ("u", "u", "d", "r")
