"""InMemory, DynamicCompile, LLM and Embedding at compile time, and the model client against a real
OpenAI-compatible HTTP server on loopback (tests/model_server.py; no Spark): the request shapes of each
provider, retries of 429/5xx bounded, timeouts, 401/400 not retried, secrets kept out of messages."""

from __future__ import annotations

import json

import pytest

from airflow_provider_seatunnel.connectors.inmemory import CONNECTOR as INMEMORY
from airflow_provider_seatunnel.connectors.models import client as client_module
from airflow_provider_seatunnel.connectors.models.client import Client, custom_embedding_body, substitute
from airflow_provider_seatunnel.connectors.models.jsonpath import select
from airflow_provider_seatunnel.connectors.models.options import Endpoint
from airflow_provider_seatunnel.connectors.models.worker import converted, row_vectors
from airflow_provider_seatunnel.spi import NOT_RUNNABLE
from airflow_provider_seatunnel.spi.errors import DataError, PipelineError, RuntimeConfigError
from tests import model_server
from tests.model_server import KEY

FAKE = """source { FakeSource { plugin_output = "fake", row.num = 2,
                               schema = { fields { id = int, name = string } } } }"""


def llm_job(options: str, sink: str = 'InMemory { plugin_input = "llm" }') -> str:
    return f"""env {{ job.mode = "BATCH" }}
{FAKE}
transform {{ LLM {{ plugin_input = "fake", plugin_output = "llm", {options} }} }}
sink {{ {sink} }}"""


# ------------------------------------------------------------------------------------------------
# compile time
# ------------------------------------------------------------------------------------------------

def test_llm_plans_with_its_output_column_and_type(plan_of):
    plan = plan_of(llm_job('model_provider = OPENAI, model = "gpt-4o-mini", api_key = "sk-x", prompt = "p", '
                           'output_data_type = boolean, output_column_name = "is_cn"'))
    vertex = next(v for p in plan.pipelines for v in p.vertices if v.plugin == "LLM")
    assert vertex.schema == {"id": "int", "name": "string", "is_cn": "boolean"}
    assert not [w for w in plan.warnings if w.get("code") == NOT_RUNNABLE]


@pytest.mark.parametrize(("options", "key", "text"), [
    ('model_provider = OPENAI, model = m, prompt = p', "api_key", "required"),
    ('model_provider = OPENAI, model = m, api_key = k, prompt = p, output_column_name = name', "output_column_name",
     "llm inference field name name already exists"),
    ('model_provider = OPENAI, model = m, api_key = k, prompt = p, inference_columns = [nme]', "inference_columns",
     "Field name nme does not exist in the row type."),
    ('model_provider = QIANFAN, model = m, api_key = k, secret_key = s, oauth_path = "http://o", prompt = p',
     "model_provider", "Unsupported model provider: QIANFAN"),
    ('model_provider = MICROSOFT, model = m, api_key = k, prompt = p', "api_path", "required with model_provider "
     "MICROSOFT"),
    ('model_provider = CUSTOM, model = m, prompt = p, api_path = "http://x", custom_config = { '
     'custom_request_headers = {}, custom_request_body = {} }', "custom_config", "custom_response_parse is required"),
    ('model_provider = OPENAI, model = m, api_key = k, prompt = p, output_data_type = float', "output_data_type",
     "float"),
])
def test_llm_refuses_what_seatunnel_refuses_at_the_key(config_error, options, key, text):
    error = config_error(llm_job(options))
    problem = next(p for p in error.problems if p.key == key)
    assert text in problem.message and problem.line == 4 and "LLM" in (problem.plugin or "")


def test_embedding_plans_float_vectors_and_checks_fields(plan_of, config_error):
    job = """env { job.mode = "BATCH" }
source { FakeSource { plugin_output = "fake", row.num = 1, schema = { fields { id = int, intro = string } } } }
transform { Embedding { plugin_input = "fake", plugin_output = "e", model_provider = DOUBAO, model = m,
                        api_key = k, single_vectorized_input_number = 2, vectorization_fields { v = %s } } }
sink { Assert { plugin_input = "e", rules { field_rules = [ { field_name = v, field_type = float_vector,
                                                            field_value = [ { rule_type = NOT_NULL } ] } ] } } }"""
    vertex = next(v for p in plan_of(job % "intro").pipelines for v in p.vertices if v.plugin == "Embedding")
    assert vertex.schema == {"id": "int", "intro": "string", "v": "array<float>"}
    error = config_error(job % "intr")
    assert error.problems[0].key == "vectorization_fields" and "'intr'" in error.problems[0].message


