"""Secrets by Spark's redaction rule: hidden in plan JSON and text, task ids, metrics and task logs,
and kept off spark-submit's command line (every ``env`` ``spark.*`` setting goes to a 0600
properties file). No Spark starts here."""

from __future__ import annotations

import json
import os
import re
import stat
from pathlib import Path

import pytest

from airflow_provider_seatunnel.cli import main
from airflow_provider_seatunnel.runtime.launcher import (
    Submission,
    WorkDir,
    secret_values,
    submit_command,
    write_plan_file,
    write_properties_file,
)
from airflow_provider_seatunnel.runtime.metrics import PipelineMetrics
from airflow_provider_seatunnel.spi.errors import PipelineError
from airflow_provider_seatunnel.spi.secrets import (
    REDACTED,
    SPARK_REDACTION_REGEX,
    hidden,
    is_secret,
    redact_env,
    redaction,
    scrub,
)

JOB = """
env {
  job.name = "secrets"
  spark.ui.enabled = false
  spark.hadoop.fs.s3a.secret.key = "s3cr3t-literal"
  spark.hadoop.fs.s3a.access.key = "AKIA-access-id"
  spark.authenticate.token = "tok-123456"
  spark.driver.extraJavaOptions = "-Djavax.net.ssl.trustStorePassword=trust-pw-1"
  spark.executorEnv.HOME_DIR = "/home/etl"
}
source { FakeSource { plugin_output = "t", row.num = 1, schema = { fields { id = bigint } }, my_api_token = "opt-tok-987" } }
sink { Jdbc { plugin_input = "t", url = "jdbc:postgresql://h:5432/db?user=u&password=url-pw-55", driver = "org.postgresql.Driver",
              user = "loader", password = "jdbc-pw-777", generate_sink_sql = true, table = "x" } }
"""
SECRETS = ("s3cr3t-literal", "AKIA-access-id", "tok-123456", "trust-pw-1", "opt-tok-987", "url-pw-55", "jdbc-pw-777")


def test_sparks_default_rule_is_the_one_of_spark_4():
    assert SPARK_REDACTION_REGEX == r"(?i)secret|password|token|access[.]?key"
    rule = redaction({})
    for key in ("spark.hadoop.fs.s3a.secret.key", "spark.hadoop.fs.s3a.access.key", "fs.s3a.accesskey",
                "spark.authenticate.secret", "PASSWORD", "spark.kubernetes.authenticate.oauthToken"):
        assert is_secret(key, frozenset(), rule), key
    for key in ("spark.ui.enabled", "spark.jars", "primary_keys", "spark.sql.shuffle.partitions"):
        assert not is_secret(key, frozenset(), rule), key


def test_a_jobs_own_redaction_regex_hides_more_never_less():
    env = {"spark.redaction.regex": "(?i)internal", "spark.my.internal.url": "x", "spark.a.password": "p",
           "spark.b": "plain"}
    shown = redact_env(env)
    assert shown["spark.my.internal.url"] == REDACTED  # the job's pattern
    assert shown["spark.a.password"] == REDACTED  # the default stays
    assert shown["spark.b"] == "plain"
    assert redact_env({"spark.redaction.regex": "(unclosed", "spark.x.token": "t"})["spark.x.token"] == REDACTED


def test_a_spark_setting_whose_value_matches_is_hidden_as_spark_does():
    shown = redact_env({"spark.driver.extraJavaOptions": "-Dtrust.password=pw", "spark.app.x": "no",
                        "job.name": "token_refresh"})
    assert shown == {"spark.driver.extraJavaOptions": REDACTED, "spark.app.x": "no", "job.name": "token_refresh"}


