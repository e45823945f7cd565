"""OssFile, CosFile and ObsFile at compile time: each plugin's own options plan and validate, the
options SeaTunnel requires of each, the bucket's scheme, located errors naming the plugin,
credentials kept out of plans, and what an Airflow connection of type aws gives each."""

from __future__ import annotations

import json

import pytest

from airflow_provider_seatunnel.cli import main
from airflow_provider_seatunnel.connectors.objectstores import cosfile, obsfile, ossfile
from airflow_provider_seatunnel.connectors.objectstores.stores import COS, OBS, OSS, settings
from airflow_provider_seatunnel.spi import ConnectionInfo, KnownPlugin, get_connector

SECRET = "store-secret-value-4b7e"
KEY_ID = "STORE-KEY-ID-31d9"
STORE = {
    "OssFile": f'bucket = "oss://my-bucket", endpoint = "oss-cn-hangzhou.aliyuncs.com", access_key = "{KEY_ID}", '
               f'access_secret = "{SECRET}"',
    "CosFile": f'bucket = "cosn://my-bucket-1250000000", region = "ap-guangzhou", secret_id = "{KEY_ID}", '
               f'secret_key = "{SECRET}"',
    "ObsFile": f'bucket = "obs://my-bucket", endpoint = "obs.cn-north-4.myhuaweicloud.com", access_key = "{KEY_ID}", '
               f'access_secret = "{SECRET}"',
}
FAKE = 'FakeSource { plugin_output = "f", schema = { fields { id = int, name = string } } }'


def job(plugin: str, sink_options: str, source_options: str | None = None) -> str:
    source = f'{plugin} {{ plugin_output = "f", {source_options} }}' if source_options else FAKE
    return f"""env {{ job.mode = BATCH }}
source {{ {source} }}
sink {{
  {plugin} {{ plugin_input = "f",
    {sink_options} }}
}}
"""


@pytest.mark.parametrize("plugin", sorted(STORE))
def test_a_complete_job_of_each_plugin_plans_validates_and_keeps_credentials_out(plugin, write_conf, plan_of,
                                                                                 capsys):
    text = job(plugin, f'{STORE[plugin]}, path = "/out", file_format_type = "parquet"',
               f'{STORE[plugin]}, path = "/in", file_format_type = "csv", schema = {{ fields {{ id = int, '
               'name = string } }')
    plan = plan_of(text)
    assert not plan.warnings
    connector = get_connector(plugin.lower())
    assert not isinstance(connector, KnownPlugin) and connector.can_run("source") and connector.can_run("sink")
    path = str(write_conf(text))
    assert main(["plan", path, "--format", "json", "--no-cache"]) == 0
    out = capsys.readouterr().out
    assert SECRET not in out and KEY_ID not in out
    sink = json.loads(out)["pipelines"][0]["vertices"][-1]["config"]
    assert sink["bucket"] == STORE[plugin].split('"')[1] and sink["path"] == "/out"
    assert main(["validate", path]) == 0
    assert SECRET not in capsys.readouterr().out
    assert SECRET not in json.dumps(plan.to_dict()) and KEY_ID not in " ".join(p.task_id for p in plan.pipelines)


@pytest.mark.parametrize("plugin, options, key, message", [
    ("OssFile", 'path = "/o", file_format_type = "csv", endpoint = "oss-cn-hangzhou.aliyuncs.com", '
                'access_key = "k", access_secret = "s"', "bucket", "the option 'bucket' is required"),
    ("OssFile", f'{STORE["OssFile"]}, path = "/o", file_format_type = "csv", bucket = "s3a://my-bucket"', "bucket",
     "bucket 's3a://my-bucket' is not an OssFile bucket URI (oss://<bucket name>)"),
    ("CosFile", f'{STORE["CosFile"]}, path = "/o", file_format_type = "csv", bucket = "cos://b-1250000000"',
     "bucket", "is not an CosFile bucket URI (cosn://<bucket name>)"),
    ("ObsFile", f'{STORE["ObsFile"]}, path = "/o", file_format_type = "csv", bucket = "my-bucket"', "bucket",
     "is not an ObsFile bucket URI (obs://<bucket name>)"),
    ("OssFile", 'bucket = "oss://b", path = "/o", file_format_type = "csv", access_key = "k", access_secret = "s"',
     "endpoint", "the option 'endpoint' is required by OssFile"),
    ("OssFile", 'bucket = "oss://b", path = "/o", file_format_type = "csv", endpoint = "e.com", access_key = "k"',
     "access_secret", "the option 'access_secret' is required by OssFile"),
    ("CosFile", 'bucket = "cosn://b", path = "/o", file_format_type = "csv", secret_id = "i", secret_key = "k"',
     "region", "the option 'region' is required by CosFile"),
    ("CosFile", 'bucket = "cosn://b", path = "/o", file_format_type = "csv", region = "ap-beijing", secret_key = "k"',
     "secret_id", "the option 'secret_id' is required by CosFile"),
    ("ObsFile", 'bucket = "obs://b", path = "/o", file_format_type = "csv", endpoint = "e.com", access_secret = "s"',
     "access_key", "the option 'access_key' is required by ObsFile"),
    ("ObsFile", f'{STORE["ObsFile"]}, path = "/o", file_format_type = "csv", endpoint = "ftp://obs.example.com"',
     "endpoint", "endpoint 'ftp://obs.example.com' is not a host or an http(s) URL"),
    ("CosFile", f'{STORE["CosFile"]}, path = "/a/../b", file_format_type = "csv"', "path", "may not hold '.' or '..'"),
    ("ObsFile", f'{STORE["ObsFile"]}, file_format_type = "csv"', "path", "the option 'path' is required"),
    ("OssFile", f'{STORE["OssFile"]}, path = "/o", file_format_type = "cvs"', "file_format_type",
     "unknown file_format_type 'cvs'"),
])
def test_bad_sink_options_fail_at_their_line_naming_the_plugin(config_error, plugin, options, key, message):
    error = config_error(job(plugin, options))
    problem = error.problems[0]
    assert message in problem.message, problem.message
    assert "S3File" not in problem.message and "S3File" not in (problem.hint or "")
    assert problem.key == key and problem.plugin.endswith(plugin) and problem.file and problem.line is not None
    assert SECRET not in str(error)


