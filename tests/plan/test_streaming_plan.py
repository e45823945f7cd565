"""STREAMING jobs at compile time: the streaming options, sources that cannot stream, stateful Sql."""

from __future__ import annotations

import pytest

from airflow_provider_seatunnel.connectors.sql import STATEFUL, UNSUPPORTED, read_watermarks, streaming_problem
from airflow_provider_seatunnel.plan.streaming import (
    AVAILABLE_NOW,
    PROCESSING_TIME,
    ROOT_ENV,
    checkpoint_root,
    stream_settings,
)

SOURCE = 'FakeSource { plugin_output = s, schema = { fields { id = bigint, k = string, ts = timestamp } } }'


def job(query: str, mode: str = "STREAMING", extra: str = "") -> str:
    return f"""
env {{
  job.mode = {mode}
}}
source {{ {SOURCE} }}
transform {{
  Sql {{
    plugin_input = s
    plugin_output = out
    query = "{query}"
    {extra}
  }}
}}
sink {{ Console {{ plugin_input = out }} }}
"""


def test_stateful_sql_without_watermark_is_a_config_error_naming_file_line_plugin(config_error):
    err = config_error(job("select k, count(*) as n from s group by k"))
    (p,) = err.problems
    assert p.file.endswith("job.conf") and p.line == 10  # the query's line
    assert p.plugin == "transform[0] Sql" and p.key == "query"
    assert "aggregation" in p.message and "watermark" in p.message
    assert "watermark = {" in p.hint
    text = str(err)
    assert "job.conf:10: transform[0] Sql: option 'query'" in text


@pytest.mark.parametrize("query, what", [
    ("select distinct k from s", "SELECT DISTINCT"),
    ("select a.id from s a join s b on a.id = b.id", "a JOIN"),
    ("select id from s union select id from s", "UNION (without ALL)"),
    ("select id from s where id in (select id from s)", "a subquery"),
])
def test_every_stateful_query_needs_a_watermark(config_error, plan_of, query, what):
    (p,) = config_error(job(query)).problems
    assert what in p.message
    plan_of(job(query, extra='watermark = { column = ts, delay = "10 seconds" }'))  # compiles
    plan_of(job(query, mode="BATCH"))  # batch jobs: no watermark needed


@pytest.mark.parametrize("query, what", [
    ("select id from s order by id", "ORDER BY"),
    ("select id from s limit 3", "a LIMIT"),
    ("select id, row_number() over (partition by k order by id) as r from s", "OVER"),
    ("select id from s intersect select id from s", "INTERSECT"),
])
def test_queries_a_stream_cannot_run_are_rejected_even_with_a_watermark(config_error, query, what):
    (p,) = config_error(job(query, extra='watermark = { column = ts, delay = "1 minute" }')).problems
    assert what in p.message and "cannot run on a stream" in p.message


def test_row_wise_queries_stream_as_they_are(plan_of):
    plan = plan_of(job("select id, upper(k) as k from s where id > 3"))
    assert plan.mode == "STREAMING"
    assert streaming_problem("select a from t union all select a from u") is None
    assert streaming_problem("select window(ts, '10 seconds') as w, count(*) as n from t group by w") == \
        (STATEFUL, "an aggregation")
    assert streaming_problem("select * from t order by a")[0] == UNSUPPORTED


def test_watermark_option_forms(config_error):
    assert read_watermarks({"column": "ts", "delay": 5000})[0][0].delay == "5000 milliseconds"
    marks, issues = read_watermarks([{"input": "a", "column": "ts", "delay": "1 minute 30 seconds"}])
    assert not issues and marks[0].input == "a"
    (p,) = config_error(job("select id from s", extra='watermark = { column = ts, delay = "later" }')).problems
    assert p.key == "watermark" and "later" in p.message
    (p,) = config_error(job("select id from s", extra="watermark = { delay = 10 }")).problems
    assert "column must name" in p.message


def test_streaming_options_are_checked(config_error):
    text = f"""
env {{
  job.mode = STREAMING
  streaming.trigger = "whenever"
  checkpoint.root = ""
}}
source {{ {SOURCE} }}
sink {{ Console {{ }} }}
"""
    problems = config_error(text).problems
    assert {p.key for p in problems} == {"streaming.trigger", "checkpoint.root"}
    trigger = next(p for p in problems if p.key == "streaming.trigger")
    assert trigger.line == 4 and trigger.plugin == "env" and "available_now" in trigger.hint


def test_a_bounded_source_cannot_stream(config_error):
    text = """
env { job.mode = STREAMING }
source { Jdbc { url = "jdbc:postgresql://localhost/db", driver = "org.postgresql.Driver", query = "select 1" } }
sink { Console { } }
"""
    (p,) = config_error(text).problems
    assert p.plugin == "source[0] Jdbc" and p.line == 3
    assert "cannot be the source of a STREAMING job" in p.message
    assert "FakeSource" in p.hint and "LocalFile" in p.hint and "Jdbc" not in p.hint


def test_settings_and_checkpoint_root(plan_of, tmp_path):
    plan = plan_of(f"""
env {{ job.mode = STREAMING, streaming.trigger = Processing-Time, checkpoint.interval = 2500,
      checkpoint.timeout = 9000 }}
source {{ {SOURCE} }}
sink {{ Console {{ }} }}
""")
    s = stream_settings(plan.env)
    assert (s.trigger, s.interval_ms, s.timeout_ms, s.root) == (PROCESSING_TIME, 2500, 9000, None)
    assert stream_settings({"streaming.trigger": "continuous"}).trigger == PROCESSING_TIME
    default = stream_settings({})
    assert (default.trigger, default.interval_ms, default.timeout_ms) == (AVAILABLE_NOW, 10_000, None)
    # the option wins over the environment variable, which wins over the user data directory
    assert checkpoint_root(stream_settings({"checkpoint.root": "~/ck"}), {ROOT_ENV: "/env"}).endswith("/ck")
    assert checkpoint_root(default, {ROOT_ENV: str(tmp_path)}) == str(tmp_path)
    assert checkpoint_root(default, {ROOT_ENV: "hdfs://nn/ck/"}) == "hdfs://nn/ck"
    assert checkpoint_root(default, {}).endswith("airflow-provider-seatunnel/checkpoints")