def test_dynamic_compile_plans_but_is_not_runnable_at_its_code(plan_of, config_error):
    job = f"""env {{ job.mode = "BATCH" }}
{FAKE}
transform {{ DynamicCompile {{ plugin_input = "fake", plugin_output = "d", compile_language = "GROOVY",
                              source_code = "class demo {{}}" }} }}
sink {{ InMemory {{ plugin_input = "d" }} }}"""
    plan = plan_of(job)
    blockers = [w for w in plan.warnings if w.get("code") == NOT_RUNNABLE]
    assert blockers and blockers[0]["key"] == "source_code" and "Groovy" in blockers[0]["message"]
    assert blockers[0]["line"] == 5
    error = config_error(job.replace('compile_language = "GROOVY"', 'compile_language = "KOTLIN"'))
    assert error.problems[0].key == "compile_language"
    missing = config_error(job.replace('source_code = "class demo {}"', 'compile_pattern = ABSOLUTE_PATH'))
    assert missing.problems[0].key == "absolute_path"


def test_inmemory_sink_plans_runnable_and_its_source_says_why_not(plan_of, config_error):
    plan = plan_of(f"""env {{ job.mode = "BATCH" }}
{FAKE}
sink {{ InMemory {{ plugin_input = "fake", throw_exception_of_committer = false, checkpoint_sleep = true }} }}""")
    assert not [w for w in plan.warnings if w.get("code") == NOT_RUNNABLE]
    assert INMEMORY.capabilities.exactly_once and INMEMORY.capabilities.committer
    source = plan_of("""env { job.mode = "BATCH" }
source { InMemory { plugin_output = "x", username = "st" } }
sink { InMemory { plugin_input = "x" } }""")
    reasons = [w["message"] for w in source.warnings if w.get("code") == NOT_RUNNABLE]
    assert any("SeaTunnel has no InMemory source" in r for r in reasons)
    error = config_error(f"""env {{ job.mode = "BATCH" }}
{FAKE}
sink {{ InMemory {{ plugin_input = "fake", assert_options_key = "a", assert_options_value = "b" }} }}""")
    assert error.problems[0].key == "assert_options_key" and "assert key and value not match!" in error.problems[0].message


def test_the_api_key_and_auth_headers_are_secret_options():
    from airflow_provider_seatunnel.spi.registry import secret_options

    assert {"api_key", "secret_key", "authorization"} <= secret_options("LLM")
    assert {"api_key", "authorization"} <= secret_options("Embedding")


# ------------------------------------------------------------------------------------------------
# the client against a real HTTP server
# ------------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def api():
    with model_server.running() as server:
        yield server


@pytest.fixture
def web(api):
    api.seen.clear()
    model_server.install(api)
    return api


def endpoint(web, provider="OPENAI", path="/v1/chat/completions", **kw) -> Endpoint:
    return Endpoint(provider, kw.pop("model", "gpt-4o-mini"), web.url(path), kw.pop("api_key", KEY), **kw)


def test_chat_sends_seatunnels_body_and_reads_the_array(web):
    client = Client("transform[0] LLM", endpoint(web))
    assert client.chat("Who? INT", json.dumps([{"id": 1, "name": "Jia Fan"}])) == ["7"]
    seen = web.requests_to("/v1/chat/completions")[0]
    body = json.loads(seen.body)
    assert body["model"] == "gpt-4o-mini" and [m["role"] for m in body["messages"]] == ["system", "user"]
    assert seen.header("Authorization") == f"Bearer {KEY}" and seen.header("Content-Type") == "application/json"
    azure = Client("LLM", endpoint(web, "MICROSOFT", "/openai/deployments/gpt-35-turbo/chat/completions"))
    assert azure.chat("p", '[{"name": "Eric"}]') == ["American"]
    assert "model" not in json.loads(web.requests_to("/openai/deployments/gpt-35-turbo/chat/completions")[0].body)


