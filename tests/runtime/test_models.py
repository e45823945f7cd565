"""LLM, Embedding and InMemory on real Spark, against a real OpenAI-compatible HTTP server on loopback
(tests/model_server.py): the requests go out from the Python workers at the plan's parallelism, one per
row (LLM) or per ``single_vectorized_input_number`` values (Embedding); a wrong key fails the pipeline
deterministically naming the plugin; InMemory counts and drops the rows, replaces table placeholders
in its assertion and raises its faults as SeaTunnel's does. One server and few Spark jobs."""

from __future__ import annotations

import json

import pytest

from airflow_provider_seatunnel.connectors.inmemory import CONNECTOR as INMEMORY
from airflow_provider_seatunnel.connectors.models.embedding import CONNECTOR as EMBEDDING
from airflow_provider_seatunnel.connectors.models.llm import CONNECTOR as LLM
from airflow_provider_seatunnel.runtime.executor import RunContext
from airflow_provider_seatunnel.spi.errors import OutOfMemory, PipelineError, RuntimeConfigError, error_from
from tests import model_server
from tests.model_server import KEY

NAMES = ["Jia Fan", "Eric", "Hailin Wang", "Tomas", "Guangdong Liu", "Li"]


@pytest.fixture(scope="module")
def api():
    with model_server.running() as server:
        yield server


@pytest.fixture
def web(api):
    api.seen.clear()
    model_server.install(api)
    return api


def model_job(web, llm_key: str = KEY) -> str:
    rows = ", ".join(f'{{ fields = [{i}, "{n}", "about {n}"], kind = INSERT }}' for i, n in enumerate(NAMES))
    return f"""
env {{ job.mode = "BATCH", parallelism = 2 }}
source {{ FakeSource {{ plugin_output = "fake", rows = [{rows}],
                        schema = {{ fields {{ id = int, name = string, intro = string }} }} }} }}
transform {{
  LLM {{ plugin_input = "fake", plugin_output = "l1", model_provider = OPENAI, model = "gpt-4o-mini",
         api_key = "{llm_key}", prompt = "Chinese or American? BOOLEAN", output_data_type = boolean,
         inference_columns = ["name"], output_column_name = "is_cn",
         api_path = "{web.url('/v1/chat/completions')}" }}
  LLM {{ plugin_input = "l1", plugin_output = "l2", model_provider = CUSTOM, model = "gpt-4o-mini", prompt = "who",
         openai.api_path = "{web.url('/v1/chat/completions')}",
         custom_config {{ custom_response_parse = "$.choices[*].message.content",
                          custom_request_headers {{ Authorization = "Bearer {KEY}" }},
                          custom_request_body {{ model = "${{model}}", messages = [
                              {{ role = system, content = "${{prompt}}" }}, {{ role = user, content = "${{input}}" }} ] }} }} }}
  Embedding {{ plugin_input = "l2", plugin_output = "e1", model_provider = DOUBAO, model = "ep-1", api_key = "{KEY}",
               api_path = "{web.url('/v1/embeddings')}", single_vectorized_input_number = 2,
               vectorization_fields {{ name_vector = name, intro_vector = intro }} }}
  Embedding {{ plugin_input = "e1", plugin_output = "e2", model_provider = QIANFAN, model = bge_large_en,
               api_key = "{KEY}", secret_key = "qf-secret", api_path = "{web.url('/v1/qianfan/embedding')}",
               oauth_path = "{web.url('/v1/qianfan/token')}", vectorization_fields {{ intro = intro }} }}
}}
sink {{ InMemory {{ plugin_input = "e2" }} }}
"""


def vertex(plan, plugin: str, index: int = 0):
    return [v for v in plan.pipelines[0].vertices if v.plugin == plugin][index]


def chain(spark, plan):
    """The source's rows through the four transforms (their DataFrames, not run yet)."""
    from airflow_provider_seatunnel.connectors.fakesource import CONNECTOR as FAKE

    ctx = RunContext(spark, plan, plan.pipelines[0], "models")
    data = FAKE.read(ctx, vertex(plan, "FakeSource"))
    data = LLM.apply(ctx, vertex(plan, "LLM", 0), {"fake": data})
    data = LLM.apply(ctx, vertex(plan, "LLM", 1), {"l1": data})
    data = EMBEDDING.apply(ctx, vertex(plan, "Embedding", 0), {"l2": data})
    return next(iter(EMBEDDING.apply(ctx, vertex(plan, "Embedding", 1), {"e1": data}).values()))


