"""`make test-deps` provides everything the tests need on a fresh machine (empty ~/.m2), and the test markers
split the suite into unit and integration tests (tests/markers.py)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests import markers
from tests.conftest import ROOT

sys.path.insert(0, str(ROOT / "scripts"))
import check_test_deps


def make(home: Path, *args: str) -> str:
    done = subprocess.run(["make", "-s", "-C", str(ROOT), f"HOME={home}", *args], capture_output=True, text=True,
                          env={**os.environ, "HOME": str(home)}, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def pyspark_minors() -> set[str]:
    """The PySpark minor versions the tests run on: .venv's and the lowest-versions environment's."""
    pins = [re.search(r"^pyspark==(\d+\.\d+)", (ROOT / ".ci" / name).read_text(), re.M)
            for name in ("constraints.txt", "constraints-lowest.txt")]
    return {m.group(1) for m in pins if m}


def test_a_fresh_machine_fetches_delta_for_every_pyspark_the_tests_run_on(tmp_path):
    """With an empty ~/.m2, `make test-deps` fetches Delta's build for each PySpark minor version the suite runs
    on (tests/plan/test_delta_config.py asks for 4.1's and 4.2's), Iceberg's, Kafka's and S3A's, each after the
    Debian packages (Maven among them) are there."""
    commands = make(tmp_path, "-n", "test-deps")
    assert pyspark_minors() >= {"4.1", "4.2"}
    for minor in pyspark_minors():
        assert f"-Dartifact=io.delta:delta-spark_{minor}_2.13:4.4.0" in commands, commands
    for artifact in ("iceberg-spark-runtime-4.1_2.13", "hadoop-aws", "kafka_2.13", "spark-sql-kafka-0-10_2.13",
                     "spark-avro_2.13", "mysql-connector-j"):
        assert f":{artifact}:" in commands
    assert commands.index("apt-get install") < commands.index("mvn "), "mvn runs before Maven is installed"
    # into $HOME/.m2, where the connectors look (Maven's default is the passwd entry's home, whatever HOME says)
    fetches = [line for line in commands.splitlines() if "-Dartifact=" in line]
    assert fetches and all(f"-Dmaven.repo.local={tmp_path}/.m2/repository " in line for line in fetches), fetches


def test_every_debian_path_a_test_names_is_checked_and_installed():
    """The fast path of `make test-deps` (nothing to install) checks every Debian file a test or fixture names, and
    each of those files comes from a package `make test-deps` installs."""
    lists = dict(line.split("=", 1) for line in make(Path.home(), "print-test-deps").splitlines())
    files, packages = lists["files"].split(), lists["packages"].split()
    assert {"maven", "fonts-dejavu-core", "libxerial-sqlite-jdbc-java", "libmariadb-java"} <= set(packages)
    unchecked = [name for name in check_test_deps.named_by_tests()
                 if name not in check_test_deps.OUTSIDE and not check_test_deps.covered(name, files)]
    assert unchecked == []
    installable = check_test_deps.closure(packages)
    import glob

    owners = {pattern: check_test_deps.owner(glob.glob(pattern)[0]) for pattern in files if glob.glob(pattern)}
    assert {p: o for p, o in owners.items() if o not in installable} == {}


def test_the_check_finds_a_path_no_step_provides(tmp_path, capsys):
    """A test naming a Debian file that TEST_FILES leaves out is reported (the check can fail)."""
    (tmp_path / "tests").mkdir()
    usr = "/" + "usr"  # not a literal path: the check reads this file too
    (tmp_path / "tests" / "test_x.py").write_text(f'SERVER = "{usr}/sbin/nginx"\nJAR = "{usr}/share/java/h2.jar"\n')
    problems = check_test_deps.check(["bash"], [], [], root=tmp_path)
    assert [p.split(":")[0] for p in problems] == [f"{usr}/sbin/nginx", f"{usr}/share/java/h2.jar"]
    assert f"UNCHECKED {usr}/sbin/nginx" in capsys.readouterr().out


def _ids(*args: str) -> set[str]:
    done = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", *args],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    return {line for line in done.stdout.splitlines() if "::" in line}


def test_servers_and_spark_are_integration_tests_and_the_rest_are_units():
    """Tests of a server or of Spark are marked `integration` (by fixture, helper import or module) and left out
    of `make unit`; compiler tests are units."""
    units = _ids("-m", "not integration", "tests/plan/test_delta_config.py", "tests/runtime/test_jdbc_source.py",
                 "tests/runtime/test_redis.py", "tests/test_cli.py", "tests/config/test_loader.py")
    assert any(i.startswith("tests/plan/test_delta_config.py::") for i in units)
    assert any(i.startswith("tests/config/test_loader.py::") for i in units)
    assert not [i for i in units if i.startswith(("tests/runtime/test_jdbc_source.py", "tests/runtime/test_redis.py",
                                                  "tests/test_cli.py"))]
    postgres = _ids("-m", "postgres", "tests/runtime/test_jdbc_source.py", "tests/test_packaging.py")
    assert any(i.startswith("tests/runtime/test_jdbc_source.py::") for i in postgres)
    assert "tests/test_packaging.py::test_jdbc_conn_id_loads_the_driver_class_and_jar_its_connection_names" in postgres
    assert "tests/test_packaging.py::test_provider_metadata_entry_point" not in postgres


def test_the_unit_guard_fails_a_unit_test_that_starts_a_jvm(tmp_path):
    """Under SEATUNNEL_UNIT=1 a test that starts Java (here or in a child process) fails, naming what it started."""
    test = tmp_path / "test_starts_java.py"
    test.write_text("import subprocess\n\ndef test_java():\n"
                    "    subprocess.run(['sh', '-c', 'java -version'])\n\ndef test_plain():\n    assert True\n")
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", "0",
                           "-p", "tests.conftest", "-c", str(ROOT / "pyproject.toml"), str(test)],
                          cwd=ROOT, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "SEATUNNEL_UNIT": "1", "PYTHONPATH": str(ROOT)})
    assert done.returncode == 1, done.stdout + done.stderr
    assert "test_java is a unit test (SEATUNNEL_UNIT=1) but started java -version" in done.stdout
    assert "2 passed, 1 error" in done.stdout  # test_java's teardown fails it; test_plain passes


@pytest.mark.parametrize("count, unit, expected", [(400, "1", 100), (40, "1", 20), (400, "", 400)])
def test_property_tests_run_fewer_examples_in_make_unit(monkeypatch, count, unit, expected):
    monkeypatch.setenv("SEATUNNEL_UNIT", unit)
    assert markers.examples(count) == expected
