"""A symlink planted at the name of a file the command line, the runtime or the Connect server
writes never redirects the write (item 2 of issue 34). Two rules, by file:

- streamed files (a pipeline's log, the Connect server's log) are opened with O_NOFOLLOW: a link
  there is refused with an error naming the file, and nothing is written or started;
- whole files (metrics, ``--metrics-file``, properties, plan, the server's pid) are written to a
  fresh 0600 temporary file renamed over the name: the link itself is replaced, its target untouched.
- the Connect token is read only from a regular 0600 file of this user: a link is refused.

No Spark starts here except where the old code would have started one (the pipeline log test ends
before spark-submit now)."""

from __future__ import annotations

import argparse
import json
import os
import socket
import stat

import pytest

from airflow_provider_seatunnel import cli
from airflow_provider_seatunnel.runtime import connect_server, launcher
from airflow_provider_seatunnel.runtime.launcher import run_pipelines, write_plan_file, write_properties_file
from airflow_provider_seatunnel.runtime.metrics import PipelineMetrics
from airflow_provider_seatunnel.runtime.summary import job_metrics
from airflow_provider_seatunnel.spi.errors import PipelineError
from airflow_provider_seatunnel.spi.safe_files import UnsafePath

JOB = """
env { job.name = "links", spark.ui.enabled = false }
source { FakeSource { plugin_output = "t", row.num = 2, schema = { fields { id = bigint } } } }
sink { Console { plugin_input = "t" } }
"""
PRECIOUS = "precious\n"


@pytest.fixture
def victim(tmp_path):
    path = tmp_path / "victim"
    path.write_text(PRECIOUS)
    return path


def _replaced(link, victim) -> None:
    """The rename rule: the target is untouched, the name is now a regular 0600 file."""
    assert victim.read_text() == PRECIOUS
    assert not link.is_symlink() and link.is_file()
    assert stat.S_IMODE(link.stat().st_mode) == 0o600


def test_a_planted_pipeline_log_link_fails_the_pipeline_unsubmitted(tmp_path, plan_of, victim):
    plan = plan_of(JOB)
    p = plan.pipelines[0]
    work = tmp_path / "work"
    work.mkdir()
    link = work / f"pipeline-{p.task_id}.log"
    link.symlink_to(victim)
    said: list[str] = []
    job = run_pipelines(plan, plan.pipelines, master="local[1]", work_dir=work, say=said.append)
    assert victim.read_text() == PRECIOUS
    [metrics] = job["pipelines"]
    assert metrics["status"] == "FAILED"
    assert str(link) in metrics["error"]["message"] and "symlink" in metrics["error"]["message"]
    assert not any(": submitted (" in line for line in said)  # refused before spark-submit


def test_the_metrics_file_never_writes_through_a_link_at_its_name_or_its_temporary(tmp_path, plan_of, victim):
    p = plan_of(JOB).pipelines[0]
    metrics = PipelineMetrics.failed(p, "r", 1, "2024-05-06 10:00:00", PipelineError("boom", pipeline=p.task_id))
    path = tmp_path / "pipeline.metrics.json"
    (tmp_path / "pipeline.metrics.json.tmp").symlink_to(victim)  # the old fixed temporary name
    path.symlink_to(victim)
    metrics.write(path)
    _replaced(path, victim)
    assert PipelineMetrics.read(path) == metrics


def test_metrics_are_not_read_through_a_link(tmp_path, plan_of):
    p = plan_of(JOB).pipelines[0]
    elsewhere = tmp_path / "forged.json"
    PipelineMetrics.failed(p, "r", 1, "2024-05-06 10:00:00", PipelineError("x")).write(elsewhere)
    link = tmp_path / "pipeline.metrics.json"
    link.symlink_to(elsewhere)
    assert PipelineMetrics.read(elsewhere) is not None
    assert PipelineMetrics.read(link) is None  # a planted link is no report of the pipeline


def _job(plan_of) -> dict:
    p = plan_of(JOB).pipelines[0]
    m = PipelineMetrics.failed(p, "r", 1, "2024-05-06 10:00:00", PipelineError("boom", pipeline=p.task_id))
    return job_metrics("links", [m], "2024-05-06 10:00:00", "2024-05-06 10:00:01")


def test_cli_metrics_file_replaces_a_planted_link(tmp_path, plan_of, victim, capsys):
    link = tmp_path / "m.json"
    link.symlink_to(victim)
    code = cli._report(argparse.Namespace(metrics_file=str(link), keep_work_dir=True, remote=None), _job(plan_of))
    assert code == cli.EXIT_FAILED  # the pipeline failed
    _replaced(link, victim)
    assert json.loads(link.read_text())["pipelines"][0]["status"] == "FAILED"


def test_cli_metrics_file_that_cannot_be_written_is_an_error_not_a_traceback(tmp_path, plan_of, capsys):
    blocker = tmp_path / "file"
    blocker.write_text("")
    job = _job(plan_of)
    job["pipelines"][0]["status"] = "FINISHED"
    code = cli._report(argparse.Namespace(metrics_file=str(blocker / "m.json"), keep_work_dir=True, remote=None),
                       job)
    assert code == cli.EXIT_FAILED
    assert f"error: --metrics-file {blocker / 'm.json'}" in capsys.readouterr().err


