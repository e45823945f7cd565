"""The driver JVM's start-up settings (runtime/jvm_startup.py): the class-data sharing archive (made once,
published only whole, keyed by Java and Spark, the user's own choice winning), no UI and the later
server compiler for a local master. Unit tests on a stand-in Java and Spark home, and one run of a job with the archive."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from airflow_provider_seatunnel.runtime import jvm_startup as js
from airflow_provider_seatunnel.runtime.launcher import Submission, local_launch, write_plan_file


@pytest.fixture
def homes(tmp_path):
    """A stand-in Java (bin/java, lib/server/libjvm.so) and Spark home (jars/), and the archive directory."""
    java = tmp_path / "jdk"
    (java / "bin").mkdir(parents=True)
    (java / "lib" / "server").mkdir(parents=True)
    (java / "bin" / "java").write_text("#!/bin/sh\n")
    (java / "lib" / "server" / "libjvm.so").write_bytes(b"jvm-1")
    spark = tmp_path / "spark"
    (spark / "jars").mkdir(parents=True)
    (spark / "jars" / "spark-core.jar").write_bytes(b"core-1")
    return {"JAVA_HOME": str(java), "SPARK_HOME": str(spark), "SEATUNNEL_JVM_ARCHIVE_DIR": str(tmp_path / "jvm")}


def _dump(archive: js.ClassArchive, data: bytes = b"classes") -> None:
    """What the JVM does at exit with -XX:ArchiveClassesAtExit."""
    assert archive.creating is not None
    archive.creating.write_bytes(data)


def test_the_first_launch_creates_the_archive_and_the_next_ones_map_it(homes):
    first = js.class_archive(homes)
    assert first is not None and first.creating is not None
    assert first.java_option == f"-XX:ArchiveClassesAtExit={first.creating} -Xlog:cds*=off"  # a quiet log
    assert stat.S_IMODE(os.stat(homes["SEATUNNEL_JVM_ARCHIVE_DIR"]).st_mode) == 0o700  # code the JVM runs
    assert js.class_archive(homes) is None  # another launch meanwhile: no archive, no second writer
    _dump(first)
    assert first.finish(True) and first.path.read_bytes() == b"classes"
    assert not first.creating.exists() and first.lock is not None and not first.lock.exists()
    second = js.class_archive(homes)
    assert second == js.ClassArchive(first.path)
    assert second.java_option == f"-XX:SharedArchiveFile={first.path}"
    assert not second.finish(True)  # a launch that mapped it publishes nothing


def test_a_failed_or_silent_launch_publishes_nothing_and_frees_the_lock(homes):
    failed = js.class_archive(homes)
    _dump(failed, b"half")
    assert not failed.finish(False)
    assert not failed.path.exists() and not failed.creating.exists() and not failed.lock.exists()
    silent = js.class_archive(homes)  # a JVM that wrote nothing (the user's --conf replaced the option)
    assert silent is not None and silent.creating is not None
    assert not silent.finish(True) and not silent.path.exists() and not silent.lock.exists()


def test_a_new_java_or_spark_gets_its_own_archive(homes):
    first = js.class_archive(homes)
    _dump(first)
    first.finish(True)
    (Path(homes["JAVA_HOME"]) / "lib" / "server" / "libjvm.so").write_bytes(b"jvm-2, an update")
    after_java = js.class_archive(homes)
    assert after_java.creating is not None and after_java.path != first.path
    _dump(after_java)
    after_java.finish(True)
    (Path(homes["SPARK_HOME"]) / "jars" / "delta.jar").write_bytes(b"delta")
    after_jar = js.class_archive(homes)
    assert after_jar.creating is not None and after_jar.path not in (first.path, after_java.path)
    other_path = js.class_archive(homes, class_path="/opt/extra.jar")
    assert other_path is not None and other_path.path != after_jar.path  # another driver classpath


def test_archives_beyond_the_kept_ones_are_pruned_least_recently_used_first(homes):
    paths = []
    for i in range(js.KEEP_ARCHIVES + 1):
        (Path(homes["SPARK_HOME"]) / "jars" / "spark-core.jar").write_bytes(b"core-%d" % i)
        archive = js.class_archive(homes)
        _dump(archive)
        archive.finish(True)
        os.utime(archive.path, (1000 + i, 1000 + i))
        paths.append(archive.path)
    assert [p.exists() for p in paths] == [False] + [True] * js.KEEP_ARCHIVES


def test_a_lock_left_by_a_dead_launch_is_taken_over(homes):
    first = js.class_archive(homes)
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    first.lock.write_text(dead.stdout.strip())  # its creator's process has exited
    again = js.class_archive(homes)
    assert again is not None and again.creating is not None and again.creating != first.creating


def test_off_no_java_a_foreign_directory_or_a_link_mean_no_archive(homes, tmp_path):
    assert js.class_archive({**homes, "SEATUNNEL_JVM_ARCHIVE_DIR": "off"}) is None
    assert js.class_archive({**homes, "JAVA_HOME": str(tmp_path / "nowhere"), "PATH": ""}) is None
    assert js.class_archive({k: v for k, v in homes.items() if k != "SPARK_HOME"}) is None
    target = tmp_path / "elsewhere"
    target.mkdir()
    (tmp_path / "link").symlink_to(target)
    assert js.class_archive({**homes, "SEATUNNEL_JVM_ARCHIVE_DIR": str(tmp_path / "link")}) is None
    assert list(target.iterdir()) == []


def test_the_users_sharing_choice_wins_and_other_java_options_are_kept(homes):
    for own in ("-Xshare:off", "-XX:SharedArchiveFile=/mine.jsa", "-Dx=1 -XX:ArchiveClassesAtExit=/mine.jsa"):
        assert js.archive_for({js.JAVA_OPTIONS: own}, {}, homes) is None
        assert js.archive_for({}, {js.JAVA_OPTIONS: own}, homes) is None  # spark-defaults.conf's
        conf = js.startup_conf({js.JAVA_OPTIONS: own}, {}, "yarn", js.ClassArchive(Path("/a.jsa")))
        assert conf[js.JAVA_OPTIONS] == own
    archive = js.archive_for({js.JAVA_OPTIONS: "-Dx=1"}, {}, homes)
    assert archive is not None
    conf = js.startup_conf({js.JAVA_OPTIONS: "-Dx=1"}, {}, "yarn", archive)
    assert conf[js.JAVA_OPTIONS] == f"-Dx=1 {archive.java_option}"
    from_defaults = js.startup_conf({}, {js.JAVA_OPTIONS: "-Dsite=1"}, "yarn", archive)
    assert from_defaults[js.JAVA_OPTIONS] == f"-Dsite=1 {archive.java_option}"  # the site's options stay
    assert js.startup_conf({}, {}, "yarn", None) == {}


def test_the_ui_is_off_for_a_local_master_unless_set():
    assert js.startup_conf({}, {}, "local[*]", None)[js.UI_ENABLED] == "false"
    assert js.startup_conf({}, {}, "local", None)[js.UI_ENABLED] == "false"
    assert js.startup_conf({js.UI_ENABLED: "true"}, {}, "local[2]", None)[js.UI_ENABLED] == "true"
    assert js.UI_ENABLED not in js.startup_conf({}, {js.UI_ENABLED: "true"}, "local[2]", None)  # spark-defaults.conf's wins
    for cluster in ("yarn", "spark://h:7077", "k8s://https://h:6443", None):
        assert js.UI_ENABLED not in js.startup_conf({}, {}, cluster, None)


def test_a_local_driver_compiles_with_the_server_compiler_later_unless_the_job_chooses():
    """The later server compiler (LATE_C2) goes to a local master's driver, after the job's own options and
    the archive's; a cluster's driver, and options that already choose how the JVM compiles, get none."""
    archive = js.ClassArchive(Path("/a.jsa"))
    assert js.startup_conf({}, {}, "local[*]", None)[js.JAVA_OPTIONS] == js.LATE_C2
    assert js.startup_conf({js.JAVA_OPTIONS: "-Xmx2g"}, {}, "local[2]", archive)[js.JAVA_OPTIONS] == (
        f"-Xmx2g {archive.java_option} {js.LATE_C2}")
    assert js.startup_conf({}, {js.JAVA_OPTIONS: "-Dsite=1"}, "local", None)[js.JAVA_OPTIONS] == f"-Dsite=1 {js.LATE_C2}"
    for cluster in ("yarn", "spark://h:7077", None):
        assert js.startup_conf({}, {}, cluster, archive)[js.JAVA_OPTIONS] == archive.java_option
    for own in ("-XX:TieredStopAtLevel=1", "-Dx=1 -XX:-TieredCompilation", "-XX:Tier4InvocationThreshold=5000",
                "-XX:CompileThresholdScaling=0.5", "-Xint", "-Xmx1g -Xcomp"):
        assert js.chooses_compilation(own)
        assert js.startup_conf({js.JAVA_OPTIONS: own}, {}, "local[2]", None)[js.JAVA_OPTIONS] == own
        assert js.JAVA_OPTIONS not in js.startup_conf({}, {js.JAVA_OPTIONS: own}, "local[2]", None)
    for other in ("", "-Xmx2g -XX:+UseG1GC", "-Dname=-Xint2", "-XX:MaxInlineLevel=15"):
        assert not js.chooses_compilation(other)


def test_this_java_accepts_the_late_compiler_options():
    """The options are the running Java's own (no -XX:+IgnoreUnrecognizedVMOptions here): a JVM that did
    not know one would refuse to start."""
    java = js.java_executable(os.environ)
    if java is None:
        pytest.skip("no java")
    proc = subprocess.run([str(java), *js.LATE_C2.split(), "-version"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr


def test_spark_defaults_are_read_as_spark_submit_reads_them(tmp_path):
    conf = tmp_path / "conf"
    conf.mkdir()
    (conf / "spark-defaults.conf").write_text("# site\nspark.ui.enabled   true\n! old\n"
                                              "spark.driver.extraJavaOptions=-Da=1 -Db=2\nspark.x: y \n\n")
    assert js.spark_defaults({"SPARK_CONF_DIR": str(conf)}) == {
        "spark.ui.enabled": "true", "spark.driver.extraJavaOptions": "-Da=1 -Db=2", "spark.x": "y"}
    assert js.spark_defaults({"SPARK_HOME": str(tmp_path)}) == js.spark_defaults({"SPARK_CONF_DIR": str(conf)})
    assert js.spark_defaults({}) == {}


JOB = """
env { job.name = "startup" }
source { FakeSource { plugin_output = "t", row.num = 2, schema = { fields { id = bigint } } } }
sink { LocalFile { plugin_input = "t", path = "/tmp/startup-out", file_format_type = "json" } }
"""


def test_the_launch_writes_the_start_up_settings_into_the_properties_file(tmp_path, plan_of, homes):
    plan = plan_of(JOB)
    p = plan.pipelines[0]
    sub = Submission.of(plan, p, write_plan_file(plan, tmp_path / "work"), "r", 1, tmp_path / "m.json")
    archive = js.ClassArchive(tmp_path / "a.jsa")
    cmd, _ = local_launch(sub, "local[1]", tmp_path / "p.properties", archive)
    lines = (tmp_path / "p.properties").read_text().splitlines()
    assert cmd[cmd.index("--properties-file") + 1] == str(tmp_path / "p.properties")
    assert {"spark.ui.enabled false",
            f"spark.driver.extraJavaOptions -XX:SharedArchiveFile={archive.path} {js.LATE_C2}"} <= set(lines)
    assert not any("ArchiveClasses" in part or "SharedArchive" in part for part in cmd)  # only in the file



@pytest.mark.parametrize("conn, creates", [({"conn_type": "spark", "host": "local[1]"}, True),
                                           ({"conn_type": "spark", "host": "yarn",
                                             "extra": {"deploy-mode": "cluster"}}, False)])
def test_the_hook_launch_takes_the_archive_and_its_metrics_release_it(tmp_path, monkeypatch, conn, creates):
    """The operator's path: a driver on this machine gets the archive's option (and no UI on a local
    master) in its properties file; reading the pipeline's metrics ends the creation (nothing was
    written: nothing published, the lock freed). A driver on the cluster gets neither."""
    import json

    from airflow_provider_seatunnel.hooks.seatunnel import SeaTunnelHook

    monkeypatch.setenv("AIRFLOW_CONN_SPARK_T", json.dumps(conn))
    monkeypatch.setenv("SEATUNNEL_JVM_ARCHIVE_DIR", str(tmp_path / "jvm"))
    hook = SeaTunnelHook(JOB, format="hocon", spark_conn_id="spark_t")
    try:
        hook.spark_submit_hook(run_id="r")
        lines = Path(hook.spark_hook._properties_file).read_text().splitlines()
        option = [line for line in lines if line.startswith(js.JAVA_OPTIONS)]
        assert ("spark.ui.enabled false" in lines) is creates
        assert len(option) == creates and all("-XX:ArchiveClassesAtExit=" in line for line in option)
        assert len(list((tmp_path / "jvm").glob("*.lock"))) == creates
        home = (hook.spark_hook._env_vars or {}).get("SPARK_HOME")  # a local driver: the lean Spark home
        assert (home is not None and Path(home).parent == Path(os.environ["SEATUNNEL_LEAN_SPARK_HOME"])) is creates
        hook.pipeline_metrics(None, "r", 1, "2026-01-01T00:00:00", None)
        assert not list((tmp_path / "jvm").glob("*.lock")) and not list((tmp_path / "jvm").glob("*.jsa"))
    finally:
        hook.cleanup()


RUN_JOB = """
env { job.name = "archived", parallelism = 1 }
source { FakeSource { plugin_output = "t", rows = [{ kind = INSERT, fields = [1, "a"] }, { kind = INSERT, fields = [2, "b"] }],
                      schema = { fields { id = bigint, name = string } } } }