def test_plan_json_and_text_show_no_secret(write_conf, capsys):
    path = str(write_conf(JOB))
    assert main(["plan", path, "--format", "json", "--no-cache"]) == 0
    out = capsys.readouterr().out
    assert not [s for s in SECRETS if s in out]
    doc = json.loads(out)
    env = doc["job"]["env"]
    assert env["spark.hadoop.fs.s3a.secret.key"] == env["spark.driver.extraJavaOptions"] == REDACTED
    assert env["spark.ui.enabled"] is False and env["spark.executorEnv.HOME_DIR"] == "/home/etl"
    source, sink = doc["pipelines"][0]["vertices"][0]["config"], doc["pipelines"][0]["vertices"][-1]["config"]
    assert source["my_api_token"] == REDACTED and source["row.num"] == 1
    assert sink["password"] == REDACTED and sink["url"] == "jdbc:postgresql://h:5432/db?user=******&password=******"
    for fmt in ("text", "dot"):
        assert main(["plan", path, "--format", fmt]) == 0
        assert not [s for s in SECRETS if s in capsys.readouterr().out]


def test_the_plan_file_still_holds_every_secret_for_the_driver(tmp_path, plan_of):
    plan = plan_of(JOB)
    text = write_plan_file(plan, tmp_path / "work").read_text()
    assert all(s in text for s in SECRETS)
    assert set(SECRETS) <= {s for v in secret_values(plan) for s in SECRETS if s in str(v)}


def test_a_secret_option_value_is_left_out_of_the_task_id(plan_of):
    """An option Spark's rule matches (``my_api_token``) is a secret: rotating it keeps the task id,
    where other options count (Console names no identity options: all of them count)."""
    job = """
    source { FakeSource { plugin_output = "t", row.num = 1, schema = { fields { id = bigint } } } }
    sink { Console { plugin_input = "t", my_api_token = "opt-tok-987", log.print.data = true } }
    """
    first = plan_of(job).pipelines[0].task_id
    assert plan_of(job.replace("opt-tok-987", "opt-tok-rotated")).pipelines[0].task_id == first
    assert plan_of(job.replace("log.print.data = true", "log.print.data = false")).pipelines[0].task_id != first


def test_every_env_spark_setting_goes_to_the_properties_file_never_to_argv(tmp_path, plan_of):
    plan = plan_of(JOB)
    p = plan.pipelines[0]
    plan_file = write_plan_file(plan, tmp_path / "work")
    sub = Submission.of(plan, p, plan_file, "r", 1, tmp_path / "m.json")
    cmd = submit_command(plan, p, plan_file, "r", "local[1]", tmp_path / "m.json")
    line = " ".join(cmd)
    assert "--conf" not in cmd and not [s for s in SECRETS if s in line] and "spark.ui.enabled" not in line
    props = plan_file.parent / f"pipeline-{p.task_id}.properties"
    assert cmd[cmd.index("--properties-file") + 1] == str(props)
    assert stat.S_IMODE(props.stat().st_mode) == 0o600
    lines = props.read_text().splitlines()
    assert {f"{k} {v}" for k, v in sub.conf.items() if k != "spark.driver.extraJavaOptions"} <= set(lines)


def test_properties_file_escapes_what_java_properties_would_read_otherwise(tmp_path):
    path = write_properties_file({"spark.a": "C:\\dir\\x", "spark.b": " lead", "spark.c": "two\nlines",
                                  "spark.d=x": "v"}, tmp_path / "p.properties", environ={})
    assert path.read_text().splitlines() == ["spark.a C:\\\\dir\\\\x", "spark.b \\ lead", "spark.c two\\nlines",
                                             "spark.d\\=x v"]


def test_a_properties_file_left_behind_by_someone_else_never_receives_the_settings(tmp_path):
    """A symbolic link planted at the file's name (a shared --work-dir) is replaced, not followed."""
    target = tmp_path / "elsewhere"
    target.write_text("")
    (tmp_path / "p.properties").symlink_to(target)
    write_properties_file({"spark.x.password": "pw-should-stay-private"}, tmp_path / "p.properties", environ={})
    assert target.read_text() == "" and not (tmp_path / "p.properties").is_symlink()
    assert stat.S_IMODE((tmp_path / "p.properties").stat().st_mode) == 0o600


