"""The Elasticsearch source and sink against a private OpenSearch 2.19 node (tests/opensearch_server.py): rows
written as SeaTunnel writes them (with and without primary keys), read back with a sliced scroll at the plan's
parallelism (types from the mapping, or from a schema with a query), save modes, and the exactly-once protocol:
a failed write, a driver killed after the claim (rolled forward by the restore), a repeated commit and an
overtaken older attempt; change rows by primary key (merge, delete, replace); https and basic auth through a TLS
proxy with an Airflow connection's credentials."""

from __future__ import annotations

import datetime as dt
import decimal

import pytest

from airflow_provider_seatunnel.connectors.elasticsearch import CONNECTOR as ES
from airflow_provider_seatunnel.connectors.elasticsearch.sink import COMMITS, STAGING_PREFIX
from airflow_provider_seatunnel.runtime import faults, twophase
from airflow_provider_seatunnel.runtime.executor import RunContext
from airflow_provider_seatunnel.spi.fencing import Superseded

SINK = twophase.driver(ES)  # the engine's two phases over the sink's storage verbs


@pytest.fixture(scope="module")
def es():
    from tests import opensearch_server
    from tests.servers import running

    with running(opensearch_server.start, opensearch_server.OpenSearchUnavailable) as server:
        yield server


def staging(es) -> list[str]:
    return es.indices(f"{STAGING_PREFIX}*")


ROWS = "\n".join(f"{{ kind = INSERT, fields = [{i}, \"n{i}\", \"2024-01-0{1 + i % 3}T10:00:0{i % 2}\", "
                 f"\"2024-02-0{1 + i % 5}\", \"{i}.25\", {str(i % 2 == 0).lower()}] }}" for i in range(9))
FIELDS = "id = bigint, name = string, ts = timestamp, day = date, price = \"decimal(10, 2)\", ok = boolean"


def test_rows_are_written_and_read_back_at_the_plans_parallelism(run_job, plan_of, spark, es):
    """One job, two sinks: with primary keys (ids are the keys; a second run of another run id replaces the
    documents rather than adding), and without (one document per row); then both read back."""
    es.index_docs("keyed", [{"id": 100, "name": "old"}], ids=["100"])
    job = f"""
        env {{ job.mode = "BATCH", parallelism = 2 }}
        source {{ FakeSource {{ plugin_output = "fake", schema = {{ fields {{ {FIELDS} }} }}, rows = [{ROWS}],
                                parallelism = 1 }} }}
        sink {{
          Elasticsearch {{ plugin_input = "fake", hosts = ["{es.url}"], index = "keyed", primary_keys = ["id", "name"],
                           key_delimiter = "|", max_batch_size = 4 }}
          Elasticsearch {{ plugin_input = "fake", hosts = ["{es.url}"], index = "plain_${{table_name}}",
                           parallelism = 3 }}
        }}
    """
    for run in ("A", "B"):
        metrics = run_job(job, run_id=run)
        assert metrics[0]["status"] == "FINISHED"
    keyed = es.docs("keyed")
    assert sorted(keyed) == sorted(["100", *[f"{i}|n{i}" for i in range(9)]])  # run B replaced run A's documents
    assert keyed["1|n1"] == {"id": 1, "name": "n1", "ts": "2024-01-02T10:00:01", "day": "2024-02-02",
                             "price": 1.25, "ok": False}
    assert keyed["0|n0"]["ts"] == "2024-01-01T10:00"  # Java's LocalDateTime text: no zero seconds
    plain = es.docs("plain_fake")  # the table of FakeSource: its plugin_output
    assert len(plain) == 18 and sorted(d["id"] for d in plain.values()) == sorted(list(range(9)) * 2)
    assert staging(es) == []

    # read back: source fields typed by the mapping, 3 readers; a schema and a query, 2 readers
    plan = plan_of(f"""
        env {{ job.mode = "BATCH" }}
        source {{
          Elasticsearch {{ plugin_output = "a", hosts = ["{es.url}"], index = "plain_*", source = ["_id", "id", "name"],
                           scroll_size = 2, parallelism = 3 }}
          Elasticsearch {{ plugin_output = "b", hosts = ["{es.url}"], index = "keyed", scroll_size = 3,
                           query = {{ range = {{ id = {{ gte = 5 }} }} }},
                           schema = {{ fields {{ id = int, price = "decimal(10, 2)", ts = timestamp, ok = boolean }} }} }}
        }}
        sink {{ Console {{ plugin_input = ["a", "b"] }} }}
    """)
    (pa, a), (pb, b) = ((p, v) for p in plan.pipelines for v in p.vertices if v.kind == "source")
    df_a = ES.read(RunContext(spark, plan, pa, "read"), a)["default"]
    assert df_a.rdd.getNumPartitions() == 3
    assert dict(df_a.dtypes)["id"] == "bigint" and dict(df_a.dtypes)["name"] == "string"
    rows_a = df_a.collect()
    assert len(rows_a) == 18 and len({r["_id"] for r in rows_a}) == 18
    rows_b = sorted(ES.read(RunContext(spark, plan, pb, "read"), b)["default"].collect(), key=lambda r: r["id"])
    assert [r["id"] for r in rows_b] == [5, 6, 7, 8, 100]
    assert rows_b[0]["price"] == decimal.Decimal("5.25") and rows_b[0]["ts"] == dt.datetime(2024, 1, 3, 10, 0, 1)
    assert rows_b[-1]["price"] is None and rows_b[0]["ok"] is False


