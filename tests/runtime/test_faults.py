"""Restores are exactly-once: faults injected with ``SEATUNNEL_FAULTS`` (raise in process, SIGKILL through
``seatunnel-airflow run`` and spark-submit), then a rerun with the same run id."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from airflow_provider_seatunnel.cli import main
from airflow_provider_seatunnel.connectors import localfile as lf
from airflow_provider_seatunnel.runtime import faults, twophase
from airflow_provider_seatunnel.runtime.executor import RunContext
from airflow_provider_seatunnel.spi.rows import with_kind

CLI = str(Path(sys.executable).parent / "seatunnel-airflow")
OLD = {"id": -1, "name": "old"}
LF_2PC = twophase.driver(lf.CONNECTOR)  # the engine's two phases over LocalFile's storage verbs


# ------------------------------------------------------------------------------------------------
# helpers
# ------------------------------------------------------------------------------------------------

def make_input(root: Path, files: int = 3, rows: int = 10) -> list[dict]:
    """csv input files with unique ids; the rows they hold."""
    root.mkdir(parents=True, exist_ok=True)
    expected = []
    for f in range(files):
        lines = []
        for i in range(rows):
            row = {"id": f * 1000 + i, "name": f"n{f}_{i}"}
            expected.append(row)
            lines.append(f"{row['id']},{row['name']}\n")
        (root / f"part{f}.csv").write_text("".join(lines))
    return expected


def seed(target: Path) -> None:
    """A target that already holds a file of an earlier run (it must survive every fault)."""
    target.mkdir(parents=True, exist_ok=True)
    (target / "old.json").write_text(json.dumps(OLD) + "\n")


def visible(target: Path) -> list[dict]:
    """Rows a reader of the target sees, as the LocalFile source lists them (journal-aware), sorted."""
    files = lf.list_input_files({"path": str(target)})
    rows = [json.loads(line) for f in files for line in Path(f).read_text().splitlines() if line]
    return sorted(rows, key=lambda r: r["id"])


def raw_files(target: Path) -> list[Path]:
    return sorted(p for p in target.rglob("*.json") if not any(x.startswith(".") for x in p.relative_to(target).parts))


def assert_exactly_once(target: Path, expected: list[dict]) -> None:
    got = visible(target)
    counts = Counter(r["id"] for r in got)
    assert [i for i, n in counts.items() if n > 1] == [], "duplicated rows"
    assert got == sorted([OLD, *expected], key=lambda r: r["id"])
    assert not (target / lf.STAGING_DIR).exists(), "staging left behind"
    assert not (target / lf.COMMITS_DIR / lf.PENDING_DIR).exists(), "a commit journal left pending"
    assert len(raw_files(target)) == len(lf.list_input_files({"path": str(target)}))


def job(inp: Path, targets: list[Path], batch: int = 4, extra: str = "") -> str:
    sinks = "\n".join(f'  LocalFile {{ plugin_input = "s", path = "{t}", file_format_type = "json", '
                      f"batch_size = {batch}{', ' + extra if extra else ''} }}" for t in targets)
    return f"""
env {{ job.name = "faults" }}
source {{ LocalFile {{ plugin_output = "s", path = "{inp}", file_format_type = "csv",
                      schema = {{ fields {{ id = int, name = string }} }} }} }}
