"""A third-party connector package (tests/plugin_package: Echo and JsonLines, written against the spi
alone) found through its entry points, compiled, and run end to end through ``seatunnel-airflow run``.

The Makefile installs the package into the venv (``pip install --no-deps -e tests/plugin_package``).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from importlib.metadata import entry_points
from pathlib import Path

import pytest

from airflow_provider_seatunnel.spi import (
    ENTRY_POINT_GROUP,
    SINK,
    TRANSFORM,
    Lineage,
    SchemaInference,
    available,
    get_connector,
)
from airflow_provider_seatunnel.spi.twophase import StorageVerbs

from .conftest import ROOT

CLI = str(Path(sys.executable).parent / "seatunnel-airflow")

JOB = """
env {{ job.name = "echo_e2e", parallelism = 2 }}
source {{
  FakeSource {{ plugin_output = "fake", row.num = 6, schema = {{ fields {{ id = bigint, name = string }} }} }}
}}
transform {{
  {echo}
}}
sink {{
  JsonLines {{ plugin_input = "echoed", path = "{out}", parallelism = 3 }}
}}
"""
ECHO = 'echo { plugin_input = "fake", plugin_output = "echoed", field = "greeting", value = "hello" }'


def job(out: Path | str = "/tmp/unused", echo: str = ECHO) -> str:
    return JOB.format(out=out, echo=echo)


# -- (a) the entry points ------------------------------------------------------------------------

def test_the_entry_points_register_runnable_connectors():
    names = {ep.name: ep.value for ep in entry_points(group=ENTRY_POINT_GROUP)}
    assert names.get("echo") == "seatunnel_echo.echo:Echo", "pip install --no-deps -e tests/plugin_package"
    assert names.get("jsonlines") == "seatunnel_echo.jsonlines:CONNECTOR"
    echo, sink = get_connector("ECHO"), get_connector("jsonLINES")
    assert type(echo).__module__ == "seatunnel_echo.echo" and echo.name == "Echo"  # a class entry, instantiated
    assert type(sink).__module__ == "seatunnel_echo.jsonlines" and sink.name == "JsonLines"
    assert echo.can_run(TRANSFORM) and not echo.can_run(SINK) and echo.can_stream(TRANSFORM)
    assert sink.can_run(SINK) and not sink.can_run(TRANSFORM)
    assert isinstance(echo, SchemaInference) and isinstance(sink, StorageVerbs) and isinstance(sink, Lineage)
    assert sink.capabilities.exactly_once and sink.capabilities.committer and not echo.capabilities.exactly_once
    assert "Echo" in available(TRANSFORM) and "JsonLines" in available(SINK)
    assert sink.assets({"path": "/data/out"}) == ["file:///data/out"]


# -- (b) compile time ----------------------------------------------------------------------------

def test_a_job_using_them_plans_with_the_schema_through_echo(plan_of):
    plan = plan_of(job())
    (pipeline,) = plan.pipelines
    by_ref = {v.ref: v for v in pipeline.vertices}
    echo, sink = by_ref["transform[0]"], by_ref["sink[0]"]
    assert (echo.plugin, sink.plugin) == ("Echo", "JsonLines")  # canonical names, whatever the case written
    assert dict(echo.schema) == {"id": "bigint", "name": "string", "greeting": "string"}
    assert (echo.parallelism, sink.parallelism) == (2, 3)
    typed = plan_of(job(echo=ECHO.replace('value = "hello"', 'value = "12.50", type = "decimal(6, 2)"')))
    (echo,) = [v for v in typed.pipelines[0].vertices if v.plugin == "Echo"]
    assert echo.schema["greeting"] == "decimal(6, 2)"


def test_the_new_field_is_known_downstream(plan_of, config_error):
    copy = '\n  Copy { plugin_input = "echoed", plugin_output = "copied", fields { g2 = "greeting" } }'
    text = job(echo=ECHO + copy).replace('plugin_input = "echoed", path', 'plugin_input = "copied", path')
    (copied,) = [v for v in plan_of(text).pipelines[0].vertices if v.ref == "transform[1]"]
    assert list(copied.schema) == ["id", "name", "greeting", "g2"]
    (problem,) = config_error(text.replace('g2 = "greeting"', 'g2 = "greting"')).problems
    assert (problem.plugin, problem.key) == ("transform[1] Copy", "fields")
    assert "did you mean 'greeting'?" in problem.hint


def _line_of(text: str, needle: str) -> int:
    return next(i for i, line in enumerate(text.splitlines(), 1) if needle in line)


def test_a_bad_option_names_the_file_line_plugin_and_key(write_conf, config_error, tmp_path):
    text = job(echo=ECHO.replace('value = "hello"', '\n    value = "abc"\n    type = int'))
    err = config_error(text)
    (problem,) = err.problems
    path = str(tmp_path / "job.conf")
    line = _line_of(text, 'value = "abc"')
    assert (problem.file, problem.line, problem.plugin, problem.key) == (path, line, "transform[0] echo", "value")
    assert f"{path}:{line}: transform[0] echo: option 'value': value 'abc' is not a int" in str(err)

    text = job(echo=ECHO.replace('value = "hello"', 'value = 1\n    type = "varchar2"'))
    (problem,) = config_error(text).problems
    assert (problem.line, problem.key) == (_line_of(text, "varchar2"), "type")
    assert "unknown type 'varchar2'" in problem.message and "decimal(p, s)" in problem.hint

    (problem,) = config_error(job(echo=ECHO.replace('value = "hello"', 'value = 300, type = tinyint'))).problems
    assert problem.key == "value" and "300" in problem.message


def test_missing_options_and_a_clashing_field_are_compile_errors(config_error):
    err = config_error(job(echo=ECHO.replace(', value = "hello"', "")))
    assert [(p.plugin, p.message) for p in err.problems] == [("transform[0] echo", "the option 'value' is required")]
    (problem,) = config_error(job(echo=ECHO.replace('"greeting"', '"NAME"'))).problems
    assert problem.key == "field" and "'NAME' is already an input field ('name')" in problem.message
    (problem,) = config_error(job(echo=ECHO).replace('path = "/tmp/unused"', 'path = ""')).problems
    assert (problem.plugin, problem.key) == ("sink[0] JsonLines", "path")


PROBE = """
import sys
from airflow_provider_seatunnel.plan import compile_job
plan = compile_job(sys.argv[1], use_cache=False)
assert {v.plugin for v in plan.pipelines[0].vertices} >= {"Echo", "JsonLines"}
print(",".join(sorted(m for m in sys.modules if m.split(".")[0] in ("pyspark", "py4j", "airflow"))))
"""


def test_compiling_a_job_with_the_plugins_imports_no_pyspark(write_conf):
    proc = subprocess.run([sys.executable, "-c", PROBE, str(write_conf(job()))], capture_output=True, text=True,
                          cwd=ROOT, check=True)
    assert proc.stdout.strip() == ""


# -- (c) end to end through the command line ------------------------------------------------------

def run_cli(*args: str, cwd: Path, faults: str | None = None) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    env.pop("SEATUNNEL_FAULTS", None)
    if faults:
        env["SEATUNNEL_FAULTS"] = faults
    return subprocess.run([CLI, *args], capture_output=True, text=True, cwd=cwd, env=env, timeout=600)


def published(out: Path) -> dict[str, str]:
    """The data files a reader sees (commit directory/file name -> text): the hidden staging and commit log aside."""
    return {f"{p.parent.name}/{p.name}": p.read_text() for p in sorted(out.glob("[!.]*/part-*.json"))}


def rows_of(files: dict[str, str]) -> list[dict]:
    return [json.loads(line) for text in files.values() for line in text.splitlines() if line]


def test_run_writes_every_row_once_and_a_new_run_id_writes_again(tmp_path):
    out = tmp_path / "out"
    conf = tmp_path / "job.conf"
    conf.write_text(job(out))
    metrics = tmp_path / "metrics.json"
    args = ("run", str(conf), "--run-id", "r1", "--work-dir", str(tmp_path / "work"), "--metrics-file", str(metrics))
    proc = run_cli(*args, cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    files = published(out)
    rows = rows_of(files)
    assert len(rows) == 12  # row.num 6 per reader x parallelism 2
    assert all(set(r) == {"id", "name", "greeting"} and r["greeting"] == "hello" for r in rows)
    assert len({r["id"] for r in rows}) == 12  # random bigint ids: a file published twice would repeat them
    assert len(files) == 3  # the sink's planned parallelism: 3 writers, one file each
    assert json.loads(metrics.read_text())["write_count"] == 12
    assert len({name.split("/")[0] for name in files}) == 1  # one commit: the table's directory
    assert [p.suffix for p in (out / ".commits").glob("[!.]*")] == [".token"]  # the commit log: one token
    assert not list((out / ".staging").iterdir())
    # A rerun with the same run id writes nothing, not even a staging, and counts its rows once: the restore of
    # the run killed after its publish (test_a_driver_killed_in_the_commit_is_restored_exactly_once[sink.commit])
    # is that rerun through this command line, and the sink conformance suite reruns a committed JsonLines run.

    other = run_cli("run", str(conf), "--run-id", "r2", "--work-dir", str(tmp_path / "work3"), cwd=tmp_path)
    assert other.returncode == 0, other.stdout + other.stderr
    assert len(rows_of(published(out))) == 24  # a new run id is a new run: it writes again


@pytest.mark.parametrize("kill", ["sink.move=kill", "sink.commit=kill"])
def test_a_driver_killed_in_the_commit_is_restored_exactly_once(tmp_path, kill):
    """Killed before the one atomic publish (``sink.move``) nothing is visible; killed after it (``sink.commit``,
    before the engine records the commit) everything is, and the restore writes nothing again."""
    out = tmp_path / "out"
    conf = tmp_path / "job.conf"
    conf.write_text(job(out))
    args = ("run", str(conf), "--run-id", "k1", "--work-dir", str(tmp_path / "work"))
    killed = run_cli(*args, cwd=tmp_path, faults=kill)  # SIGKILL of the driver
    assert killed.returncode != 0, killed.stdout + killed.stderr
    before = published(out)
    assert len(rows_of(before)) == (12 if kill.startswith("sink.commit") else 0)

    metrics, work2 = tmp_path / "metrics.json", tmp_path / "work-again"
    restored = run_cli("run", str(conf), "--run-id", "k1", "--attempt", "2", "--work-dir", str(work2),
                       "--keep-work-dir", "--metrics-file", str(metrics), cwd=tmp_path)
    assert restored.returncode == 0, restored.stdout + restored.stderr
    after = published(out)
    rows = rows_of(after)
    assert len(after) == 3 and len(rows) == 12 and len({r["id"] for r in rows}) == 12
    assert all(after[name] == text for name, text in before.items())  # what the first attempt published, kept
    assert not list((out / ".staging").iterdir())  # the killed attempt's staging discarded
    assert json.loads(metrics.read_text())["write_count"] == 12  # counted once, in the one pass over the rows
    if kill.startswith("sink.commit"):  # published, so committed: the restore is a rerun of a committed run id
        assert after == before  # the same files, byte for byte: nothing written twice
        (log,) = work2.glob("pipeline-*.log")
        assert "is committed already; nothing to write" in log.read_text()  # not even staged
