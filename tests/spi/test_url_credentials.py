"""Credentials in URLs are masked by their shape (user info, Oracle's ``user/password@``, any
credential-like parameter name), in plan JSON, errors, metrics and asset URIs; identifiers such as
task ids come from the masked identity, so they neither change with nor reveal a credential."""

from __future__ import annotations

import json
from urllib.parse import quote

import pytest

from airflow_provider_seatunnel.cli import main
from airflow_provider_seatunnel.operators.lineage import pipeline_assets
from airflow_provider_seatunnel.runtime.launcher import secret_values
from airflow_provider_seatunnel.runtime.metrics import PipelineMetrics
from airflow_provider_seatunnel.spi.errors import PipelineError
from airflow_provider_seatunnel.spi.secrets import REDACTED, mask_credentials, public_uri

VALUE = "Kx9-v4lue-Qz"
WORDS = ("password", "passwd", "pwd", "sslpassword", "token", "access_token", "refresh_token", "secret",
         "client_secret", "api_key", "apikey", "sig", "signature", "credential", "credentials", "auth",
         "private_key", "session_token", "X-Amz-Signature", "X-Amz-Credential", "X-Amz-Security-Token",
         "accessKey", "access.key", "fs.s3a.secret.key")
SHAPES = ("https://h.example/p?a=1&{name}={value}&b=2", "https://h.example/p?{name}={value}",
          "jdbc:sqlserver://h:1433;databaseName=d;{name}={value};encrypt=true",
          "jdbc:mysql://h:3306/d?useSSL=false&{name}={value}", "host=h {name}={value} port=5432")


def _cases(name: str) -> list[str]:
    return [name, name.upper(), name.title(), quote(name, safe=""), "".join(f"%{ord(c):02X}" for c in name)]


@pytest.mark.parametrize("word", WORDS)
@pytest.mark.parametrize("shape", SHAPES)
def test_every_credential_like_parameter_is_masked_in_every_url_shape(word, shape):
    for name in _cases(word):
        shown = mask_credentials(shape.format(name=name, value=VALUE))
        assert VALUE not in shown and f"{name}={REDACTED}" in shown, shown


@pytest.mark.parametrize("url", ["jdbc:mysql://h:3306/d?useSSL=false&characterEncoding=utf8",
                                 "jdbc:sqlserver://h:1433;databaseName=d;encrypt=true", "hdfs://nn:8020/a/b=c",
                                 "jdbc:oracle:thin:@//h:1521/svc", "s3a://bucket/k?versionId=3", "sftp://etl@h/in"])
def test_a_url_without_credentials_is_unchanged(url):
    assert mask_credentials(url) == public_uri(url) == url


@pytest.mark.parametrize("url, shown, public", [
    (f"s3a://AKIAKEY:{VALUE}@bucket/k", f"s3a://AKIAKEY:{REDACTED}@bucket/k", "s3a://bucket/k"),
    (f"postgresql://u:{VALUE}@h:5432/d", f"postgresql://u:{REDACTED}@h:5432/d", "postgresql://h:5432/d"),
    (f"https://u:a%40b{VALUE}@h/x", f"https://u:{REDACTED}@h/x", "https://h/x"),
    (f"redis://:{VALUE}@h:6379/0", f"redis://:{REDACTED}@h:6379/0", "redis://h:6379/0"),
    (f"jdbc:oracle:thin:scott/{VALUE}@//h:1521/svc", f"jdbc:oracle:thin:scott/{REDACTED}@//h:1521/svc",
     "jdbc:oracle:thin:@//h:1521/svc"),
    (f"jdbc:oracle:thin:Scott/{VALUE}@h:1521:orcl", f"jdbc:oracle:thin:Scott/{REDACTED}@h:1521:orcl",
     "jdbc:oracle:thin:@h:1521:orcl"),
])
def test_user_info_is_masked_and_left_out_of_public_names(url, shown, public):
    assert mask_credentials(url) == shown
    assert public_uri(url) == public