def test_custom_llm_substitutes_placeholders_and_parses_by_jsonpath(web):
    body = {"model": "${model}", "messages": [{"role": "system", "content": "${prompt}"},
                                              {"role": "user", "content": "${input}"}]}
    e = endpoint(web, "CUSTOM", headers=(("Authorization", f"Bearer {KEY}"),), body=body,
                 parse="$.choices[*].message.content")
    assert Client("LLM", e).chat("p", '[{"name": "Jia Fan"}]') == ['["Chinese"]']  # unparsed, as SeaTunnel
    sent = json.loads(web.requests_to("/v1/chat/completions")[0].body)
    assert sent["model"] == "gpt-4o-mini" and sent["messages"][1]["content"] == '[{"name": "Jia Fan"}]'
    assert substitute({"a": ["${model:x} ${input}"]}, {"model": "", "input": "i"}) == {"a": ["x i"]}
    # one pass: a row's text that reads like a placeholder is sent as it is
    assert substitute({"c": "${input}"}, {"input": "x ${prompt}", "prompt": "P"}) == {"c": "x ${prompt}"}


def test_an_answer_larger_than_the_bound_is_a_data_error(web, monkeypatch):
    monkeypatch.setattr(client_module, "MAX_ANSWER_BYTES", 1000)
    web.route("/big", lambda seen: (200, {"choices": [{"message": {"content": "x" * 5000}}]}))
    with pytest.raises(DataError, match="answered more than"):
        Client("LLM", endpoint(web, path="/big")).chat("p", "[]")


def test_embedding_request_shapes_per_provider(web):
    openai = Client("Embedding", endpoint(web, path="/v1/embeddings", model="text-embedding-3-small"))
    assert row_vectors(openai, ("a b", "cd"), ("x", "y"), 1) == [[3.0, 1.0, 1.5], [2.0, 0.0, 1.5]]
    assert [json.loads(s.body)["input"] for s in web.requests_to("/v1/embeddings")] == ["a b", "cd"]
    with pytest.raises(RuntimeConfigError, match="only supports single input"):
        row_vectors(openai, ("a", "b"), ("x", "y"), 2)
    web.seen.clear()
    doubao = Client("Embedding", endpoint(web, "DOUBAO", "/v1/embeddings"))
    assert len(row_vectors(doubao, ("a", "b", "c"), ("x", "y", "z"), 2)) == 3
    assert [json.loads(s.body)["input"] for s in web.requests_to("/v1/embeddings")] == [["a", "b"], ["c"]]
    qianfan = Client("Embedding", Endpoint("QIANFAN", "bge_large_en", web.url("/v1/qianfan/embedding"), KEY,
                                           "qf-secret", web.url("/v1/qianfan/token")))
    assert row_vectors(qianfan, ("x y",), ("f",), 2) == [[3.0, 1.0, 1.5]]
    assert len(web.requests_to("/v1/qianfan/token")) == 1
    custom = custom_embedding_body({"modelx": "${model}", "inputx": ["${input}"], "k": 1}, "m", ["a", "b"])
    assert custom == {"modelx": "m", "inputx": ["a", "b"], "k": 1}


def test_vectors_must_match_the_inputs(web):
    web.route("/short", lambda seen: (200, {"data": [{"embedding": [1.0]}]}))
    client = Client("Embedding", endpoint(web, "DOUBAO", "/short"))
    with pytest.raises(DataError, match="number of vectors is not equal"):
        row_vectors(client, ("a", "b"), ("x", "y"), 2)


@pytest.mark.parametrize("status", [429, 503])
def test_transient_answers_are_retried_with_a_bound(web, status):
    flaky = model_server.Flaky(model_server.chat, failures=2, status=status, retry_after="0")
    web.route("/flaky", flaky)
    pauses: list[float] = []
    client = Client("LLM", endpoint(web, path="/flaky"), sleep=pauses.append)
    assert client.chat("p", '[{"name": "Eric"}]') == ["American"]
    assert client.requests == 3 and len(pauses) == 2 and pauses[1] > pauses[0]
    always = model_server.Flaky(model_server.chat, failures=99, status=status)
    web.route("/down", always)
    down = Client("LLM", endpoint(web, path="/down"), sleep=pauses.append)
    with pytest.raises(PipelineError) as info:
        down.chat("p", "[]")
    assert not info.value.deterministic and f"answered {status}" in info.value.cause
    assert down.requests == client_module.ATTEMPTS and "LLM: POST http://127.0.0.1" in info.value.cause


@pytest.mark.parametrize(("status", "hint"), [(401, "check api_key"), (400, "")])
def test_deterministic_answers_are_not_retried_and_hide_the_key(web, status, hint):
    web.route("/refuse", lambda seen: (status, {"error": {"message": "no"}}))
    client = Client("transform[1] LLM", endpoint(web, path="/refuse"), sleep=lambda s: None)
    with pytest.raises(RuntimeConfigError) as info:
        client.chat("p", "[]")
    assert info.value.deterministic and client.requests == 1
    assert f"answered {status}" in info.value.cause and hint in info.value.cause
    assert "transform[1] LLM" in info.value.cause and KEY not in str(info.value)
    wrong = Client("LLM", endpoint(web, api_key="sk-wrong"), sleep=lambda s: None)
    with pytest.raises(RuntimeConfigError, match="401"):
        wrong.chat("p", "[]")


