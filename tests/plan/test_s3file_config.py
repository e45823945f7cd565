"""S3File at compile time: a runnable job, located errors of the S3 and file options, credentials
kept out of plans, and what an Airflow connection of type aws gives."""

from __future__ import annotations

import json

import pytest

from airflow_provider_seatunnel.cli import main
from airflow_provider_seatunnel.connectors.s3file import CONNECTOR
from airflow_provider_seatunnel.spi import ConnectionInfo, get_connector

SECRET = "s3-secret-value-9d1e"
ACCESS = "AKIA-TEST-ACCESS-77"
S3 = (f'bucket = "s3a://my-bucket", fs.s3a.endpoint = "http://127.0.0.1:9000", '
      f'fs.s3a.aws.credentials.provider = "org.apache.hadoop.fs.s3a.SimpleAWSCredentialsProvider", '
      f'access_key = "{ACCESS}", access_secret = "{SECRET}"')
FAKE = 'FakeSource { plugin_output = "f", schema = { fields { id = int, name = string } } }'


def job(sink_options: str, source_options: str | None = None) -> str:
    source = f"S3File {{ plugin_output = \"f\", {source_options} }}" if source_options else FAKE
    return f"""env {{ job.mode = BATCH }}
source {{ {source} }}
sink {{
  S3File {{ plugin_input = "f",
    {sink_options} }}
}}
"""


def test_a_complete_s3file_job_plans_runs_and_keeps_credentials_out_of_the_plan(write_conf, plan_of, capsys):
    text = job(f'{S3}, path = "/out", file_format_type = "parquet", data_save_mode = "DROP_DATA",\n'
               '    hadoop_s3_properties { "fs.s3a.connection.maximum" = "20", "fs.s3a.secret.key" = "hidden-too" }',
               f'{S3}, path = "/in", file_format_type = "csv", schema = {{ fields {{ id = int, name = string }} }}')
    plan = plan_of(text)
    assert not plan.warnings
    assert get_connector("S3File") is CONNECTOR and CONNECTOR.can_run("sink") and CONNECTOR.can_run("source")
    path = str(write_conf(text))
    assert main(["plan", path, "--format", "json", "--no-cache"]) == 0
    out = capsys.readouterr().out
    assert SECRET not in out and ACCESS not in out and "hidden-too" not in out
    sink = json.loads(out)["pipelines"][0]["vertices"][-1]["config"]
    assert sink["bucket"] == "s3a://my-bucket" and sink["path"] == "/out"
    assert main(["validate", path]) == 0
    assert SECRET not in capsys.readouterr().out
    assert SECRET not in json.dumps(plan.to_dict()) and SECRET not in " ".join(p.task_id for p in plan.pipelines)


@pytest.mark.parametrize("options, key, message", [
    ('path = "/out", file_format_type = "csv", fs.s3a.endpoint = "http://h:1"', "bucket",
     "the option 'bucket' is required"),
    (f'{S3}, path = "/out", file_format_type = "csv", bucket = "hdfs://nn/x"', "bucket",
     "is not an S3 bucket URI"),
    (f'{S3}, path = "/a/../b", file_format_type = "csv"', "path", "may not hold '.' or '..'"),
    (f'{S3}, file_format_type = "csv"', "path", "the option 'path' is required"),
    (f'{S3}, path = "/out"', "file_format_type", "the option 'file_format_type' is required"),
    (f'{S3}, path = "/out", file_format_type = "cvs"', "file_format_type", "unknown file_format_type 'cvs'"),
    (f'{S3}, path = "/out", file_format_type = "csv", compress_codec = "zip"', "compress_codec",
     "unknown compress_codec 'zip'"),
    (f'{S3}, path = "/out", file_format_type = "csv", data_save_mode = "DROP"', "data_save_mode",
     "unknown data_save_mode 'DROP'"),
    ('bucket = "s3a://b", path = "/o", file_format_type = "csv", '
     'fs.s3a.aws.credentials.provider = "org.apache.hadoop.fs.s3a.SimpleAWSCredentialsProvider", '
     'access_key = "k"', "secret_key", "the option 'secret_key' is required"),
    ('bucket = "s3a://b", path = "/o", file_format_type = "csv", secret_key = "x"', "access_key",
     "'access_key' is missing"),
    ('bucket = "s3a://b", path = "/o", file_format_type = "csv", access_secret = "x"', "access_key",
     "'access_key' is missing"),
    (f'{S3}, path = "/out", file_format_type = "csv", hadoop_s3_properties = "fs.s3a.x=1"',
     "hadoop_s3_properties", "must be a map"),
])
def test_bad_options_fail_at_their_line(config_error, options, key, message):
    error = config_error(job(options))
    problem = error.problems[0]
    assert message in problem.message, problem.message
    assert problem.key == key and problem.plugin.endswith("S3File") and problem.file and problem.line is not None
    assert SECRET not in str(error)


def test_an_aws_connection_gives_the_credentials_and_the_endpoint():
    conn = ConnectionInfo("s3", "aws", login="AK", password="SK",
                          extra={"endpoint_url": "http://minio:9000", "region_name": "eu-west-1"})
    assert CONNECTOR.connection_options(conn) == {"access_key": "AK", "secret_key": "SK",
                                                  "fs.s3a.endpoint": "http://minio:9000", "region": "eu-west-1"}
    nested = ConnectionInfo("s3", "aws", extra={"service_config": {"s3": {"endpoint_url": "http://s3.local"}}})
    assert CONNECTOR.connection_options(nested) == {"fs.s3a.endpoint": "http://s3.local"}
    assert CONNECTOR.takes_default_connection({"bucket": "s3a://b"})
    assert not CONNECTOR.takes_default_connection({"access_key": "x"})
    assert CONNECTOR.assets({"bucket": "s3a://b", "path": "/x/y"}) == ["s3://b/x/y"]