sink {{
{sinks}
}}
"""


# ------------------------------------------------------------------------------------------------
# the spec
# ------------------------------------------------------------------------------------------------

def test_spec_parsing_and_clear_errors():
    assert faults.parse(None) == () and faults.parse("  ") == ()
    f, g = faults.parse(" sink.write:2@3=kill+500 ; pipeline.committed:abc_to_def_1234")
    assert (f.point, f.pipeline, f.attempts, f.action, f.count) == ("sink.write", "2", 3, "kill", 500)
    assert (g.point, g.pipeline, g.attempts, g.action, g.count) == ("pipeline.committed", "abc_to_def_1234", 1,
                                                                     "raise", 0)
    (h,) = faults.parse("sink.move=raise+2")
    assert (h.pipeline, h.action, h.count) == ("*", "raise", 2)
    bad = {
        "sink.comit": "unknown point 'sink.comit'",
        "sink.commit=explode": "unknown action 'explode'",
        "sink.commit@0": "attempts (after '@') must be an integer >= 1, found '0'",
        "sink.write+x": "count (after '+') must be an integer >= 0, found 'x'",
        "sink.commit;": "entry 2 is empty",
        "sink.commit:1:2": "expected point[:pipeline][@attempts][=action][+count]",
        "sink.write+3=kill": "count (after '+') must be an integer >= 0, found '3=kill'",
    }
    for spec, message in bad.items():
        with pytest.raises(faults.FaultSpecError, match="SEATUNNEL_FAULTS") as info:
            faults.parse(spec)
        assert message in str(info.value), (spec, str(info.value))


def test_bad_spec_or_unknown_pipeline_is_a_usage_error_before_spark(tmp_path, monkeypatch, capsys):
    conf = tmp_path / "job.conf"
    conf.write_text(job(tmp_path / "in", [tmp_path / "out"]))
    monkeypatch.setenv(faults.ENV, "sink.commit=boom")
    assert main(["run", str(conf), "--work-dir", str(tmp_path / "work")]) == 2
    assert "error: SEATUNNEL_FAULTS entry 1 'sink.commit=boom': unknown action 'boom'" in capsys.readouterr().err
    monkeypatch.setenv(faults.ENV, "sink.commit:7")
    assert main(["run", str(conf), "--work-dir", str(tmp_path / "work")]) == 2
    assert "no pipeline '7' in this job; pipelines: 1 (" in capsys.readouterr().err
    assert not (tmp_path / "work").exists()
    with pytest.raises(SystemExit):
        main(["run", str(conf), "--attempt", "0"])
    assert "--attempt: must be an integer >= 1, found '0'" in capsys.readouterr().err


def test_faults_unset_change_nothing(spark, plan_of, tmp_path):
    plan = plan_of(job(tmp_path / "in", [tmp_path / "out"]))
    ctx = RunContext(spark, plan, plan.pipelines[0], "r1")
    df = spark.range(3)
    assert faults.inject_into_write(ctx, plan.pipelines[0].sinks[0], df) is df
    for point in faults.POINTS:
        faults.checkpoint(ctx, point, plan.pipelines[0].sinks[0])  # no-op
    assert faults.from_environment({}) == {}
    # attempts and pipeline filters: attempt 2 and another pipeline are not armed
    (f,) = faults.parse("sink.commit:1@1")
    assert f.applies(ctx) and not f.applies(RunContext(spark, plan, plan.pipelines[0], "r1", attempt=2))
    assert not faults.parse("sink.commit:2")[0].applies(ctx)
    assert faults.parse(f"sink.commit:{plan.pipelines[0].task_id}")[0].applies(ctx)


# ------------------------------------------------------------------------------------------------
# a commit killed half way (no abort), in process: roll forward, or back when the staging is lost
# ------------------------------------------------------------------------------------------------

def test_commit_stopped_between_moves_rolls_forward_and_readers_never_see_it(spark, plan_of, tmp_path):
    out = tmp_path / "out"
    seed(out)
    conf = job(tmp_path / "in", [out], batch=2)
    plan = plan_of(conf)
    p = plan.pipelines[0]
    dying = RunContext(spark, plan, p, "r1", options=faults.from_environment({faults.ENV: "sink.move+2"}))
    df = with_kind(spark.range(10).selectExpr("cast(id as int) id", "concat('n', id) name").repartition(1))
    info = LF_2PC.prepare(dying, p.sinks[0], {"s": df})
    moves = info.tables[0].detail["moves"]
    assert len(moves) == 5
    with pytest.raises(faults.InjectedFault):
        LF_2PC.commit(dying, p.sinks[0], info)  # no abort follows: what a SIGKILL leaves
    assert len(raw_files(out)) == 3  # two files moved, plus the old one
    assert visible(out) == [OLD]  # the source hides the files of the unrecorded commit
    leftover = Path(moves[3][1]).parent / f".{Path(moves[3][1]).name}.0badc0de.copying"
    leftover.write_text("half a copy")  # what a copy across file systems killed half way leaves
    journal = Path(info.tables[0].detail["journal"])
    (journal.parent / f".{journal.name}.1234abcd.tmp").write_text("{")  # a journal write killed half way
    retry = RunContext(spark, plan, p, "r1", attempt=2)
    again = LF_2PC.prepare(retry, p.sinks[0], {"s": df})
    assert again.tables[0].committed  # the interrupted commit, finished by the retry's token
    LF_2PC.commit(retry, p.sinks[0], again)
    assert not leftover.exists()
    assert_exactly_once(out, [{"id": i, "name": f"n{i}"} for i in range(10)])
    marker = json.loads((out / lf.COMMITS_DIR / "r1" / p.task_id / "sink-0" / "s.committed").read_text())["body"]
    assert marker["recovered"] is True and marker["files"] == [dst for _, dst in moves]


def test_commit_stopped_with_its_staging_lost_is_written_again(spark, plan_of, tmp_path):
    out, tmp = tmp_path / "out", tmp_path / "worker-local-tmp"
    seed(out)
    plan = plan_of(job(tmp_path / "in", [out], batch=3, extra=f'tmp_path = "{tmp}"'))
    p = plan.pipelines[0]
    dying = RunContext(spark, plan, p, "r1", options=faults.from_environment({faults.ENV: "sink.move+1"}))
    df = with_kind(spark.range(9).selectExpr("cast(id as int) id", "concat('n', id) name").repartition(1))
    info = LF_2PC.prepare(dying, p.sinks[0], {"s": df})
    with pytest.raises(faults.InjectedFault):
        LF_2PC.commit(dying, p.sinks[0], info)  # one file of three moved, then the driver died
    assert len(raw_files(out)) == 2 and visible(out) == [OLD]
    shutil.rmtree(tmp)  # ... and the retry runs on another worker: the staging is gone
    retry = RunContext(spark, plan, p, "r1", attempt=2)
    info = LF_2PC.prepare(retry, p.sinks[0], {"s": df})
    assert not info.tables[0].committed  # the lost commit was taken back: staged again
    LF_2PC.commit(retry, p.sinks[0], info)
    assert_exactly_once(out, [{"id": i, "name": f"n{i}"} for i in range(9)])


# ------------------------------------------------------------------------------------------------
# SIGKILL of the driver through seatunnel-airflow run and spark-submit, then the restore
# ------------------------------------------------------------------------------------------------

def run_cli(*args: str, cwd: Path, spec: str | None) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    env.pop(faults.ENV, None)
    if spec:
        env[faults.ENV] = spec
    return subprocess.run([CLI, *args], capture_output=True, text=True, cwd=cwd, env=env, timeout=600)


#: A representative sweep through the CLI and spark-submit: the points of phase one, where a raise has the engine
#: discard the staging (its abort) and a SIGKILL leaves it behind (part of a write, or a whole staged table), a kill
#: after the commit, and a raise inside a Spark task. The kills in the commit phase run in other tests: through the
#: CLI by tests/test_third_party_connector.py (``sink.move``, ``sink.commit``), on LocalFile through Airflow by
#: tests/airflow/test_job_group_run.py (``sink.move``), on a Spark Connect server by tests/airflow/test_connect_mode.py
#: and test_connect_jdbc.py; the sink conformance suite (tests/conformance/test_sinks.py) restores LocalFile and every
#: sink from a fault at each of its points.
KILLS = {  # pipeline -> (fault, does the first attempt leave the target complete?)
    1: ("sink.write:1=kill+5", False),
    2: ("sink.prepared:2=kill", False),
    3: ("pipeline.committed:3=kill", True),
    4: ("sink.write:4=raise+3", False),  # a raise inside a Spark task, through spark-submit
}


def test_kills_through_the_cli_then_restore(plan_of, tmp_path):
    expected = make_input(tmp_path / "in", files=2, rows=10)
    outs = [tmp_path / f"out{n}" for n in range(1, len(KILLS) + 2)]  # one pipeline more, without a fault
    for t in outs:
        seed(t)
    sinks = "\n".join(f'  LocalFile {{ plugin_input = "s{n}", path = "{t}", file_format_type = "json", batch_size = 4 }}'
                      for n, t in enumerate(outs))
    sources = "\n".join(f'  LocalFile {{ plugin_output = "s{n}", path = "{tmp_path / "in"}", file_format_type = "csv", '
                        f"schema = {{ fields {{ id = int, name = string }} }} }}" for n in range(len(outs)))
    text = (f'env {{ job.name = "kills", spark.ui.enabled = false }}\n'
            f"source {{\n{sources}\n}}\nsink {{\n{sinks}\n}}\n")
    plan = plan_of(text)
    conf = tmp_path / "job.conf"
    target = {p.id: Path(p.sinks[0].config["path"]) for p in plan.pipelines}
    plugin = {p.id: f"{p.sinks[0].ref} LocalFile" for p in plan.pipelines}
    spec = ";".join(fault for fault, _ in KILLS.values())
    metrics_file = tmp_path / "metrics.json"
    common = ["--run-id", "r1", "--master", "local[1]", "--max-parallel", "2", "--work-dir", str(tmp_path / "work"),
              "--metrics-file", str(metrics_file)]
    first = run_cli("run", str(conf), *common, cwd=tmp_path, spec=spec)
    assert first.returncode == 1, first.stdout + first.stderr
    assert "Traceback" not in first.stderr
    errors = {int(line.split()[2]): line for line in first.stderr.splitlines() if line.startswith("error: pipeline ")}
    assert sorted(errors) == sorted(KILLS), first.stderr  # the last pipeline committed
    job_metrics = json.loads(metrics_file.read_text())
    by_id = {p["pipeline"]: p for p in job_metrics["pipelines"]}
    for n, (fault, complete) in KILLS.items():
        point = fault.split(":")[0]
        message = errors[n]
        assert f"injected fault at {point}" in message and by_id[n]["task_id"] in message, message
        if "=kill" in fault:
            assert "exited with 137" in message and "SIGKILL" in message, message
        else:
            assert by_id[n]["error"]["deterministic"] is False and by_id[n]["error"]["kind"] == "fault"
            assert by_id[n]["error"]["plugin"] == plugin[n] and f"failed in {plugin[n]}" in message
        assert visible(target[n]) == (sorted([OLD, *expected], key=lambda r: r["id"]) if complete else [OLD]), n
    clean = len(outs)
    assert by_id[clean]["status"] == "FINISHED"
    assert_exactly_once(target[clean], expected)
    # killed in phase one (while writing, once staged): the staging stays, readers do not see it
    assert (target[1] / lf.STAGING_DIR).exists() and (target[2] / lf.STAGING_DIR).exists()

    # the restore: the failed pipelines again (as Airflow retries the failed tasks), same run id, attempt 2
    again = [arg for n in KILLS for arg in ("--pipeline", str(n))]
    restore = run_cli("run", str(conf), *common, *again, "--attempt", "2", cwd=tmp_path, spec=spec)
    assert restore.returncode == 0, restore.stdout + restore.stderr
    for t in target.values():
        assert_exactly_once(t, expected)
    job_metrics = json.loads(metrics_file.read_text())
    assert job_metrics["attempt"] == 2 and all(p["attempt"] == 2 for p in job_metrics["pipelines"])
    assert {p["pipeline"]: p["write_count"] for p in job_metrics["pipelines"]} == {n: len(expected) for n in KILLS}


def test_a_pipeline_driver_is_the_python_process_not_the_spark_submit_script(tmp_path):
    """Until spark-submit's script exec's into its JVM, it carries the driver's arguments: only the Python
    process running runtime/app.py (of the given plan) is the driver."""
    import subprocess
    import sys
    import time

    from airflow_provider_seatunnel.runtime.launcher import is_pipeline_driver

    args = ["/x/runtime/app.py", "--plan", str(tmp_path / "plan.json")]
    python = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)", *args])
    shell = subprocess.Popen(["/bin/sh", "-c", "sleep 60", *args])
    try:
        time.sleep(0.5)
        assert is_pipeline_driver(python.pid, str(tmp_path / "plan.json"))
        assert is_pipeline_driver(python.pid)
        assert not is_pipeline_driver(python.pid, str(tmp_path / "other.json"))
        assert not is_pipeline_driver(shell.pid, str(tmp_path / "plan.json"))
        assert not is_pipeline_driver(2 ** 22 + 1)  # no such process
    finally:
        python.kill()
        shell.kill()
