"""The command line: exit codes, output formats, no tracebacks for config errors."""

from __future__ import annotations

import contextlib
import json
import os
import stat
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from airflow_provider_seatunnel.cli import main

from .conftest import ROOT

GOOD = """
env { job.name = "cli_job" }
source { FakeSource { schema = { fields { a = int, b = string, x = int, id = bigint, k = string, name = string } }, plugin_output = "a" } FakeSource { schema = { fields { a = int, b = string, x = int, id = bigint, k = string, name = string } }, plugin_output = "b" } }
transform { Sql { plugin_input = ["a", "b"], plugin_output = "t", query = "select * from this" } }
sink { Console { plugin_input = "t" } }
"""
BAD = """source {
  FakeSource { schema = { fields { a = int } }, plugin_output = "a" } FakeSource { schema = { fields { a = int } }, plugin_output = "c" }
}
sink {
  Console { plugin_input = ["b", "c"] }
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
    path = write_conf("source { Socket { } }\nsink { Console { } }\n")
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


# -- secrets and the work directory of `run` (spark-submit really runs) ---------------------------

CLI = str(Path(sys.executable).parent / "seatunnel-airflow")
SECRET = "s3cr3t"
SECRET_JOB = """
env {{ job.name = "cli_secret", spark.ui.enabled = false, spark.logConf = true,
      spark.hadoop.fs.s3a.secret.key = "s3cr3t" }}
source {{ FakeSource {{ plugin_output = "t", row.num = 3, schema = {{ fields {{ id = bigint }} }} }} }}
sink {{ LocalFile {{ plugin_input = "t", path = "{out}", file_format_type = "json" }} }}
"""
FAILING_JOB = """
source { FakeSource { plugin_output = "t", row.num = 3, schema = { fields { id = bigint } } } }
sink { Assert { plugin_input = "t", rules { row_rules = [{ rule_type = MIN_ROW, rule_value = 1000 }] } } }
"""


def _cli_env(tmp_path) -> dict:
    env = dict(os.environ)
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    env["TMPDIR"] = str(tmp_path / "tmp")
    (tmp_path / "tmp").mkdir(exist_ok=True)
    return env


def _watch(cmd: list, env: dict, output) -> tuple[int, dict]:
    """Run ``cmd``; while it runs, read the command line of every process below it (psutil, as ``ps``
    would): ``(exit code, {pid: command line})``."""
    proc = subprocess.Popen(cmd, env=env, stdout=output, stderr=subprocess.STDOUT, text=True)
    seen: dict = {}
    try:
        while proc.poll() is None:
            try:
                below = psutil.Process(proc.pid).children(recursive=True)
            except psutil.Error:
                below = []
            for p in below:
                with contextlib.suppress(psutil.Error):
                    seen[p.pid] = p.cmdline()
            time.sleep(0.02)
    finally:
        if proc.poll() is None:
            proc.kill()
    return proc.wait(timeout=600), seen


def test_run_puts_no_env_spark_secret_on_any_command_line_and_plan_json_redacts_it(tmp_path, write_conf, capsys):
    conf = write_conf(SECRET_JOB.format(out=tmp_path / "out"))
    assert main(["plan", str(conf), "--format", "json"]) == 0
    out = capsys.readouterr().out
    assert SECRET not in out and json.loads(out)["job"]["env"]["spark.hadoop.fs.s3a.secret.key"] == "******"
    work = tmp_path / "new" / "work"
    with open(tmp_path / "cli.out", "w") as output:
        code, seen = _watch([CLI, "run", str(conf), "--master", "local[1]", "--work-dir", str(work), "--keep-work-dir"],
                            _cli_env(tmp_path), output)
    text = (tmp_path / "cli.out").read_text()
    assert code == 0, text
    submits = [c for c in seen.values() if "org.apache.spark.deploy.SparkSubmit" in c]
    assert submits, f"spark-submit's JVM was never seen: {list(seen.values())}"
    assert not [c for c in seen.values() if any(SECRET in word for word in c)]
    assert SECRET not in text
    # kept on request: private files, and Spark got the setting (its own log shows it redacted)
    assert stat.S_IMODE(work.stat().st_mode) == 0o700
    assert {stat.S_IMODE(f.stat().st_mode) for f in work.glob("*.properties")} == {0o600}
    assert stat.S_IMODE((work / "plan.json").stat().st_mode) == 0o600
    (log,) = work.glob("pipeline-*.log")
    assert "spark.hadoop.fs.s3a.secret.key" in log.read_text() and SECRET not in log.read_text()


def test_run_removes_its_temporary_work_dir(tmp_path, write_conf):
    conf = write_conf(SECRET_JOB.format(out=tmp_path / "out"))
    env = _cli_env(tmp_path)
    proc = subprocess.run([CLI, "run", str(conf), "--master", "local[1]", "--metrics-file", str(tmp_path / "m.json")],
                          env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert not list((tmp_path / "tmp").glob("seatunnel-run-*"))
    job = json.loads((tmp_path / "m.json").read_text())
    assert "work_dir" not in job and "log" not in job["pipelines"][0]


def test_a_failed_run_removes_only_what_it_wrote_into_an_existing_work_dir(tmp_path, write_conf):
    conf = write_conf(FAILING_JOB)
    shared = tmp_path / "shared"
    shared.mkdir()
    os.chmod(shared, 0o1777)
    (shared / "theirs.txt").write_text("stays")
    proc = subprocess.run([CLI, "run", str(conf), "--master", "local[1]", "--work-dir", str(shared)],
                          env=_cli_env(tmp_path), capture_output=True, text=True, timeout=600)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "MIN_ROW" in proc.stderr and "--keep-work-dir" in proc.stderr
    assert [p.name for p in shared.iterdir()] == ["theirs.txt"]
    assert stat.S_IMODE(shared.stat().st_mode) == 0o1777


def test_run_help_documents_keep_work_dir(capsys):
    with pytest.raises(SystemExit):
        main(["run", "--help"])
    assert "--keep-work-dir" in capsys.readouterr().out