def test_each_source_requires_what_seatunnel_requires(config_error, plan_of):
    csv = 'path = "/in", file_format_type = "csv", schema = { fields { id = int } }'
    plan_of(job("OssFile", f'{STORE["OssFile"]}, path = "/o", file_format_type = "csv"',
                f'bucket = "oss://b", endpoint = "oss-cn-beijing.aliyuncs.com", {csv}'))  # the OSS source's keys are optional
    for plugin, options, missing in [
            ("OssFile", f'bucket = "oss://b", access_key = "k", {csv}', "endpoint"),
            ("OssFile", f'bucket = "oss://b", endpoint = "e.com", access_key = "k", {csv}', "access_secret"),
            ("CosFile", f'bucket = "cosn://b", region = "ap-beijing", secret_id = "i", {csv}', "secret_key"),
            ("ObsFile", f'bucket = "obs://b", access_key = "k", access_secret = "s", {csv}', "endpoint")]:
        problem = config_error(job(plugin, f'{STORE[plugin]}, path = "/o", file_format_type = "csv"',
                                   options)).problems[0]
        assert problem.key == missing and problem.plugin == f"source[0] {plugin}", problem


def test_an_aws_connection_stands_for_the_keys_and_the_endpoint(plan_of):
    plan = plan_of(job("ObsFile", 'bucket = "obs://b", path = "/o", file_format_type = "csv", aws_conn_id = "obs"'))
    assert not plan.warnings
    conn = ConnectionInfo("c", "aws", login="AK", password="SK", extra={
        "endpoint_url": "http://127.0.0.1:9000", "region_name": "eu-west-1", "aws_session_token": "TOKEN-1"})
    for connector, key_id, secret in ((ossfile.CONNECTOR, "access_key", "access_secret"),
                                      (cosfile.CONNECTOR, "secret_id", "secret_key"),
                                      (obsfile.CONNECTOR, "access_key", "access_secret")):
        assert connector.connection_option == "aws_conn_id"
        assert connector.connection_options(conn) == {key_id: "AK", secret: "SK", "endpoint": "http://127.0.0.1:9000",
                                                      "region": "eu-west-1", "aws_session_token": "TOKEN-1"}
        assert connector.takes_default_connection({"bucket": "x"}) and not connector.takes_default_connection(
            {key_id: "k"})
        assert {key_id, secret} <= connector.secrets


def test_a_path_after_the_bucket_name_is_ignored_with_a_warning(plan_of):
    plan = plan_of(job("ObsFile", f'{STORE["ObsFile"]}, bucket = "obs://dc/seatunnel-test", path = "/o", '
                                  'file_format_type = "parquet"'))
    (warning,) = plan.warnings
    assert warning["severity"] == "warning" and "'/seatunnel-test' after the bucket name is ignored" in warning["message"]


def test_each_store_maps_onto_its_s3_api_and_names_its_assets():
    oss = settings(OSS, {"bucket": "oss://b", "path": "/x/y/", "endpoint": "oss-cn-hangzhou-internal.aliyuncs.com"})
    assert (oss.bucket, oss.prefix, oss.endpoint, oss.region, oss.path_style, oss.provider) == (
        "b", "x/y", "https://s3.oss-cn-hangzhou-internal.aliyuncs.com", "cn-hangzhou", False, None)
    cos = settings(COS, {"bucket": "cosn://b-125", "path": "/p", "region": "ap-chengdu", "secret_id": "i",
                         "secret_key": "sekrit-k"})
    assert (cos.endpoint, cos.region, cos.access_key, cos.secret_key) == (
        "https://cos.ap-chengdu.myqcloud.com", "ap-chengdu", "i", "sekrit-k")
    obs = settings(OBS, {"bucket": "obs://b", "path": "/p", "endpoint": "http://127.0.0.1:9000",
                         "hadoop_s3_properties": {"fs.s3a.connection.maximum": "9"}})
    assert (obs.endpoint, obs.path_style, obs.properties) == ("http://127.0.0.1:9000", True,
                                                              {"fs.s3a.connection.maximum": "9"})
    assert "sekrit" not in repr(cos) and cos.traits.plugin == "CosFile" and not cos.traits.sdk_checksums
    assert ossfile.CONNECTOR.assets({"bucket": "oss://b", "path": "/x/y"}) == ["oss://b/x/y"]
    assert cosfile.CONNECTOR.assets({"bucket": "cosn://b-1", "path": "/x"}) == ["cosn://b-1/x"]