def test_an_s3_bucket_with_keys_names_its_asset_without_them(plan_of):
    plan = plan_of(f"""
    source {{ FakeSource {{ plugin_output = "t", row.num = 1, schema = {{ fields {{ id = bigint }} }} }} }}
    sink {{ S3File {{ plugin_input = "t", bucket = "s3a://AKIAKEY:{VALUE}@my-bucket", path = "/out",
                      file_format_type = "json" }} }}
    """)
    _, outlets = pipeline_assets(plan.pipelines[0])
    names = [text for a in outlets if hasattr(a, "uri") for text in (a.uri, a.name, str(a))]
    assert names and not [n for n in names if VALUE in n or "AKIAKEY" in n], names


JDBC = """
source {{ FakeSource {{ plugin_output = "t", row.num = 1, schema = {{ fields {{ id = bigint }} }} }} }}
sink {{ Jdbc {{ plugin_input = "t", url = "{url}", driver = "org.postgresql.Driver",
               generate_sink_sql = true, table = "x" }} }}
"""
PG = "jdbc:postgresql://{host}:5432/db?sslmode=require&sslpassword={pw}&user=loader&password={pw}"


def test_plan_json_masks_the_credentials_of_a_jdbc_url(write_conf, capsys):
    path = str(write_conf(JDBC.format(url=PG.format(host="db1", pw=VALUE))))
    assert main(["plan", path, "--format", "json", "--no-cache"]) == 0
    out = capsys.readouterr().out
    assert VALUE not in out
    sink = json.loads(out)["pipelines"][0]["vertices"][-1]["config"]
    assert sink["url"] == f"jdbc:postgresql://db1:5432/db?sslmode=require&sslpassword={REDACTED}" \
                          f"&user={REDACTED}&password={REDACTED}"


def test_an_error_naming_a_url_is_masked_in_metrics(plan_of):
    plan = plan_of(JDBC.format(url=PG.format(host="db1", pw="p")))
    p = plan.pipelines[0]
    error = PipelineError(f"cannot reach https://api.example/v1?access_token={VALUE}&X-Amz-Signature=abc123 "
                          f"nor jdbc:oracle:thin:scott/{VALUE}@//h:1521/s", pipeline=p.task_id)
    text = json.dumps(PipelineMetrics.failed(p, "r", 1, "s", error).redacted(secret_values(plan)).to_dict())
    assert VALUE not in text and "abc123" not in text


def test_a_task_id_neither_changes_with_nor_reveals_a_url_password(plan_of):
    """Two configs differing only in the password share the task id (so it cannot be searched for
    the password); differing in the host they do not."""
    first = plan_of(JDBC.format(url=PG.format(host="db1", pw=VALUE))).pipelines[0].task_id
    assert plan_of(JDBC.format(url=PG.format(host="db1", pw="another-pw"))).pipelines[0].task_id == first
    assert plan_of(JDBC.format(url=PG.format(host="db2", pw=VALUE))).pipelines[0].task_id != first
    oracle = "jdbc:oracle:thin:scott/{pw}@//{host}:1521/svc"
    first = plan_of(JDBC.format(url=oracle.format(host="db1", pw=VALUE))).pipelines[0].task_id
    assert plan_of(JDBC.format(url=oracle.format(host="db1", pw="other"))).pipelines[0].task_id == first
    assert plan_of(JDBC.format(url=oracle.format(host="db2", pw=VALUE))).pipelines[0].task_id != first


def test_a_checkpoint_key_neither_changes_with_nor_reveals_a_url_password(plan_of):
    """The name of a source's or sink's state (its checkpoint directory) comes from the masked
    identity too."""
    from airflow_provider_seatunnel.runtime.context import vertex_key

    def key(host: str, pw: str) -> str:
        p = plan_of(JDBC.format(url=PG.format(host=host, pw=pw))).pipelines[0]
        return vertex_key(p, p.sinks[0])

    assert key("db1", VALUE) == key("db1", "another-pw") != key("db2", VALUE)
