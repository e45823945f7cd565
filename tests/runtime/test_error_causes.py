"""A failure says what happened, and whether a retry can help: the root cause of a Spark failure
(down the Java exception's cause chain, not py4j's "An error occurred while calling o126.save"),
and deterministic classes, with the fix, for a target the run may not write and for memory Spark
ran out of (spark-submit's exit 52)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from airflow_provider_seatunnel.spi.errors import PipelineError

CLI = str(Path(sys.executable).parent / "seatunnel-airflow")


def run_cli(*args: str, cwd: Path, prefix: tuple[str, ...] = ()) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    return subprocess.run([*prefix, CLI, *args], capture_output=True, text=True, cwd=cwd, env=env, timeout=600)


def first_lines(error: BaseException) -> list[str]:
    """The first line of each message down the Java cause chain of a PySpark/py4j error, without
    Spark's SQLSTATE: what Spark itself says."""
    throwable = getattr(error, "java_exception", None) or getattr(error, "_origin", None)
    out = []
    while throwable is not None:
        message = str(throwable.getMessage() or "")
        out.append(message.splitlines()[0].split("  SQLSTATE:")[0].strip().removesuffix(".") if message else "")
        throwable = throwable.getCause()
    return out


def test_a_malformed_csv_row_names_the_file_the_record_and_the_value(spark, run_job, tmp_path):
    source = tmp_path / "in"
    source.mkdir()
    (source / "orders.csv").write_text("1,a\n2,b\nx,c\n4,d\n")
    job = f"""
source {{ LocalFile {{ plugin_output = t, path = "{source}", file_format_type = "csv",
                      schema = {{ fields {{ id = int, name = string }} }} }} }}
sink {{ LocalFile {{ plugin_input = t, path = "{tmp_path / 'out'}", file_format_type = "json" }} }}
"""
    with pytest.raises(PipelineError) as info:
        run_job(job)
    error = info.value
    # what Spark says reading the same file the same way (FAILFAST, the declared schema)
    with pytest.raises(Exception) as spark_error:
        spark.read.schema("id int, name string").option("mode", "FAILFAST").csv(str(source)).collect()
    said = [line for line in first_lines(spark_error.value) if line]
    naming_the_file = [line for line in said if str(source / "orders.csv") in line]
    naming_the_record = [line for line in said if "Malformed records" in line]
    assert naming_the_file and naming_the_record and said[-1]  # the file, the record, the value
    for line in [*naming_the_file, *naming_the_record, said[-1]]:
        assert line in error.cause, f"{line!r} not in {error.cause!r}"
    assert "An error occurred while calling" not in error.cause
    assert error.deterministic and error.plugin == "sink[0] LocalFile"


def drop_root_privileges() -> tuple[str, ...]:
    """A command prefix under which the file modes hold: as root, without the capabilities that
    override them (root may write anywhere otherwise); nothing for another user."""
    if os.geteuid() != 0:
        return ()
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("running as root without setpriv: a 0555 directory does not stop root's writes")
    return (setpriv, "--bounding-set", "-dac_override,-dac_read_search,-fowner", "--")


@pytest.mark.parametrize("target", ["existing", "missing"])
def test_a_read_only_target_is_deterministic_and_names_the_path(tmp_path, target):
    """A 0555 directory: the target inside it (``missing``), or the target itself (``existing``)."""
    read_only = tmp_path / "ro"
    out = read_only / "out" if target == "missing" else read_only
    read_only.mkdir()
    read_only.chmod(0o555)
    conf = tmp_path / "job.conf"
    conf.write_text(f"""
env {{ job.name = "readonly", spark.ui.enabled = false }}
source {{ FakeSource {{ plugin_output = t, row.num = 3, schema = {{ fields {{ id = bigint }} }} }} }}
sink {{ LocalFile {{ plugin_input = t, path = "{out}", file_format_type = "json" }} }}
""")
    metrics = tmp_path / "metrics.json"
    try:
        proc = run_cli("run", str(conf), "--work-dir", str(tmp_path / "work"), "--metrics-file", str(metrics),
                       cwd=tmp_path, prefix=drop_root_privileges())
    finally:
        read_only.chmod(0o755)
    assert proc.returncode == 1, proc.stdout[-3000:] + proc.stderr[-3000:]
    error = json.loads(metrics.read_text())["pipelines"][0]["error"]
    assert error["deterministic"] is True and error["kind"] == "access", error
    assert "Permission denied" in error["message"] and f"check the permissions of {out}" in error["message"]
    assert f"check the permissions of {out}" in proc.stderr  # on screen too
    assert list(read_only.iterdir()) == []


#: a Sql that builds a 1.4 GB string in one row: the task runs out of a 512 MB driver's heap at once
OOM = """
env { job.name = "oom", spark.driver.memory = "512m", spark.ui.enabled = false }
source { FakeSource { plugin_output = f, row.num = 1, schema = { fields { name = string } }, string.length = 7 } }
transform { Sql { plugin_input = f, plugin_output = g, query = "select repeat(name, 200000000) as big from f" } }
sink { Console { plugin_input = g, log.print.data = false } }
"""


def test_spark_submit_exit_52_is_out_of_memory_not_retried_with_the_fix(tmp_path):
    """The driver's JVM dies of an OutOfMemoryError (Spark exits 52, before the pipeline could report):
    deterministic, the root cause from the log's last lines, and the setting to raise with its value."""
    conf = tmp_path / "job.conf"
    conf.write_text(OOM)
    metrics = tmp_path / "metrics.json"
    proc = run_cli("run", str(conf), "--work-dir", str(tmp_path / "work"), "--metrics-file", str(metrics),
                   cwd=tmp_path)
    assert proc.returncode == 1, proc.stdout[-3000:] + proc.stderr[-3000:]
    error = json.loads(metrics.read_text())["pipelines"][0]["error"]
    assert error["deterministic"] is True and error["kind"] == "memory", error
    message = error["message"]
    # the pipeline may report its lost connection to the dying JVM first: the exit's memory error wins
    assert re.match(r"spark-submit exited with 52( before the pipeline reported)?: OutOfMemoryError: "
                    r"Java heap space", message), message
    assert "raise spark.driver.memory in env (now 512m)" in message
    assert "raise spark.driver.memory in env (now 512m)" in proc.stderr


def test_python_errors_are_classified_with_their_fix():
    """Errors raised in the driver's Python (no JVM involved): exhausted memory names the setting to
    raise for the master in use; anything else stays transient, its cause the error as Python says it."""
    from airflow_provider_seatunnel.spi.errors import OutOfMemory, error_from

    try:
        bytearray(1 << 62)
    except MemoryError as e:
        local = error_from(e, settings={"spark.driver.memory": "2g"})
        cluster = error_from(e, settings={"spark.master": "yarn", "spark.executor.memory": "4g"})
    assert isinstance(local, OutOfMemory) and local.deterministic
    assert local.cause.endswith("raise spark.driver.memory in env (now 2g)")
    assert "raise spark.executor.memory in env (now 4g)" in cluster.cause
    assert "spark.driver.memory (now 1g)" in cluster.cause  # Spark's default where unset

    try:
        int("x")
    except ValueError as e:
        other = error_from(e)
    assert type(other) is PipelineError and not other.deterministic
    assert other.cause == "ValueError: invalid literal for int() with base 10: 'x'"