def test_metrics_carry_no_secret(plan_of):
    plan = plan_of(JOB)
    p = plan.pipelines[0]
    error = PipelineError("cannot connect to jdbc:postgresql://h2/db?password=url-pw-55 with jdbc-pw-777 "
                          "(fs.s3a key s3cr3t-literal)", pipeline=p.task_id)
    failed = PipelineMetrics.failed(p, "r", 1, "s", error, log="/w/x.log", note="token tok-123456")
    d = failed.redacted(secret_values(plan)).to_dict()
    text = json.dumps(d)
    assert not [s for s in SECRETS if s in text]
    assert d["error"]["message"] == "cannot connect to jdbc:postgresql://h2/db?password=****** with ****** (fs.s3a key ******)"
    assert d["log"] == "/w/x.log"


def test_scrub_leaves_short_values_alone():
    assert scrub("user ab logged in as abcdef", ["ab", "abcdef"]) == "user ab logged in as ******"


def test_hidden_finds_every_redacted_leaf():
    full = {"a": {"password": "p1", "n": 1}, "l": [{"token": "t1"}], "url": "x://u:pw@h"}
    shown = {"a": {"password": REDACTED, "n": 1}, "l": [{"token": REDACTED}], "url": "x://u:******@h"}
    assert list(hidden(full, shown)) == [(("a", "password"), "p1"), (("l", 0, "token"), "t1"), (("url",), "x://u:pw@h")]


def test_the_hook_submits_no_setting_on_argv_and_masks_env_secrets(tmp_path, monkeypatch):
    from airflow.sdk.log import redact

    from airflow_provider_seatunnel.hooks.seatunnel import SeaTunnelHook

    monkeypatch.setenv("AIRFLOW_CONN_SPARK_T", json.dumps({"conn_type": "spark", "host": "local[1]"}))
    hook = SeaTunnelHook(JOB, format="hocon", spark_conn_id="spark_t",
                         spark_submit_kwargs={"conf": {"spark.executor.cores": "1"}})
    try:
        hook.mask_secrets()
        for secret in ("s3cr3t-literal", "tok-123456", "trust-pw-1", "opt-tok-987", "jdbc-pw-777"):
            assert secret not in redact(f"the value is {secret}"), secret
        spark_hook = hook.spark_submit_hook(run_id="r", attempt=1)
        cmd = spark_hook._build_spark_submit_command(str(tmp_path / "app.py"))
        line = " ".join(cmd)
        assert not [s for s in SECRETS if s in line] and "spark.ui.enabled" not in line
        assert "spark.executor.cores=1" in line  # the caller's own --conf, as given
        props = cmd[cmd.index("--properties-file") + 1]
        assert stat.S_IMODE(os.stat(props).st_mode) == 0o600
        assert "spark.hadoop.fs.s3a.secret.key s3cr3t-literal" in Path(props).read_text().splitlines()
        p = hook.pipeline()
        PipelineMetrics.failed(p, "r", 1, "s", PipelineError("bad key s3cr3t-literal")).write(hook.metrics_file(p, 1))
        metrics = hook.pipeline_metrics(None, "r", 1, "s")
        assert metrics.message == f"bad key {REDACTED}"
    finally:
        hook.cleanup()


@pytest.mark.parametrize("existed", [True, False])
def test_work_dir_removal_takes_only_what_the_run_created(tmp_path, plan_of, existed):
    plan = plan_of(JOB)
    given = tmp_path / "shared" if existed else tmp_path / "new" / "deeper" / "work"
    if existed:
        given.mkdir()
        (given / "theirs.txt").write_text("keep me")
        os.chmod(given, 0o1777)
    work = WorkDir.open(given)
    assert work.created == (() if existed else (tmp_path / "new", tmp_path / "new" / "deeper", given))
    plan_file = write_plan_file(plan, work.path)
    for f in work.run_files(plan.pipelines)[1:]:
        f.write_text("x")
    assert plan_file.exists()
    work.remove(plan.pipelines)
    if existed:
        assert sorted(x.name for x in given.iterdir()) == ["theirs.txt"]
        assert stat.S_IMODE(given.stat().st_mode) == 0o1777
    else:
        assert not (tmp_path / "new").exists() and tmp_path.exists()