def sink_ctx(plan_of, spark, es, options: str, run_id: str, attempt: int = 1, fault: str | None = None):
    plan = plan_of(f"""
        env {{ job.mode = "BATCH" }}
        source {{ FakeSource {{ plugin_output = "fake", schema = {{ fields {{ id = bigint, name = string }} }} }} }}
        sink {{ Elasticsearch {{ plugin_input = "fake", hosts = ["{es.url}"], {options}, parallelism = 3 }} }}
    """)
    pipeline = plan.pipelines[0]
    ctx = RunContext(spark, plan, pipeline, run_id, attempt=attempt,
                     options=faults.from_environment({faults.ENV: fault}) if fault else {})
    return ctx, next(v for v in pipeline.vertices if v.kind == "sink")


def frame(spark, n: int = 12, start: int = 0):
    from airflow_provider_seatunnel.spi.rows import with_kind

    df = spark.createDataFrame([(i, f"n{i}") for i in range(start, start + n)], "id bigint, name string")
    return {"default": with_kind(df.repartition(3))}


def test_a_failed_attempt_leaves_nothing_and_the_restore_rolls_forward_once(plan_of, spark, es):
    """Without primary keys: a failed write leaves the target as it was; a driver killed after the claim
    (the second ``sink.move``) is finished by the restore's token, which then finds the table committed."""
    es.index_docs("eo", [{"id": -1, "name": "earlier"}])
    options = 'index = "eo", data_save_mode = "DROP_DATA"'
    ctx, vertex = sink_ctx(plan_of, spark, es, options, "R1", fault="sink.write=raise+2")
    with pytest.raises(Exception, match="injected fault"):
        SINK.prepare(ctx, vertex, frame(spark))
    assert [d["name"] for d in es.docs("eo").values()] == ["earlier"] and staging(es) == []
    ctx2, _ = sink_ctx(plan_of, spark, es, options, "R1", attempt=2, fault="sink.move@2+1")
    info2 = SINK.prepare(ctx2, vertex, frame(spark))
    assert info2.tables[0].rows == 12 and len(staging(es)) == 1
    with pytest.raises(faults.InjectedFault):
        SINK.commit(ctx2, vertex, info2)  # claimed, not copied: the target still shows the earlier data
    assert [d["name"] for d in es.docs("eo").values()] == ["earlier"]
    ctx3, _ = sink_ctx(plan_of, spark, es, options, "R1", attempt=3)
    info3 = SINK.prepare(ctx3, vertex, frame(spark))
    assert info3.tables[0].committed  # the token rolled the claimed copy forward
    SINK.commit(ctx3, vertex, info3)
    docs = es.docs("eo")
    assert sorted(d["id"] for d in docs.values()) == list(range(12)) and staging(es) == []  # DROP_DATA applied
    ctx4, _ = sink_ctx(plan_of, spark, es, options, "R1", attempt=4)
    SINK.commit(ctx4, vertex, SINK.prepare(ctx4, vertex, frame(spark)))
    assert len(es.docs("eo")) == 12
    record = es.request("POST", f"/{COMMITS}/_search", {"query": {"term": {"run_id.keyword": "R1"}}})
    assert [h["_source"]["state"] for h in record["hits"]["hits"]] == ["committed"]