def test_properties_and_plan_files_replace_a_planted_link(tmp_path, plan_of, victim):
    """These two already renamed a fresh file over the name on old main: kept so, now through safe_files."""
    props = tmp_path / "pipeline-x.properties"
    props.symlink_to(victim)
    write_properties_file({"spark.app.name": "x"}, props, environ={})
    _replaced(props, victim)
    assert props.read_text() == "spark.app.name x\n"
    (tmp_path / "plan.json").symlink_to(victim)
    _replaced(write_plan_file(plan_of(JOB), tmp_path), victim)


# -- the Connect server's files -------------------------------------------------------------------


def test_a_planted_token_link_is_refused(tmp_path, victim):
    directory = tmp_path / "connect"
    directory.mkdir(mode=0o700)
    (directory / "token").symlink_to(victim)  # a token someone else knows
    with pytest.raises(UnsafePath):
        connect_server.token(directory)
    assert victim.read_text() == PRECIOUS


def test_a_token_others_may_read_is_refused_and_a_new_one_is_private(tmp_path):
    directory = tmp_path / "connect"
    directory.mkdir(mode=0o700)
    made = connect_server.token(directory)
    assert len(made) >= 32 and stat.S_IMODE((directory / "token").stat().st_mode) == 0o600
    assert connect_server.token(directory) == made
    os.chmod(directory / "token", 0o644)
    with pytest.raises(UnsafePath, match="0644"):
        connect_server.token(directory)


def test_a_planted_pid_link_names_no_server(tmp_path):
    directory = tmp_path / "connect"
    directory.mkdir(mode=0o700)
    alive = tmp_path / "alive.pid"
    alive.write_text(str(os.getpid()))  # a process that runs: stop() would signal its group
    (directory / "server.pid").symlink_to(alive)
    assert connect_server.running(directory) is None


@pytest.fixture
def fake_spark(tmp_path, monkeypatch):
    """A Spark home whose spark-submit says the server started and waits, and a port that listens."""
    home = tmp_path / "spark-home"
    (home / "bin").mkdir(parents=True)
    submit = home / "bin" / "spark-submit"
    submit.write_text(f"#!/bin/sh\necho '{connect_server.STARTED}'\nexec sleep 120\n")
    submit.chmod(0o755)
    monkeypatch.setattr(launcher, "pyspark_home", lambda: home)
    monkeypatch.delenv("SPARK_HOME", raising=False)
    monkeypatch.delenv("SPARK_CONF_DIR", raising=False)
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        yield listener.getsockname()[1]
    connect_server.stop(tmp_path / "connect", timeout=5)  # whatever a test left running


def test_the_server_log_link_is_refused_before_the_server_starts(tmp_path, victim, fake_spark):
    directory = tmp_path / "connect"
    directory.mkdir(mode=0o755)
    (directory / "server.log").symlink_to(victim)
    with pytest.raises(UnsafePath, match=r"server\.log"):
        connect_server.start(directory, port=fake_spark, wait=20)
    assert victim.read_text() == PRECIOUS
    assert not (directory / "server.pid").exists()
    assert stat.S_IMODE(directory.stat().st_mode) == 0o700


def test_the_server_pid_file_replaces_a_planted_link(tmp_path, victim, fake_spark):
    directory = tmp_path / "connect"
    directory.mkdir(mode=0o700)
    (directory / "server.pid").symlink_to(victim)
    server = connect_server.start(directory, port=fake_spark, wait=20)
    try:
        _replaced(directory / "server.pid", victim)
        assert connect_server.running(directory) == server.pid
        assert stat.S_IMODE(server.log.stat().st_mode) == 0o600
    finally:
        assert connect_server.stop(directory, timeout=10) == server.pid


def test_a_connect_directory_that_is_a_link_is_refused(tmp_path, fake_spark):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir(mode=0o755)
    os.chmod(elsewhere, 0o755)
    link = tmp_path / "connect"
    link.symlink_to(elsewhere)
    with pytest.raises(UnsafePath):
        connect_server.start(link, port=fake_spark, wait=20)
    assert list(elsewhere.iterdir()) == [] and stat.S_IMODE(elsewhere.stat().st_mode) == 0o755


def test_the_demo_log_link_is_refused(tmp_path, victim):
    import subprocess
    import sys
    from pathlib import Path

    script = Path(__file__).resolve().parents[2] / "scripts" / "demo_progress.py"
    link = tmp_path / "airflow.log"
    link.symlink_to(victim)
    proc = subprocess.run([sys.executable, str(script), str(link), "--", "echo", "hello"], capture_output=True,
                          text=True, env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    assert proc.returncode == 2 and "refusing to write the demo's log" in proc.stderr
    assert victim.read_text() == PRECIOUS
