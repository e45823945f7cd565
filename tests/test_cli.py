"""The command line: exit codes, output formats, no tracebacks for config errors."""

from __future__ import annotations

import json
import subprocess
import sys

from airflow_provider_seatunnel.cli import main

from .conftest import ROOT

GOOD = """
env { job.name = "cli_job" }
source { FakeSource { schema = { fields { a = int, b = string, x = int, id = bigint, k = string, name = string } }, plugin_output = "a" } FakeSource { schema = { fields { a = int, b = string, x = int, id = bigint, k = string, name = string } }, plugin_output = "b" } }
transform { Sql { plugin_input = ["a", "b"], plugin_output = "t", query = "select * from this" } }
sink { Console { plugin_input = "t" } }
"""
BAD = """source {
  FakeSource { schema = { fields { a = int, b = string, x = int, id = bigint, k = string, name = string } }, plugin_output = "a" }
}
sink {
  Console { plugin_input = "b" }
}
"""


def test_validate_ok(write_conf, capsys):
    assert main(["validate", str(write_conf(GOOD))]) == 0
    assert "valid (2 pipelines)" in capsys.readouterr().out


def test_validate_reports_every_error_and_exits_2(write_conf, capsys):
    path = write_conf(BAD)
    assert main(["validate", str(path)]) == 2
    err = capsys.readouterr().err
    assert f"{path}:5: sink[0] Console: option 'plugin_input': 'b' names no source or transform output" in err
    assert "read by nobody" in err


def test_validate_json(write_conf, capsys):
    assert main(["validate", str(write_conf(BAD)), "--format", "json"]) == 2
    doc = json.loads(capsys.readouterr().out)
    assert doc["valid"] is False and len(doc["errors"]) == 2
    assert {e["line"] for e in doc["errors"]} == {2, 5}


def test_validate_fails_on_plugins_that_cannot_run(write_conf, capsys):
    path = write_conf("source { Kafka { } }\nsink { Console { } }\n")
    assert main(["validate", str(path)]) == 2
    assert "cannot run" in capsys.readouterr().err
    assert main(["plan", str(path)]) == 0


def test_plan_json_contract(write_conf, capsys):
    assert main(["plan", str(write_conf(GOOD)), "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["job"]["name"] == "cli_job" and doc["job"]["pipeline_count"] == 2
    p = doc["pipelines"][0]
    assert {"id", "task_id", "vertices", "edges", "task_groups", "slots", "retry"} <= set(p)
    assert p["id"] == 1
    v = p["vertices"][0]
    assert {"id", "ref", "kind", "plugin", "parallelism"} <= set(v)
    assert (v["ref"], v["kind"], v["plugin"]) == ("source[0]", "source", "FakeSource")
    ids = {x["id"] for x in p["vertices"]}
    assert all(a in ids and b in ids for a, b in p["edges"])


def test_plan_text_and_dot(write_conf, capsys):
    path = str(write_conf(GOOD))
    assert main(["plan", path]) == 0
    text = capsys.readouterr().out
    assert text.startswith("Job: cli_job (BATCH, 2 pipelines)")
    assert "Pipeline 1" in text and "Pipeline 2" in text and "PhysicalVertex" in text
    assert main(["plan", path, "--format", "dot"]) == 0
    dot = capsys.readouterr().out
    assert dot.startswith("digraph") and dot.count("subgraph cluster_") == 2


VARIABLES_JOB = """
env { parallelism = 2 }
source {
  FakeSource { schema = { fields { a = int, b = string, x = int, id = bigint, k = string, name = string } },
    plugin_output = ${resName}
    row.num = ${rowNum}
    string.template = ${strTemplate}
    schema = { fields { name = ${nameType}, age = "int" } }
  }
}
transform {
  sql {
    plugin_input = ${resName}
    query = "select * from "${resName}" where name = '"${nameVal}"' "
    plugin_output = "sql"
  }
}
sink { Console { plugin_input = ${sourceTableName} } }
"""


def test_variables_on_the_command_line(write_conf, capsys):
    conf = write_conf(VARIABLES_JOB)
    args = ["plan", str(conf), "--format", "json", "-i", "resName=fake", "-i", "rowNum=10",
            "-i", "strTemplate=[abc,def]", "-i", "nameType=string", "-i", "nameVal=abc,sourceTableName=sql"]
    assert main(args) == 0
    doc = json.loads(capsys.readouterr().out)
    src = doc["pipelines"][0]["vertices"][0]["config"]
    assert src["row.num"] == 10 and src["string.template"] == ["abc", "def"]
    sql = doc["pipelines"][0]["vertices"][1]["config"]["query"]
    assert sql == "select * from fake where name = 'abc' "


def test_config_error_shows_no_traceback(write_conf):
    path = write_conf("source {\n  FakeSource { schema = { fields { a = int, b = string, x = int, id = bigint, k = string, name = string } },\n    row.num = \n  }\n}\n")
    proc = subprocess.run([sys.executable, "-m", "airflow_provider_seatunnel.cli", "plan", str(path)],
                          capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    assert f"{path}:3:5" in proc.stderr


def test_console_script_is_installed():
    proc = subprocess.run([str(__import__("pathlib").Path(sys.executable).parent / "seatunnel-airflow"), "--version"],
                          capture_output=True, text=True)
    assert proc.returncode == 0 and "seatunnel-airflow" in proc.stdout
