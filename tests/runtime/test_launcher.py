"""The spark-submit contract (one Submission for the command line and the hook), the one metrics
type, and finding a pipeline's driver among this process's children. No Spark starts here."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import time

import pytest

from airflow_provider_seatunnel.runtime.launcher import (
    APP_FILE,
    LAUNCHER_JAVA_OPTIONS,
    Submission,
    default_run_id,
    pipeline_drivers,
    stop_drivers,
    submit_command,
    write_plan_file,
)
from airflow_provider_seatunnel.runtime.metrics import PipelineMetrics
from airflow_provider_seatunnel.spi.errors import AssertionFailed, OutOfMemory, PipelineError

JOB = """
env { job.name = "contract", spark.ui.enabled = false, spark.hadoop.fs.s3a.secret.key = "s3cr3t-value" }
source { FakeSource { plugin_output = "t", row.num = 2, schema = { fields { id = bigint } } } }
sink { LocalFile { plugin_input = "t", path = "/tmp/contract-out", file_format_type = "json" } }
"""

#: The keys of a failed pipeline's metrics (the driver's metrics file, the XCom value).
FAILED_KEYS = {"pipeline", "task_id", "name", "status", "attempt", "run_id", "start", "end", "read_count",
               "write_count", "failed_count", "committed", "error", "application_id"}
#: ...and of a finished one, before the driver adds its application id and UI address.
FINISHED_KEYS = {"pipeline", "task_id", "name", "status", "attempt", "run_id", "start", "end", "seconds",
                 "read_count", "write_count", "failed_count", "filtered_count", "per_source", "per_sink",
                 "per_table", "per_table_read", "committed"}


def test_failed_metrics_keys_and_round_trip(plan_of):
    p = plan_of(JOB).pipelines[0]
    error = AssertionFailed("MIN_ROW: 2 < 1000", plugin="sink[1] Assert", pipeline=p.task_id)
    failed = PipelineMetrics.failed(p, "run-1", 3, "2024-05-06 10:00:00", error)
    d = failed.to_dict()
    assert set(d) == FAILED_KEYS
    assert (d["status"], d["attempt"], d["run_id"], d["committed"], d["application_id"]) == ("FAILED", 3, "run-1",
                                                                                            False, None)
    assert d["error"] == {"kind": "assert", "deterministic": True, "plugin": "sink[1] Assert",
                          "pipeline": p.task_id, "message": "MIN_ROW: 2 < 1000"}
    assert (d["read_count"], d["write_count"], d["failed_count"]) == (0, 0, 0)
    assert PipelineMetrics.from_dict(json.loads(json.dumps(d))) == failed
    assert failed.deterministic and not failed.ok and failed.where == " in sink[1] Assert"


def test_finished_metrics_keys_counts_and_extra(plan_of):
    p = plan_of(JOB).pipelines[0]
    one = PipelineMetrics.finished(p, "r", 1, "2024-05-06 10:00:00", time.monotonic(), {"source[0] FakeSource": 10},
                                   {"sink[0] LocalFile": {"t": 7}}, mode="STREAMING")
    d = one.to_dict()
    assert set(d) == FINISHED_KEYS | {"mode"}
    assert (d["read_count"], d["write_count"], d["failed_count"], d["filtered_count"]) == (10, 7, 3, 3)
    assert d["per_sink"] == {"sink[0] LocalFile": 7} and d["committed"] is True
    two = PipelineMetrics.finished(p, "r", 1, "s", time.monotonic(), {"a": 4}, {"x": {"t": 4}, "y": {"t": 4}})
    assert "filtered_count" in two.to_dict() and two.to_dict()["filtered_count"] is None  # no one number
    assert PipelineMetrics.from_dict(d) == one
    # a spark-submit failing after the pipeline reported: FAILED, the counts and the commit stay
    failing = one.failing(PipelineError("spark-submit exited with 1"))
    assert failing.status == "FAILED" and failing.committed and failing.write_count == 7
    assert failing.to_dict()["error"]["message"] == "spark-submit exited with 1"
    # an error the pipeline reported itself is kept
    own = PipelineMetrics.failed(p, "r", 1, "s", AssertionFailed("rule"))
    assert own.failing(PipelineError("exit 1")).message == "rule"
    assert own.failing(OutOfMemory("spark-submit exited with 52")).message == "rule"  # deterministic stays
    # the JVM died of memory while the pipeline reported a lost connection: the memory error wins
    lost = PipelineMetrics.failed(p, "r", 1, "s", PipelineError("Py4JNetworkError: Error while sending", "sink[0] X"))
    memory = lost.failing(OutOfMemory("spark-submit exited with 52; raise spark.driver.memory"))
    assert memory.deterministic and memory.error["kind"] == "memory" and memory.error["plugin"] == "sink[0] X"
    assert memory.message == "spark-submit exited with 52; raise spark.driver.memory"


def test_not_run_metrics_keep_their_keys():
    assert PipelineMetrics.not_run("web_1", airflow_task_id="job.web_1").to_dict() == {
        "task_id": "web_1", "status": "NOT_RUN", "read_count": 0, "write_count": 0, "failed_count": 0,
        "airflow_task_id": "job.web_1"}


def test_metrics_file_is_written_whole_and_read_back(tmp_path, plan_of):
    p = plan_of(JOB).pipelines[0]
    path = tmp_path / "m.json"
    assert PipelineMetrics.read(path) is None
    path.write_text("{not json")
    assert PipelineMetrics.read(path) is None
    failed = PipelineMetrics.failed(p, "r", 1, "s", PipelineError("boom"), application_id="app-7")
    failed.write(path)
    assert PipelineMetrics.read(path) == failed and not (tmp_path / "m.json.tmp").exists()


def test_one_submission_no_secret_on_the_command_line(tmp_path, plan_of):
    plan = plan_of(JOB)
    p = plan.pipelines[0]
    plan_file = write_plan_file(plan, tmp_path / "work")
    sub = Submission.of(plan, p, plan_file, "run-1", 2, tmp_path / "m.json")
    assert sub.name == f"contract:{p.task_id}" and sub.application == str(APP_FILE)
    assert sub.application_args == ("--plan", str(plan_file), "--pipeline", "1", "--run-id", "run-1",
                                    "--attempt", "2", "--metrics-file", str(tmp_path / "m.json"))
    assert sub.conf["spark.hadoop.fs.s3a.secret.key"] == "s3cr3t-value" and sub.conf["spark.ui.enabled"] == "false"
    assert {"SPARK_HOME", "PYSPARK_PYTHON", "PATH"} <= set(sub.env)
    assert sub.env["SPARK_LAUNCHER_OPTS"] == os.environ.get("SPARK_LAUNCHER_OPTS", LAUNCHER_JAVA_OPTIONS)
    cmd = submit_command(plan, p, plan_file, "run-1", "local[1]", tmp_path / "m.json", 2)
    assert "s3cr3t-value" not in " ".join(cmd) and "--conf" not in cmd  # every env setting: the properties file
    props = plan_file.parent / f"pipeline-{p.task_id}.properties"
    assert cmd[cmd.index("--properties-file") + 1] == str(props)
    assert stat.S_IMODE(props.stat().st_mode) == 0o600
    assert {"spark.hadoop.fs.s3a.secret.key s3cr3t-value", "spark.ui.enabled false"} <= set(props.read_text().splitlines())
    assert cmd[cmd.index(str(APP_FILE)) + 1:] == list(sub.application_args)
    # the driver on the cluster: the plan travels with --files, read from the working directory
    remote = Submission.of(plan, p, plan_file, "run-1", 2, tmp_path / "m.json", on_cluster=True)
    assert remote.files == (str(plan_file),) and remote.env == {}
    assert remote.application_args[:2] == ("--plan", "plan.json") and "--metrics-file" not in remote.application_args


FAKE_SUBMIT = """
import subprocess, sys
subprocess.run([sys.executable, "-c", "import time; time.sleep(120)", "/x/runtime/app.py", "--plan", sys.argv[1]])
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="process names as on Linux")
def test_drivers_are_found_below_this_process_and_stopped(tmp_path):
    """A fake spark-submit (a Python process) starts a driver of a plan; the driver is found among this
    process's descendants by its plan, SIGTERM stops it, and its spark-submit is seen to exit."""
    plan = str(tmp_path / "plan.json")
    submit = subprocess.Popen([sys.executable, "-c", FAKE_SUBMIT, plan])
    try:
        deadline = time.monotonic() + 30
        drivers = []
        while not drivers and time.monotonic() < deadline:
            drivers = pipeline_drivers(plan)
            time.sleep(0.1)
        assert [d.parent().pid for d in drivers] == [submit.pid]
        assert pipeline_drivers(str(tmp_path / "other.json")) == []
        assert pipeline_drivers(plan, root=os.getppid()) == drivers  # the parent's descendants hold it too
        assert stop_drivers(drivers, timeout=30)
        assert submit.wait(timeout=5) == 0  # not reaped by the wait: its starter collects the exit code
    finally:
        submit.kill()
        submit.wait()