def test_a_slow_answer_times_out_and_is_retried(web, monkeypatch):
    monkeypatch.setattr(client_module, "READ_TIMEOUT", 0.2)
    web.route("/slow", model_server.slow(1.0))
    client = Client("LLM", endpoint(web, path="/slow"), sleep=lambda s: None)
    with pytest.raises(PipelineError) as info:
        client.chat("p", "[]")
    assert "no answer within 0.2 s" in info.value.cause and client.requests == client_module.ATTEMPTS


def test_a_refused_connection_is_transient(web):
    from tests.servers import free_port

    client = Client("LLM", Endpoint("OPENAI", "m", f"http://127.0.0.1:{free_port()}/v1", KEY), sleep=lambda s: None)
    with pytest.raises(PipelineError, match="cannot connect") as info:
        client.chat("p", "[]")
    assert not info.value.deterministic


def test_the_qianfan_token_stays_out_of_messages(web):
    web.route("/v1/qianfan/embedding/bge_large_en", lambda seen: (500, "boom"))
    client = Client("Embedding", Endpoint("QIANFAN", "bge_large_en", web.url("/v1/qianfan/embedding"), KEY,
                                          "qf-secret", web.url("/v1/qianfan/token")), sleep=lambda s: None)
    with pytest.raises(PipelineError) as info:
        client.vectors(["a"])
    assert model_server.TOKEN not in str(info.value) and "qf-secret" not in str(info.value)


@pytest.mark.parametrize(("text", "kind", "value"), [
    ("7", "INT", 7), ("+7", "BIGINT", 7), ("1.5", "DOUBLE", 1.5), ("TRUE", "BOOLEAN", True), ("yes", "BOOLEAN", False),
    (None, "STRING", "null"), ("Chinese", "STRING", "Chinese"),
])
def test_answers_convert_as_java_parses_them(text, kind, value):
    assert converted("LLM", text, kind) == value


@pytest.mark.parametrize(("text", "kind"), [("7.0", "INT"), ("2147483648", "INT"), ("x", "DOUBLE"), (None, "INT")])
def test_answers_that_do_not_convert_are_data_errors(text, kind):
    with pytest.raises(DataError, match="output_data_type"):
        converted("LLM", text, kind)


def test_the_jsonpath_subset():
    doc = {"data": [{"embedding": [1, 2]}, {"embedding": [3]}], "a": {"b": "c"}}
    assert select(doc, "$.data[*].embedding") == [[1, 2], [3]]
    assert select(doc, "$['a'].b") == "c" and select(doc, "$.data[-1].embedding") == [3]
    assert select(doc, "$.missing") is None
    with pytest.raises(ValueError, match="cannot read"):
        select(doc, "$..embedding")


def test_model_conn_id_gives_the_key_and_endpoint_hidden_in_the_plan(web, plan_of, monkeypatch):
    from airflow_provider_seatunnel.connectors.models.llm import SPEC
    from airflow_provider_seatunnel.connectors.models.options import endpoint as endpoint_of
    from airflow_provider_seatunnel.hooks.seatunnel import with_connections

    monkeypatch.setenv("AIRFLOW_CONN_MODELS", json.dumps({
        "conn_type": "generic", "password": KEY, "extra": {"api_path": web.url("/v1/chat/completions")}}))
    plan = plan_of(llm_job('model_provider = OPENAI, model = m, prompt = "p", model_conn_id = "models"'))
    resolved = with_connections(plan)
    assert KEY not in json.dumps(resolved.to_dict())
    llm = next(v for p in resolved.pipelines for v in p.vertices if v.plugin == "LLM")
    e = endpoint_of(SPEC.run_time(llm.config, "transform"), llm=True)
    assert e.api_key == KEY and e.url == web.url("/v1/chat/completions")
    assert Client("LLM", e).chat("p", '[{"name": "Eric"}]') == ["American"]
    own = with_connections(plan_of(llm_job('model_provider = OPENAI, model = m, prompt = "p", api_key = "sk-own", '
                                           'model_conn_id = "models"')))
    assert next(v for p in own.pipelines for v in p.vertices if v.plugin == "LLM").config["api_key"] == "sk-own"