def test_an_older_attempt_overtaken_by_a_newer_one_is_superseded(plan_of, spark, es):
    options = 'index = "fenced", primary_keys = ["id"]'
    old_ctx, vertex = sink_ctx(plan_of, spark, es, options, "R9")
    old = SINK.prepare(old_ctx, vertex, frame(spark, 5, start=100))
    new_ctx, _ = sink_ctx(plan_of, spark, es, options, "R9", attempt=2)
    new = SINK.prepare(new_ctx, vertex, frame(spark, 4))  # takes a newer token, deletes the older staging
    with pytest.raises(Superseded):
        SINK.commit(old_ctx, vertex, old)
    SINK.commit(new_ctx, vertex, new)
    assert sorted(es.docs("fenced")) == ["0", "1", "2", "3"] and staging(es) == []


def test_error_when_data_exists_and_a_missing_index(plan_of, spark, es):
    es.index_docs("full", [{"id": 1}])
    ctx, vertex = sink_ctx(plan_of, spark, es, 'index = "full", data_save_mode = "ERROR_WHEN_DATA_EXISTS"', "S1")
    with pytest.raises(Exception, match="holds documents"):
        SINK.prepare(ctx, vertex, frame(spark, 2))
    ctx, vertex = sink_ctx(plan_of, spark, es, 'index = "absent", schema_save_mode = "ERROR_WHEN_SCHEMA_NOT_EXIST"',
                           "S2")
    with pytest.raises(Exception, match="does not exist"):
        SINK.prepare(ctx, vertex, frame(spark, 2))
    assert "absent" not in es.indices()


def test_change_rows_merge_delete_and_replace_by_key_and_a_restore_finishes_the_copy(plan_of, spark, es):
    """Primary keys and a change stream, as SeaTunnel's writer: UPDATE_BEFORE skipped, INSERT/UPDATE_AFTER
    merged into the document (fields the row lacks kept), DELETE deletes, a DELETE then an INSERT of one key
    leaves the row alone. The rows arrive shuffled over three partitions with their arrival numbers: the sink
    applies each key's changes in arrival order. The copy runs after the claim: a driver killed there (second
    ``sink.move``) is finished by the restore. Without primary keys a DELETE row fails the write, nothing staged."""
    from pyspark.sql import functions as F

    from airflow_provider_seatunnel.spi.rows import ARRIVAL, ROW_KIND

    es.index_docs("cdc", [{"id": i, "name": "old", "extra": "keep"} for i in (1, 2, 3, 4)], ids=["1", "2", "3", "4"])
    changes = [(10, "a", 0), (1, "old", 1), (1, "new1", 2), (2, "old", 3), (3, "old", 3), (3, "re3", 0),
               (11, "b", 0), (11, "b", 3), (99, "gone", 3), (10, "a2", 2)]
    df = spark.createDataFrame([(i, n, k, pos) for pos, (i, n, k) in enumerate(changes)],
                               f"id bigint, name string, {ROW_KIND} tinyint, {ARRIVAL} bigint")
    data = {"default": df.repartition(3).withColumn(ROW_KIND, F.col(ROW_KIND).cast("byte"))}
    options = 'index = "cdc", primary_keys = ["id"]'
    ctx, vertex = sink_ctx(plan_of, spark, es, options, "C1", fault="sink.move@2+1")
    info = SINK.prepare(ctx, vertex, data)
    assert info.tables[0].rows == 6  # one staged operation per key: 10, 1, 2, 3, 11, 99
    with pytest.raises(faults.InjectedFault):
        SINK.commit(ctx, vertex, info)
    assert es.docs("cdc")["2"] == {"id": 2, "name": "old", "extra": "keep"}  # claimed, not copied yet
    ctx2, _ = sink_ctx(plan_of, spark, es, options, "C1", attempt=2)
    info2 = SINK.prepare(ctx2, vertex, data)
    assert info2.tables[0].committed
    SINK.commit(ctx2, vertex, info2)
    assert es.docs("cdc") == {"1": {"id": 1, "name": "new1", "extra": "keep"}, "3": {"id": 3, "name": "re3"},
                              "4": {"id": 4, "name": "old", "extra": "keep"}, "10": {"id": 10, "name": "a2"}}
    assert staging(es) == []

    ctx3, vertex3 = sink_ctx(plan_of, spark, es, 'index = "cdc_plain"', "C2")
    with pytest.raises(Exception, match="DELETE row cannot be written without primary_keys"):
        SINK.prepare(ctx3, vertex3, data)
    assert es.docs("cdc_plain") == {} and staging(es) == []  # the index of the save mode, no document