def test_openlineage_transport_credentials_are_masked_and_hidden_from_spark(tmp_path, monkeypatch):
    from airflow.sdk.log import redact

    from airflow_provider_seatunnel.hooks.seatunnel import SeaTunnelHook

    monkeypatch.setenv("AIRFLOW_CONN_SPARK_T", json.dumps({"conn_type": "spark", "host": "local[1]"}))
    hook = SeaTunnelHook(JOB, format="hocon", spark_conn_id="spark_t")
    try:
        hook.spark_submit_hook(run_id="r", attempt=1)
        hook.add_spark_conf({"spark.openlineage.transport.type": "http",
                             "spark.openlineage.transport.auth.type": "api_key",
                             "spark.openlineage.transport.auth.apiKey": "ol-key-31337",
                             "spark.openlineage.transport.transports.r.headers.X-Token": "hdr-secret-4242"})
        for secret in ("ol-key-31337", "hdr-secret-4242"):
            assert secret not in redact(f"the value is {secret}"), secret
        assert "api_key" in redact("auth type api_key")  # the auth type is not a secret
        cmd = hook.spark_hook._build_spark_submit_command(str(tmp_path / "app.py"))
        assert "ol-key-31337" not in " ".join(cmd)
        props = Path(cmd[cmd.index("--properties-file") + 1]).read_text().splitlines()
        assert "spark.openlineage.transport.auth.apiKey ol-key-31337" in props
        regex = next(line.split(" ", 1)[1] for line in props if line.startswith("spark.redaction.regex "))
        pattern = re.compile(regex)
        assert pattern.search("spark.openlineage.transport.auth.apiKey")
        assert pattern.search("spark.openlineage.transport.transports.r.headers.X-Token")
        assert pattern.search("spark.hadoop.fs.s3a.secret.key")  # Spark's own rule is kept
        assert not pattern.search("spark.openlineage.transport.auth.type")
    finally:
        hook.cleanup()


MODEL_JOB = """
source { FakeSource { plugin_output = "t", row.num = 1, schema = { fields { id = bigint, name = string } } } }
transform {
  LLM { plugin_input = "t", plugin_output = "l", model_provider = OPENAI, model = "gpt-4o-mini",
        api_key = "sk-llm-key-31337", prompt = "p" }
  Embedding { plugin_input = "l", plugin_output = "e", model_provider = CUSTOM, model = m, api_path = "http://h/e",
              vectorization_fields { v = name },
              custom_config { custom_response_parse = "$.data[*].embedding", custom_request_body { input = ["${input}"] },
                              custom_request_headers { Authorization = "Bearer emb-hdr-4242" } } }
}
sink { InMemory { plugin_input = "e" } }
"""
MODEL_SECRETS = ("sk-llm-key-31337", "emb-hdr-4242")


def test_model_api_keys_and_auth_headers_stay_out_of_plans_and_task_ids(write_conf, plan_of, capsys, tmp_path):
    """The LLM's ``api_key`` and a CUSTOM model's ``Authorization`` header (nested in ``custom_config``) are
    hidden in the plan's JSON and text, leave task ids alone, and are scrubbed from logs and metrics."""
    path = str(write_conf(MODEL_JOB))
    for fmt in ("json", "text"):
        assert main(["plan", path, "--format", fmt, "--no-cache"]) == 0
        assert not [s for s in MODEL_SECRETS if s in capsys.readouterr().out]
    plan = plan_of(MODEL_JOB)
    assert set(MODEL_SECRETS) <= {s for v in secret_values(plan) for s in MODEL_SECRETS if s in str(v)}
    assert all(s in write_plan_file(plan, tmp_path / "work").read_text() for s in MODEL_SECRETS)
    rotated = plan_of(MODEL_JOB.replace("sk-llm-key-31337", "sk-llm-key-rotated").replace("emb-hdr-4242", "emb-new"))
    assert [p.task_id for p in rotated.pipelines] == [p.task_id for p in plan.pipelines]
    assert scrub("failed with sk-llm-key-31337 and Bearer emb-hdr-4242", secret_values(plan)).count("sk-llm") == 0