def test_llm_and_embedding_answer_every_row_from_the_workers(web, spark, plan_of):
    plan = plan_of(model_job(web))
    df = chain(spark, plan)
    assert df.rdd.getNumPartitions() == 2 == vertex(plan, "LLM").parallelism
    collected = df.collect()
    assert len(collected) == 2 * len(NAMES)  # FakeSource's rows come from each of its 2 readers, as SeaTunnel's
    rows = {r["id"]: r for r in collected}
    assert [c for c in df.columns if not c.startswith("__st")] == ["id", "name", "intro", "is_cn", "llm_output",
                                                                    "name_vector", "intro_vector"]
    for i, name in enumerate(NAMES):
        row = rows[i]
        assert row["is_cn"] is (" " in name)  # BOOLEAN: "True"/"False" lower-cased, parsed as Java does
        assert json.loads(row["llm_output"]) == ["Chinese" if " " in name else "American"]  # CUSTOM: unparsed
        assert row["name_vector"] == [float(len(name)), float(name.count(" ")), 1.5]
        intro = f"about {name}"
        assert row["intro"] == [float(len(intro)), float(intro.count(" ")), 1.5]  # replaced in place
        assert row["intro_vector"] == row["intro"]
    chats = [json.loads(s.body) for s in web.requests_to("/v1/chat/completions")]
    first = [c for c in chats if "BOOLEAN" in c["messages"][0]["content"]]
    assert len(first) == len(collected) == len(chats) - len(first)  # one request per row, per LLM
    assert all(list(json.loads(c["messages"][1]["content"])[0]) == ["name"] for c in first)  # inference_columns
    embedded = [json.loads(s.body)["input"] for s in web.requests_to("/v1/embeddings")]
    assert len(embedded) == len(collected) and all(len(batch) == 2 for batch in embedded)  # both fields at once
    tokens = web.requests_to("/v1/qianfan/token")  # one OAuth token per task
    assert len(tokens) == 2 and len(web.requests_to("/v1/qianfan/embedding/bge_large_en")) == len(collected)


def test_a_wrong_key_fails_the_pipeline_at_once_naming_the_plugin(web, spark, plan_of):
    plan = plan_of(model_job(web, llm_key="sk-wrong"))
    with pytest.raises(Exception) as info:
        chain(spark, plan).collect()
    error = error_from(info.value, "transform[0] LLM", "p")
    assert isinstance(error, RuntimeConfigError) and error.deterministic
    assert "transform[0] LLM" in error.cause and "401" in error.cause and "sk-wrong" not in error.cause
    assert "Traceback" not in error.cause
    assert len(web.requests_to("/v1/chat/completions")) <= 2  # one per task, none retried


INMEMORY_JOB = """
env { job.mode = "BATCH", parallelism = 2 }
source { FakeSource { plugin_output = "fake", tables_configs = [
  { row.num = 3, schema = { table = "db1.sc1.t1", fields { id = bigint, name = string },
                            primaryKey { name = pk, columnNames = [id] } } },
  { row.num = 2, schema = { table = "db1.sc1.t2", fields { id = bigint, name = string },
                            primaryKey { name = pk, columnNames = [id] } } } ] } }
sink { InMemory { plugin_input = "fake", %s } }
"""


def test_inmemory_counts_drops_and_checks_its_assertion_per_table(run_job):
    ok = ('assert_options_key = "db=${database_name}, t=${table_full_name}, pk=${primary_key}, f=${field_names}", '
          'assert_options_value = "db=db1, t=db1.sc1.${table_name}, pk=id, f=id,name"')
    metrics = run_job(INMEMORY_JOB % ok)[0]
    assert metrics["write_count"] == 10  # row.num per table and per FakeSource reader (2), as SeaTunnel's
    with pytest.raises(PipelineError) as info:
        run_job(INMEMORY_JOB % ok.replace("pk=id,", "pk=name,"))
    assert info.value.deterministic and "assert key and value not match! key = db=db1, t=db1.sc1.t1" in str(info.value)


@pytest.mark.parametrize(("options", "attempt", "kind", "message"), [
    ('throw_runtime_exception_list = ["error one", "error two"]', 2, PipelineError, "error two"),
    ('throw_runtime_exception_list = ["error one"]', 2, PipelineError, "Index 1 out of bounds for length 1"),
    ("throw_out_of_memory = true", 1, OutOfMemory, "java.lang.OutOfMemoryError"),
    ("throw_exception = true", 1, PipelineError, "write failed"),
    ("throw_exception_of_committer = true", 1, PipelineError, "commit failed"),
])
def test_inmemory_faults_fail_as_seatunnels(spark, plan_of, options, attempt, kind, message):
    from airflow_provider_seatunnel.runtime.executor import run_pipeline

    plan = plan_of(INMEMORY_JOB % options)
    with pytest.raises(PipelineError) as info:
        run_pipeline(RunContext(spark, plan, plan.pipelines[0], "faults", attempt=attempt))
    assert type(info.value) is kind and message in str(info.value)
    assert info.value.deterministic is (kind is OutOfMemory)
    assert INMEMORY.can_run("sink")