def test_https_and_basic_auth_from_an_airflow_connection(plan_of, spark, es, tmp_path, monkeypatch):
    """Through a real TLS proxy requiring basic auth (tests/tls_proxy.py) in front of the node: the sink's driver
    and Spark workers log in with an Airflow connection's credentials over https, trusting the proxy's certificate
    from the connection's ``ca_certs``; the password reaches no plan. A wrong password is refused (401, named,
    the password not in the message), an untrusted certificate too unless ``tls_verify_certificate = false``."""
    import json

    from airflow_provider_seatunnel.connectors.elasticsearch.client import Client, SearchError
    from airflow_provider_seatunnel.connectors.elasticsearch.options import Endpoint
    from airflow_provider_seatunnel.hooks.seatunnel import with_connections
    from tests import tls_proxy

    secret = "s3cret-Pa55"
    with tls_proxy.running(es.url, "writer", secret, tmp_path) as proxy:
        port = int(proxy.url.rsplit(":", 1)[1])
        monkeypatch.setenv("AIRFLOW_CONN_SEARCH", json.dumps({
            "conn_type": "elasticsearch", "host": "127.0.0.1", "port": port, "login": "writer", "password": secret,
            "extra": {"scheme": "https", "ca_certs": str(proxy.ca)}}))
        plan = plan_of("""
            env { job.mode = "BATCH" }
            source { FakeSource { plugin_output = "fake", schema = { fields { id = bigint, name = string } } } }
            sink { Elasticsearch { plugin_input = "fake", elasticsearch_conn_id = "search", index = "secure",
                                   primary_keys = ["id"], parallelism = 2 } }
        """)
        resolved = with_connections(plan)
        assert secret not in json.dumps(plan.to_dict()) and secret not in json.dumps(resolved.to_dict())
        pipeline = resolved.pipelines[0]
        ctx = RunContext(spark, resolved, pipeline, "TLS1")
        vertex = next(v for v in pipeline.vertices if v.kind == "sink")
        SINK.commit(ctx, vertex, SINK.prepare(ctx, vertex, frame(spark, 5)))
        assert sorted(es.docs("secure")) == ["0", "1", "2", "3", "4"]
        assert proxy.seen and len(set(proxy.seen)) == 1 and proxy.seen[0].startswith("Basic ")

        with pytest.raises(SearchError, match="answered 401") as refused:
            Client(Endpoint((proxy.url,), "writer", "wrong-one", truststore=str(proxy.ca))).request("GET", "/")
        assert "wrong-one" not in str(refused.value)
        with pytest.raises(SearchError, match="CERTIFICATE_VERIFY_FAILED"):
            Client(Endpoint((proxy.url,), "writer", secret), tries=1).request("GET", "/")
        _, root = Client(Endpoint((proxy.url,), "writer", secret, verify_certificate=False)).request("GET", "/")
        assert root["version"]["distribution"] == "opensearch"
