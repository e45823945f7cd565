"""FtpFile and SftpFile at compile time: runnable jobs, located errors of the server and file
options, passwords kept out of plans, and what Airflow connections of type ftp and sftp give."""

from __future__ import annotations

import json

import pytest

from airflow_provider_seatunnel.cli import main
from airflow_provider_seatunnel.spi import ConnectionInfo, get_connector

SECRET = "ftp-secret-value-51c2"
SERVER = f'host = "files.example.com", port = 2121, user = "etl", password = "{SECRET}"'
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


@pytest.mark.parametrize("plugin", ["FtpFile", "SftpFile"])
def test_a_complete_job_plans_and_keeps_the_password_out_of_the_plan(plugin, write_conf, plan_of, capsys):
    mode = ', connection_mode = "passive_local"' if plugin == "FtpFile" else ""
    text = job(plugin, f'{SERVER}{mode}, path = "/out", file_format_type = "orc", data_save_mode = "DROP_DATA"',
               f'{SERVER}, path = "/in", file_format_type = "csv", compress_codec = "lzo", '
               'schema = { fields { id = int, name = string } }')
    plan = plan_of(text)
    assert not plan.warnings
    connector = get_connector(plugin.lower())
    assert connector is not None and connector.name == plugin
    assert connector.can_run("source") and connector.can_run("sink")
    path = str(write_conf(text))
    assert main(["plan", path, "--format", "json", "--no-cache"]) == 0
    out = capsys.readouterr().out
    assert SECRET not in out
    sink = json.loads(out)["pipelines"][0]["vertices"][-1]["config"]
    assert sink["host"] == "files.example.com" and sink["path"] == "/out"
    assert main(["validate", path]) == 0
    assert SECRET not in json.dumps(plan.to_dict())


@pytest.mark.parametrize("plugin, options, key, message", [
    ("FtpFile", 'port = 21, user = "u", password = "p", path = "/o", file_format_type = "csv"', "host",
     "the option 'host' is required"),
    ("SftpFile", 'host = "h", port = 22, user = "u", path = "/o", file_format_type = "csv"', "password",
     "the option 'password' is required"),
    ("FtpFile", f'{SERVER}, port = 70000, path = "/o", file_format_type = "csv"', "port", "is not a TCP port"),
    ("FtpFile", f'{SERVER}, path = "/o", file_format_type = "csv", connection_mode = "passive"', "connection_mode",
     "unknown connection_mode 'passive'"),
    ("SftpFile", f'{SERVER}, path = "/a/../b", file_format_type = "csv"', "path", "may not hold '.' or '..'"),
    ("SftpFile", f'{SERVER}, file_format_type = "csv"', "path", "the option 'path' is required"),
    ("FtpFile", f'{SERVER}, path = "/o", file_format_type = "cvs"', "file_format_type",
     "unknown file_format_type 'cvs'"),
    ("SftpFile", f'{SERVER}, path = "/o", file_format_type = "csv", host_key_fingerprint = "ab:cd:ef"',
     "host_key_fingerprint", "is not a SHA256 fingerprint"),
    ("SftpFile", f'{SERVER}, path = "/o", file_format_type = "csv", strict_host_key_checking = "maybe"',
     "strict_host_key_checking", "must be true or false"),
])
def test_located_errors(plugin, options, key, message, config_error):
    error = config_error(job(plugin, options))
    found = [p for p in error.problems if p.key == key]
    assert found, [p.format() for p in error.problems]
    assert message in found[0].message
    assert found[0].plugin == f"sink[0] {plugin}" and found[0].line


def test_a_connection_supplies_the_server_and_credentials(plan_of):
    """With ftp_conn_id/sftp_conn_id, host, user and password may come from the connection."""
    plan = plan_of(job("SftpFile", 'sftp_conn_id = "files", path = "/o", file_format_type = "json"'))
    assert not plan.warnings
    sftp = get_connector("SftpFile")
    got = sftp.connection_options(ConnectionInfo("files", "sftp", host="h", port=2222, login="etl",
                                                 password="pw", extra={"key_file": "/keys/id"}))
    assert got == {"host": "h", "port": 2222, "user": "etl", "password": "pw", "key_file": "/keys/id"}
    got = sftp.connection_options(ConnectionInfo("files", "sftp", host="h", login="etl", password="pw",
                                                 extra={"host_key": "AAAAE2Vj", "no_host_key_check": "False"}))
    assert got["host_key"] == "AAAAE2Vj" and got["no_host_key_check"] == "false"
    ftp = get_connector("FtpFile")
    got = ftp.connection_options(ConnectionInfo("files", "ftp", host="h", login="etl", password="pw",
                                                extra={"passive": True}))
    assert got == {"host": "h", "user": "etl", "password": "pw", "connection_mode": "passive_local"}
    assert not ftp.takes_default_connection({"host": "h", "path": "/o"})
    assert ftp.takes_default_connection({"path": "/o"})


def test_secrets_are_the_password_and_private_key():
    for name in ("FtpFile", "SftpFile"):
        connector = get_connector(name)
        assert {"password", "private_key"} <= set(connector.secrets)


def test_a_file_server_s_asset_is_its_uri_unnamed_while_a_placeholder_stays():
    sftp, ftp, hdfs, oss = (get_connector(n) for n in ("SftpFile", "FtpFile", "HdfsFile", "OssFile"))
    assert sftp.assets({"host": "h", "path": "/data/out/"}) == ["sftp://h:22/data/out"]  # the scheme's port
    assert ftp.assets({"host": "h", "port": 2121, "path": "out"}) == ["ftp://h:2121/out"]
    assert hdfs.assets({"fs.defaultFS": "hdfs://nn:8020/", "path": "/w/t"}) == ["hdfs://nn:8020/w/t"]
    assert ftp.assets({"path": "/out"}) == [] and hdfs.assets({"fs.defaultFS": "hdfs://nn"}) == []
    (unnamed,) = sftp.assets({"host": "h", "path": "/out/${table_name}"})
    assert not isinstance(unnamed, str) and "${table_name}" in unnamed.target
    assert oss.assets({"bucket": "not a bucket", "path": "/x"}) == []  # a bucket it cannot read names nothing
