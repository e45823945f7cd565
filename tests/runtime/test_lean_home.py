"""The lean Spark home of local pipelines (runtime/lean_home.py): what it leaves out, that it follows the
installed PySpark (a new home when its jars change), that a tampered one is never used, and when a launch
gets it. Unit tests on a stand-in PySpark package (no JVM)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from airflow_provider_seatunnel.runtime import jvm_startup as js
from airflow_provider_seatunnel.runtime import lean_home as lh

JARS = ["spark-core_2.13-4.2.0.jar", "spark-sql_2.13-4.2.0.jar", "spark-hive_2.13-4.2.0.jar",
        "spark-mllib_2.13-4.2.0.jar", "spark-mllib-local_2.13-4.2.0.jar", "spark-graphx_2.13-4.2.0.jar",
        "breeze_2.13-2.1.0.jar", "spire-macros_2.13-0.18.0.jar", "arpack-3.2.0.jar", "kubernetes-model-core-7.6.1.jar",
        "spark-kubernetes_2.13-4.2.0.jar", "spark-yarn_2.13-4.2.0.jar", "vertx-core-4.5.26.jar",
        "commons-math3-3.6.1.jar", "hive-exec-2.3.10-core.jar", "parquet-hadoop-1.17.0.jar"]
KEPT = {"spark-core_2.13-4.2.0.jar", "spark-sql_2.13-4.2.0.jar", "spark-hive_2.13-4.2.0.jar", "commons-math3-3.6.1.jar",
        "hive-exec-2.3.10-core.jar", "parquet-hadoop-1.17.0.jar"}


@pytest.fixture
def package(tmp_path) -> Path:
    """A stand-in installed PySpark: bin/, python/, conf/, a module, and jars/."""
    pkg = tmp_path / "site" / "pyspark"
    for d in ("bin", "python/lib", "conf", "jars"):
        (pkg / d).mkdir(parents=True)
    (pkg / "bin" / "spark-submit").write_text("#!/bin/sh\n")
    (pkg / "conf" / "spark-defaults.conf").write_text("spark.x 1\n")
    (pkg / "__init__.py").write_text("")
    for jar in JARS:
        (pkg / "jars" / jar).write_bytes(jar.encode())
    return pkg


def _jars(home: Path) -> set[str]:
    return set(os.listdir(home / "jars"))


def test_it_links_everything_but_the_left_out_jars(package, tmp_path):
    home = lh.lean_home(package, tmp_path / "cache")
    assert home is not None and home.parent == tmp_path / "cache"
    assert stat.S_IMODE(os.stat(tmp_path / "cache").st_mode) == 0o700
    assert _jars(home) == KEPT
    assert all((home / "jars" / jar).is_symlink() and os.readlink(home / "jars" / jar) == str(package / "jars" / jar)
               for jar in KEPT)
    assert sorted(os.listdir(home)) == ["__init__.py", "bin", "conf", "jars", "python"]
    assert os.readlink(home / "bin") == str(package / "bin")
    assert (home / "conf" / "spark-defaults.conf").read_text() == "spark.x 1\n"  # spark-submit's defaults as before
    assert lh.problems(home, package) == []
    assert lh.lean_home(package, tmp_path / "cache") == home  # the next launch: the same home, unchanged


def test_a_changed_pyspark_gets_a_new_home_and_its_archive_a_new_key(package, tmp_path, monkeypatch):
    first = lh.lean_home(package, tmp_path / "cache")
    java = tmp_path / "jdk"
    (java / "bin").mkdir(parents=True)
    (java / "bin" / "java").write_text("#!/bin/sh\n")
    env = {"JAVA_HOME": str(java), "SPARK_HOME": str(first)}
    key = js.archive_key(env)
    assert key != js.archive_key({**env, "SPARK_HOME": str(package)})  # the lean home's own archive
    (package / "jars" / "spark-core_2.13-4.2.0.jar").write_bytes(b"core, upgraded in place")
    (package / "jars" / "spark-connect_2.13-4.2.0.jar").write_bytes(b"new")
    second = lh.lean_home(package, tmp_path / "cache")
    assert second is not None and second != first
    assert _jars(second) == KEPT | {"spark-connect_2.13-4.2.0.jar"}
    assert js.archive_key({**env, "SPARK_HOME": str(second)}) != key
    assert js.archive_key(env) != key  # the old home's jars changed under it too
    assert first.exists()  # the previous one is kept (KEEP_HOMES = 2), a third prunes it
    (package / "jars" / "spark-connect_2.13-4.2.0.jar").unlink()
    assert lh.lean_home(package, tmp_path / "cache") is not None and not first.exists()


@pytest.mark.parametrize("tamper", ["extra jar", "retargeted jar", "file for link", "retargeted bin", "jars link",
                                    "home link"])
def test_a_tampered_home_is_never_used(package, tmp_path, tamper):
    cache = tmp_path / "cache"
    home = lh.lean_home(package, cache)
    assert home is not None
    evil = tmp_path / "evil"
    (evil / "jars").mkdir(parents=True)
    (evil / "jars" / "x.jar").write_bytes(b"evil")
    (evil / "bin").mkdir()
    core = home / "jars" / "spark-core_2.13-4.2.0.jar"
    if tamper == "extra jar":
        os.symlink(evil / "jars" / "x.jar", home / "jars" / "x.jar")
    elif tamper == "retargeted jar":
        core.unlink()
        os.symlink(evil / "jars" / "x.jar", core)
    elif tamper == "file for link":
        core.unlink()
        core.write_bytes(b"evil")
    elif tamper == "retargeted bin":
        (home / "bin").unlink()
        os.symlink(evil / "bin", home / "bin")
    elif tamper == "jars link":
        for jar in os.listdir(home / "jars"):
            (home / "jars" / jar).unlink()
        (home / "jars").rmdir()
        os.symlink(evil / "jars", home / "jars")
    else:
        for entry in os.listdir(home / "jars"):
            (home / "jars" / entry).unlink()
        for entry in os.listdir(home):
            (home / entry).unlink() if (home / entry).is_symlink() else (home / entry).rmdir()
        home.rmdir()
        os.symlink(evil, home)
    assert lh.problems(home, package) != []
    again = lh.lean_home(package, cache)
    assert again == home and lh.problems(again, package) == []  # built anew: the tampered entries are gone
    assert _jars(again) == KEPT and not (again / "bin").resolve().is_relative_to(evil)
    assert (evil / "jars" / "x.jar").read_bytes() == b"evil"  # what the links pointed to is left alone


def test_a_cache_directory_it_cannot_own_means_the_full_home(package, tmp_path):
    os.symlink(tmp_path, tmp_path / "link")
    assert lh.lean_home(package, tmp_path / "link") is None  # a symlink where a private directory belongs


def test_which_launches_get_it(package, tmp_path):
    env = {"PATH": "/usr/bin", "SEATUNNEL_LEAN_SPARK_HOME": str(tmp_path / "cache")}
    lean = lh.lean_environment(env, package, "local[*]", {"spark.jars": "/x/postgresql.jar"})
    assert Path(lean["SPARK_HOME"]).parent == tmp_path / "cache" and lean["PATH"] == "/usr/bin"
    assert lh.lean_environment({**env, "SPARK_HOME": str(package)}, package, "local[2]")["SPARK_HOME"] == lean["SPARK_HOME"]
    unchanged = [
        lh.lean_environment(env, package, "spark://host:7077"),  # a cluster: its own Spark
        lh.lean_environment(env, package, "yarn"),
        lh.lean_environment({**env, "SPARK_HOME": str(tmp_path)}, package, "local"),  # the user's own Spark
        lh.lean_environment({**env, "SEATUNNEL_LEAN_SPARK_HOME": "off"}, package, "local"),
        lh.lean_environment(env, package, "local", {}, {"spark.jars.packages": "org.apache.spark:spark-mllib_2.13:4.2.0"}),
        lh.lean_environment(env, package, "local", {"spark.sql.extensions": "org.apache.spark.ml.X"}),
    ]
    assert [e.get("SPARK_HOME") for e in unchanged] == [None, None, str(tmp_path), None, None, None]


def test_the_left_out_jars_are_only_those_named():
    assert lh.excluded("spark-mllib_2.13-4.2.0.jar") and lh.excluded("kubernetes-client-7.6.1.jar")
    assert not any(lh.excluded(j) for j in ("spark-sql_2.13-4.2.0.jar", "spark-connect_2.13-4.2.0.jar",
                                            "commons-math3-3.6.1.jar", "netty-all-4.2.13.Final.jar",
                                            "hive-jdbc-2.3.10.jar", "spark-streaming_2.13-4.2.0.jar"))