def test_an_existing_work_dir_keeps_its_mode_and_the_plan_file_stays_private(tmp_path, plan_of):
    shared = tmp_path / "shared"
    shared.mkdir()
    os.chmod(shared, 0o1777)  # like /tmp
    plan = plan_of(JOB)
    path = write_plan_file(plan, shared)
    assert stat.S_IMODE(shared.stat().st_mode) == 0o1777
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    fresh = write_plan_file(plan, tmp_path / "new" / "work")
    assert stat.S_IMODE(fresh.parent.stat().st_mode) == 0o700


def test_case_mappings_are_the_jvms_as_seatunnels_unless_the_job_sets_them():
    """SeaTunnel's Sql ``upper``/``lower`` are Java's ``String`` methods: Spark's without ICU."""
    from airflow_provider_seatunnel.runtime.session import spark_conf

    assert spark_conf({})["spark.sql.icu.caseMappings.enabled"] == "false"
    assert spark_conf({"spark.sql.icu.caseMappings.enabled": True})["spark.sql.icu.caseMappings.enabled"] == "true"


def test_the_launcher_jvm_options_are_ours_unless_set(monkeypatch):
    from airflow_provider_seatunnel.runtime.launcher import submit_environment

    monkeypatch.delenv("SPARK_LAUNCHER_OPTS", raising=False)
    assert submit_environment()["SPARK_LAUNCHER_OPTS"] == LAUNCHER_JAVA_OPTIONS
    assert submit_environment({"SPARK_LAUNCHER_OPTS": "-Xss2m"})["SPARK_LAUNCHER_OPTS"] == "-Xss2m"


def test_default_run_ids_started_in_the_same_second_differ():
    ids = {default_run_id() for _ in range(50)}
    assert len(ids) == 50 and all(i.startswith("manual__") for i in ids)