transform { Sql { plugin_input = "t", plugin_output = "s", query = "select id * 10 as id, upper(name) as name from t" } }
sink { LocalFile { plugin_input = "s", path = ${out}, file_format_type = "csv" } }
"""


def test_a_job_runs_with_the_class_archive(tmp_path):
    """A run maps the session's archive (the first run of the session creates it, published whole): under
    ``-Xshare:on`` a JVM that cannot map it refuses to start, so the run passing shows the archive in use.
    The rows are the job's; the archive is the lean Spark home's (the session may hold others: a run on the full
    Spark home, such as a cluster's driver, has its own)."""
    conf = tmp_path / "job.conf"
    conf.write_text(RUN_JOB)
    archives = Path(os.environ["SEATUNNEL_JVM_ARCHIVE_DIR"])  # the session's (tests/conftest.py)
    env = dict(os.environ)
    homes = Path(os.environ["SEATUNNEL_LEAN_SPARK_HOME"])

    def lean_archive() -> Path | None:  # the archive keyed to the lean Spark home (runtime/lean_home.py)
        lean = list(homes.glob("spark-*"))
        return archives / f"driver-{js.archive_key({**os.environ, 'SPARK_HOME': str(lean[0])})}.jsa" if lean else None

    first = lean_archive()
    runs = ["create", "map"] if first is None or not first.exists() else ["map"]
    for run in runs:
        if run == "map":  # every JVM of the run (spark-submit's launcher too, on the JDK's own archive)
            env["JAVA_TOOL_OPTIONS"] = (env.get("JAVA_TOOL_OPTIONS", "") + " -Xshare:on").strip()
        out, work = tmp_path / f"out-{run}", tmp_path / f"work-{run}"
        proc = subprocess.run([sys.executable, "-m", "airflow_provider_seatunnel.cli", "run", str(conf), "-i",
                               f"out={out}", "--master", "local[1]", "--work-dir", str(work), "--keep-work-dir"],
                              env=env, capture_output=True, text=True, timeout=900)
        assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
        archive = lean_archive()
        assert archive is not None and archive.exists(), sorted(p.name for p in archives.iterdir())
        option = "ArchiveClassesAtExit" if run == "create" else f"SharedArchiveFile={archive}"
        [props] = work.glob("*.properties")
        lines = props.read_text().splitlines()
        assert any(line.startswith("spark.driver.extraJavaOptions -XX:" + option) for line in lines)
        assert "spark.ui.enabled false" in lines
        [log] = work.glob("*.log")
        assert "[cds" not in log.read_text()  # quiet when it writes the archive, and the archive maps
        assert sorted(line for f in out.rglob("*.csv") for line in f.read_text().splitlines()) == ["10,A", "20,B"]
    # nothing left of this archive's creation (another test's launch on this worker may hold another key's lock)
    assert archive is not None and not list(archives.glob(f"{archive.stem}.*.part"))
    assert not (archives / f"{archive.stem}.lock").exists()
    # the driver ran on the lean Spark home: one home, without MLlib (its archive is the one checked above)
    [lean] = homes.glob("spark-*")
    assert not list((lean / "jars").glob("spark-mllib*")) and list((lean / "jars").glob("spark-sql_*"))
