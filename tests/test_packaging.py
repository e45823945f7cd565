"""Packaging: version ranges whose floors a second environment tests, the PySpark start-up check,
the provider's metadata and its ``[seatunnel]`` settings, and ``jdbc_conn_id``'s connection extras.

``make test`` runs this file in both environments: the main one (newest versions, the PySpark pair
of .ci/constraints.txt) and the lowest one (.ci/constraints-lowest.txt).
"""

from __future__ import annotations

import ast
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import tomllib
import zipfile
from importlib.metadata import version
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.version import Version

from .conftest import ROOT

PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
PACKAGE = ROOT / "airflow_provider_seatunnel"


def _pins(path: Path) -> dict[str, str]:
    """``name==version`` lines of a constraint file, by normalized name."""
    out = {}
    for line in path.read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if "==" in line:
            name, pinned = line.split("==", 1)
            out[re.sub(r"[-_.]+", "-", name).lower()] = pinned.strip()
    return out


def _floor(requirement: Requirement) -> Version | None:
    floors = [Version(s.version) for s in requirement.specifier if s.operator == ">="]
    return max(floors) if floors else None


# -- ranges and floors ---------------------------------------------------------------------------


def test_dependencies_are_ranges_whose_floors_the_lowest_environment_pins():
    lowest = _pins(ROOT / ".ci" / "constraints-lowest.txt")
    for line in PYPROJECT["project"]["dependencies"]:
        req = Requirement(line)
        assert not {s.operator for s in req.specifier} & {"==", "==="}, f"{line}: an exact pin"
        floor = _floor(req)
        assert floor is not None, f"{line}: no lower bound"
        name = re.sub(r"[-_.]+", "-", req.name).lower()
        assert name in lowest, f"{name} is not pinned in .ci/constraints-lowest.txt"
        assert Version(lowest[name]) == floor, f"{name}: pyproject.toml's floor {floor}, constraints-lowest {lowest[name]}"


def test_the_installed_versions_are_within_the_declared_ranges():
    for line in PYPROJECT["project"]["dependencies"]:
        req = Requirement(line)
        assert req.specifier.contains(version(req.name), prereleases=True), f"{req.name} {version(req.name)}: {line}"
    python = ".".join(map(str, sys.version_info[:3]))
    assert Requirement(f"python{PYPROJECT['project']['requires-python']}").specifier.contains(python)


def test_both_constraint_files_pin_one_pyspark_release_and_the_lowest_is_not_the_newest():
    main, lowest = _pins(ROOT / ".ci" / "constraints.txt"), _pins(ROOT / ".ci" / "constraints-lowest.txt")
    assert main["pyspark"] == main["pyspark-client"]
    assert lowest["pyspark"] == lowest["pyspark-client"]
    assert Version(lowest["pyspark"]) < Version(main["pyspark"])


def test_pyspark_and_pyspark_client_are_capped_at_one_release_the_main_environment_runs():
    """A plain install resolves both to their highest allowed versions: capped at one release (one both
    publish: the main environment's pair), they match without a constraint file."""
    caps = {}
    for line in PYPROJECT["project"]["dependencies"]:
        req = Requirement(line)
        if req.name in ("pyspark", "pyspark-client"):
            (cap,) = [s for s in req.specifier if s.operator == "<="]
            caps[req.name] = cap.version
    main = _pins(ROOT / ".ci" / "constraints.txt")
    assert caps == {"pyspark": main["pyspark"], "pyspark-client": main["pyspark-client"]}
    # a SPARK_HOME (a cluster's Spark) is judged against the major line, not the pip pair's cap
    from airflow_provider_seatunnel.runtime.pyspark_install import _line_cap

    assert [_line_cap(s) for s in (f"<={caps['pyspark']}", ">=4.1")] == ["<5", ">=4.1"]


def _parse(path: Path) -> ast.Module:
    """``path``'s syntax tree. CPython before 3.11.8 keeps the AST validator's recursion depth in state shared by
    threads, so a parse racing another thread's parse in this process can fail with "AST constructor recursion
    depth mismatch" (a SystemError that says nothing of the source): such a parse is tried again."""
    for attempt in range(3):
        try:
            return ast.parse(path.read_text(), str(path))
        except SystemError:
            if attempt == 2:
                raise
    raise AssertionError("unreachable")


def test_pyhocon_is_a_test_dependency_that_no_module_imports():
    names = {Requirement(r).name for r in PYPROJECT["project"]["dependencies"]}
    assert "pyhocon" not in names
    assert "pyhocon" in {Requirement(r).name for r in PYPROJECT["project"]["optional-dependencies"]["test"]}
    importers = []
    for path in PACKAGE.rglob("*.py"):
        for node in ast.walk(_parse(path)):
            modules = ([a.name for a in node.names] if isinstance(node, ast.Import)
                       else [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            importers += [str(path) for m in modules if m.split(".")[0] == "pyhocon"]
    assert importers == []


def test_the_spark_provider_takes_durable():
    """``durable=`` came in the Spark provider 6.2 (our floor); below Airflow 3.3 it is accepted and does nothing."""
    from airflow.providers.apache.spark.operators.spark_submit import SparkSubmitOperator

    op = SparkSubmitOperator(task_id="t", application="app.py", durable=False)
    assert op.durable is False


# -- the PySpark start-up check --------------------------------------------------------------------


def test_pyspark_and_pyspark_client_are_one_release():
    assert version("pyspark") == version("pyspark-client")


def test_pyspark_reports_the_version_of_its_jars():
    import pyspark

    jars = Path(pyspark.__file__).parent / "jars"
    (core,) = [p.name for p in jars.glob("spark-core_*.jar")]
    jar_version = re.search(r"spark-core_[\d.]+-(.+)\.jar", core).group(1)
    assert pyspark.__version__ == jar_version == version("pyspark")


def test_the_installed_pyspark_passes_the_start_up_check():
    from airflow_provider_seatunnel.runtime.pyspark_install import ensure_consistent, inspect

    install = inspect(environ={})
    assert install is not None
    assert (install.python, install.jars, dict(install.distributions)) == (
        version("pyspark"), version("pyspark"), {"pyspark": version("pyspark"), "pyspark-client": version("pyspark")})
    assert install.problems() == []
    ensure_consistent()


def _site(root: Path, python: str, jars: str, dists: dict[str, str]) -> Path:
    """A site directory laid out as pip leaves one: pyspark/version.py (written by the distribution
    installed last), pyspark/jars/spark-core_2.13-<jars>.jar, and a .dist-info per distribution."""
    package = root / "site" / "pyspark"
    (package / "jars").mkdir(parents=True)
    (package / "version.py").write_text(f"__version__: str = '{python}'\n")
    (package / "jars" / f"spark-core_2.13-{jars}.jar").write_bytes(b"")
    (package / "jars" / f"spark-sql_2.13-{jars}.jar").write_bytes(b"")
    for name, v in dists.items():
        info = root / "site" / f"{name.replace('-', '_')}-{v}.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {v}\n")
    return package


def test_a_mixed_pyspark_install_is_refused_naming_both_versions_and_the_fix(tmp_path):
    """pyspark 4.2.1 installed, then pyspark-client 4.2.0 over it: version.py says 4.2.0, the jars are 4.2.1."""
    from airflow_provider_seatunnel.runtime.pyspark_install import PySparkMismatch, check, inspect

    one = inspect(_site(tmp_path / "one", "4.2.0", "4.2.0", {"pyspark": "4.2.0", "pyspark-client": "4.2.0"}), {})
    assert one.problems() == []
    mixed = inspect(_site(tmp_path / "mixed", "4.2.0", "4.2.1", {"pyspark": "4.2.1", "pyspark-client": "4.2.0"}), {})
    assert (mixed.python, mixed.jars) == ("4.2.0", "4.2.1")
    with pytest.raises(PySparkMismatch) as info:
        check(mixed)
    message = str(info.value)
    assert "pyspark 4.2.1 and pyspark-client 4.2.0" in message
    assert "pip install --force-reinstall --no-deps 'pyspark==4.2.0' 'pyspark-client==4.2.0'" in message
    # pyspark alone, its version file from another release (a half-finished upgrade)
    torn = inspect(_site(tmp_path / "torn", "4.1.0", "4.2.0", {"pyspark": "4.2.0"}), {})
    assert any("says it is 4.1.0" in p and "distribution is 4.2.0" in p for p in torn.problems())


JOB = """
env { job.name = "check" }
source { FakeSource { plugin_output = "t", row.num = 2, schema = { fields { id = bigint } } } }
sink { Console { plugin_input = "t" } }
"""


def _fake_spark_home(root: Path, release: str, python: str | None = None) -> Path:
    """A Spark distribution: jars/spark-core_2.13-<release>.jar and python/lib/pyspark.zip (``python``)."""
    (root / "jars").mkdir(parents=True)
    (root / "jars" / f"spark-core_2.13-{release}.jar").write_bytes(b"")
    (root / "python" / "lib").mkdir(parents=True)
    with zipfile.ZipFile(root / "python" / "lib" / "pyspark.zip", "w") as z:
        z.writestr("pyspark/version.py", f"__version__: str = '{python or release}'\n")
    return root


def test_a_spark_home_is_judged_by_its_own_python_files_jars_and_release(tmp_path):
    """With SPARK_HOME naming another Spark, the driver runs that Spark's pyspark.zip: the installed
    package does not matter (even mixed), that Spark's files and release do."""
    from airflow_provider_seatunnel.runtime.pyspark_install import inspect

    mixed = _site(tmp_path / "mixed", "4.2.0", "4.3.0", {"pyspark": "4.3.0", "pyspark-client": "4.2.0"})
    good = _fake_spark_home(tmp_path / "spark-4.1.3", "4.1.3")
    assert inspect(mixed, {"SPARK_HOME": str(good)}).problems() == []
    assert inspect(mixed, {"SPARK_HOME": str(mixed)}).problems() != []  # SPARK_HOME = the installed package
    torn = inspect(mixed, {"SPARK_HOME": str(_fake_spark_home(tmp_path / "torn", "4.2.1", python="4.2.0"))})
    (problem,) = torn.problems()
    assert "its Python files (python/lib/pyspark.zip) are 4.2.0, its jars" in problem and "4.2.1" in problem


def test_the_command_line_refuses_a_spark_home_of_another_release_before_spark_submit(tmp_path):
    conf = tmp_path / "job.conf"
    conf.write_text(JOB)
    home = _fake_spark_home(tmp_path / "spark-3.5.1", "3.5.1")
    env = {**os.environ, "SPARK_HOME": str(home), "SEATUNNEL_PLAN_CACHE": "off"}
    proc = subprocess.run([sys.executable, "-m", "airflow_provider_seatunnel.cli", "run", str(conf)], env=env,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert f"SPARK_HOME={home} holds Spark 3.5.1" in proc.stderr
    assert "but this package runs on PySpark <5,>=4.1" in proc.stderr
    assert f"unset SPARK_HOME to use the installed PySpark {version('pyspark')}" in proc.stderr
    assert "submitted" not in proc.stdout  # no spark-submit started


def test_the_hook_fails_the_task_without_retry_on_a_spark_home_of_another_release(tmp_path, monkeypatch):
    from airflow.sdk.exceptions import AirflowFailException

    from airflow_provider_seatunnel.hooks.seatunnel import SeaTunnelHook

    monkeypatch.setenv("SPARK_HOME", str(_fake_spark_home(tmp_path / "spark", "3.5.1")))
    hook = SeaTunnelHook(JOB, format="hocon")
    try:
        with pytest.raises(AirflowFailException, match=r"holds Spark 3\.5\.1"):
            hook.spark_submit_hook(1)
    finally:
        hook.cleanup()
    assert hook.spark_hook is None


# -- the provider's metadata and its [seatunnel] settings --------------------------------------------


def test_provider_metadata_entry_point():
    from importlib.metadata import entry_points

    import jsonschema

    (ep,) = [e for e in entry_points(group="apache_airflow_provider")
             if e.value.startswith("airflow_provider_seatunnel")]
    info = ep.load()()
    assert info["package-name"] == "airflow-provider-seatunnel"
    # Airflow's own schema for provider metadata (it validates every provider it discovers)
    import airflow

    schema = json.loads((Path(airflow.__file__).parent / "provider_info.schema.json").read_text())
    jsonschema.validate(info, schema)
    assert set(info["config"]["seatunnel"]["options"]) == {
        "plan_cache_dir", "plan_cache_max_entries", "plan_cache_max_bytes", "plan_cache_max_entry_bytes",
        "checkpoint_root", "jdbc_driver_path", "strict", "journal_key", "include_paths",
        "jvm_archive_dir", "lean_spark_home"}
    # no documentation URL until a page is published (docs/install.md): none in the metadata, none in Airflow
    assert "documentation-url" not in info and "urls" not in PYPROJECT["project"]
    # Airflow itself finds the provider, its extra link, its operator modules, its docs and its config
    from airflow.providers_manager import ProvidersManager

    manager = ProvidersManager()
    assert "airflow-provider-seatunnel" in manager.providers
    assert "airflow-provider-seatunnel" in [name for name, _ in manager.provider_configs]
    link = "airflow_provider_seatunnel.operators.seatunnel.SparkApplicationLink"
    assert link in manager.extra_links_class_names
    # the SeaTunnel view's plugin, and the page files it serves, which ship with the package
    (plugin,) = [e for e in entry_points(group="airflow.plugins") if e.value.startswith("airflow_provider_seatunnel")]
    assert plugin.load().name == "seatunnel"
    assert "ui/static/*" in PYPROJECT["tool"]["setuptools"]["package-data"]["airflow_provider_seatunnel"]
    static = Path(__file__).parents[1] / "airflow_provider_seatunnel" / "ui" / "static"
    assert sorted(f.name for f in static.iterdir()) == ["run.css", "run.html", "run.js"]
    for group in info["operators"] + info["hooks"]:
        for module in group["python-modules"]:
            __import__(module)


SETTINGS_PROBE = """
import json, sys
if sys.argv[1] == "airflow":
    import airflow.configuration  # a process that loaded Airflow: a task, the DAG processor
from airflow_provider_seatunnel import settings
from airflow_provider_seatunnel.connectors.sqlclient.connection import required_jars
from airflow_provider_seatunnel.plan import cache
from airflow_provider_seatunnel.plan.compiler import compile_job
from airflow_provider_seatunnel.plan.streaming import StreamSettings, checkpoint_root
from airflow_provider_seatunnel.runtime.launcher import submit_environment
compile_job(sys.argv[2])  # through the plan cache
env = submit_environment()
print(json.dumps({
    "cache_dir": str(cache.cache_dir()), "checkpoint_root": checkpoint_root(StreamSettings()),
    "jars": required_jars({"url": "jdbc:postgresql://db/x", "driver": "org.postgresql.Driver"}),
    "strict": settings.strict(), "airflow_loaded": "airflow" in sys.modules,
    "spark_submit_env": {k: env.get(k) for k in ("SEATUNNEL_CHECKPOINT_ROOT", "SEATUNNEL_JDBC_DRIVER_PATH")},
}))
"""


def _settings(tmp_path: Path, mode: str, cfg: str, **env: str) -> dict:
    home = Path(tempfile.mkdtemp(prefix=f"airflow-home-{mode}-", dir=tmp_path))
    (home / "airflow.cfg").write_text(cfg)
    conf = tmp_path / "job.conf"
    conf.write_text(JOB)
    base = {k: v for k, v in os.environ.items() if not k.startswith(("AIRFLOW__", "SEATUNNEL_"))}
    proc = subprocess.run([sys.executable, "-c", SETTINGS_PROBE, mode, str(conf)], capture_output=True, text=True,
                          env={**base, "AIRFLOW_HOME": str(home), **env}, timeout=300, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_seatunnel_settings_come_from_airflow_config_then_the_environment(tmp_path):
    section = tmp_path / "from-airflow"
    cfg = (f"[seatunnel]\nplan_cache_dir = {section}/plans\ncheckpoint_root = {section}/checkpoints\n"
           f"jdbc_driver_path = {section}/drivers/pg.jar\nstrict = True\n")
    legacy = {"SEATUNNEL_PLAN_CACHE": str(tmp_path / "env-plans"), "SEATUNNEL_CHECKPOINT_ROOT": str(tmp_path / "env-cp"),
              "SEATUNNEL_JDBC_DRIVER_PATH": str(tmp_path / "env.jar"), "SEATUNNEL_STRICT": "false"}
    # in a process that loaded Airflow, airflow.cfg's [seatunnel] wins over the environment variables
    got = _settings(tmp_path, "airflow", cfg, **legacy)
    assert got["cache_dir"] == f"{section}/plans"
    assert list((section / "plans").glob("*.json")), "the plan cache wrote no entry into [seatunnel] plan_cache_dir"
    assert got["checkpoint_root"] == f"{section}/checkpoints"
    assert got["jars"] == [f"{section}/drivers/pg.jar"]
    assert got["strict"] is True
    # ...and spark-submit's environment carries them to the Spark application, which loads no Airflow
    assert got["spark_submit_env"] == {"SEATUNNEL_CHECKPOINT_ROOT": f"{section}/checkpoints",
                                       "SEATUNNEL_JDBC_DRIVER_PATH": f"{section}/drivers/pg.jar"}
    # Airflow's environment-variable spelling of an option is Airflow's configuration too
    got = _settings(tmp_path, "airflow", "", AIRFLOW__SEATUNNEL__CHECKPOINT_ROOT=str(tmp_path / "af-env"), **legacy)
    assert got["checkpoint_root"] == str(tmp_path / "af-env")
    # no [seatunnel] options: the environment variables of earlier releases
    got = _settings(tmp_path, "airflow", "", **legacy)
    assert (got["cache_dir"], got["checkpoint_root"], got["jars"], got["strict"]) == (
        legacy["SEATUNNEL_PLAN_CACHE"], legacy["SEATUNNEL_CHECKPOINT_ROOT"], [legacy["SEATUNNEL_JDBC_DRIVER_PATH"]],
        False)


def test_without_airflow_loaded_the_settings_import_no_airflow(tmp_path):
    """The command line and the Spark application: airflow.cfg is not read (nothing imports Airflow),
    ``AIRFLOW__SEATUNNEL__<OPTION>`` and the variables of earlier releases are."""
    got = _settings(tmp_path, "cli", f"[seatunnel]\nplan_cache_dir = {tmp_path}/unread\n",
                    AIRFLOW__SEATUNNEL__PLAN_CACHE_DIR=str(tmp_path / "af-plans"), SEATUNNEL_STRICT="yes")
    assert got["airflow_loaded"] is False
    assert got["cache_dir"] == str(tmp_path / "af-plans")
    assert got["strict"] is True


def test_a_strict_setting_that_is_no_boolean_names_the_option():
    from airflow_provider_seatunnel import settings

    with pytest.raises(ValueError, match=r"\[seatunnel\] strict \(or \$SEATUNNEL_STRICT\) must be true or false"):
        settings.strict({"SEATUNNEL_STRICT": "sometimes"})


# -- jdbc_conn_id: the Jdbc/Postgres/MySQL providers' connection extras ----------------------------------

JDBC_JOB = """
env { job.name = "extras" }
source { Jdbc { plugin_output = "people", jdbc_conn_id = "pg_extras", query = "select id, name from people" } }
sink { LocalFile { plugin_input = "people", path = "__OUT__", file_format_type = "json" } }
"""


@pytest.fixture(scope="module")
def db():
    from tests import pg

    with pg.running("create table people (id bigint primary key, name text)",
                    "insert into people values (1, 'ada'), (2, 'grace'), (3, 'edsger')") as server:
        yield server


def _connection(monkeypatch, db, extra: dict, allow: bool) -> None:
    monkeypatch.setenv("AIRFLOW_CONN_PG_EXTRAS", json.dumps({
        "conn_type": "postgres", "host": "127.0.0.1", "port": db.port, "schema": db.database, "login": db.user,
        "password": db.password, "extra": extra}))
    for key in ("PATH", "CLASS"):
        monkeypatch.setenv(f"AIRFLOW__PROVIDERS_JDBC__ALLOW_DRIVER_{key}_IN_EXTRA", str(allow))
    # a pipeline task's Spark connection (a missing one fails the task, not retried)
    monkeypatch.setenv("AIRFLOW_CONN_SPARK_DEFAULT", json.dumps({"conn_type": "spark", "host": "local[1]"}))


def _properties(path: str | None) -> dict[str, str]:
    lines = Path(path).read_text().splitlines() if path else []
    return dict(line.split(" ", 1) for line in lines if " " in line and not line.startswith("#"))


def test_jdbc_conn_id_loads_the_driver_class_and_jar_its_connection_names(db, tmp_path, monkeypatch):
    """With the Jdbc provider's switches on, a block naming only its connection runs on the driver
    class and the jar of the connection's extras; the block sets no url, driver or credentials."""
    from airflow_provider_seatunnel.hooks.seatunnel import SeaTunnelHook
    from tests.pg import JDBC_JAR

    jar = tmp_path / "drivers" / "pg-from-the-connection.jar"
    jar.parent.mkdir()
    shutil.copy(JDBC_JAR, jar)
    _connection(monkeypatch, db, {"driver_class": "org.postgresql.Driver", "driver_path": str(jar)}, allow=True)
    monkeypatch.setenv("AIRFLOW_CONN_SPARK_DEFAULT", json.dumps({"conn_type": "spark", "host": "local[1]"}))
    hook = SeaTunnelHook(JDBC_JOB.replace("__OUT__", str(tmp_path / "out")), format="hocon")
    try:
        (vertex,) = [v for v in hook.plan.pipelines[0].vertices if v.plugin == "Jdbc"]
        assert vertex.config["url"] == db.url and vertex.config["driver"] == "org.postgresql.Driver"
        spark_hook = hook.spark_submit_hook(1, run_id="extras")
        assert _properties(spark_hook._properties_file)["spark.jars"] == str(jar)  # not /usr/share/java's
        metrics = hook.submit(1, run_id="extras")
    finally:
        hook.cleanup()
    assert metrics["status"] == "FINISHED" and metrics["read_count"] == 3
    rows = [json.loads(line) for f in (tmp_path / "out").glob("*.json") for line in f.read_text().splitlines()]
    assert sorted(r["name"] for r in rows) == ["ada", "edsger", "grace"]


def test_jdbc_conn_id_extras_need_the_jdbc_providers_switches(db, tmp_path, monkeypatch, caplog, capsys):
    """Switches on: the connection's driver_class is the block's driver. Off (Airflow's default): both
    extras are ignored with a warning; the URL's usual driver class and the system's jar are used."""
    from airflow_provider_seatunnel.hooks.seatunnel import SeaTunnelHook
    from tests.pg import JDBC_JAR

    job = JDBC_JOB.replace("__OUT__", str(tmp_path / "out"))
    extra = {"driver_class": "com.example.NoSuchDriver", "Driver_Path": str(tmp_path / "elsewhere.jar")}
    _connection(monkeypatch, db, extra, allow=True)
    hook = SeaTunnelHook(job, format="hocon")
    (vertex,) = [v for v in hook.plan.pipelines[0].vertices if v.plugin == "Jdbc"]
    assert (vertex.config["driver"], vertex.config["driver_path"]) == (
        "com.example.NoSuchDriver", str(tmp_path / "elsewhere.jar"))

    _connection(monkeypatch, db, extra, allow=False)
    hook = SeaTunnelHook(job, format="hocon")
    with caplog.at_level("WARNING", logger="seatunnel.jdbc"):
        (vertex,) = [v for v in hook.plan.pipelines[0].vertices if v.plugin == "Jdbc"]
    assert vertex.config["driver"] == "org.postgresql.Driver" and "driver_path" not in vertex.config
    # the warnings reach the logging handlers, or stdout once Airflow's structlog set-up took over the
    # process (an in-process DagBag parse by another test of this worker)
    seen = caplog.text + "".join(capsys.readouterr())
    assert "allow_driver_class_in_extra" in seen and "allow_driver_path_in_extra" in seen
    try:
        spark_hook = hook.spark_submit_hook(1, run_id="off")
        assert _properties(spark_hook._properties_file)["spark.jars"] == JDBC_JAR
    finally:
        hook.cleanup()


def test_a_jdbc_block_needs_a_driver_unless_its_connection_gives_one(plan_of, config_error):
    error = config_error('source { Jdbc { url = "jdbc:postgresql://db/x", query = "select 1" } }\n'
                         'sink { Console {} }')
    assert "the option 'driver' is required" in str(error)
    plan = plan_of('source { Jdbc { jdbc_conn_id = "pg", query = "select 1" } }\nsink { Console {} }')
    assert plan.pipelines[0].sources[0].plugin == "Jdbc"


@pytest.mark.parametrize("url, driver", [("jdbc:postgresql://h/db", "org.postgresql.Driver"),
                                         ("jdbc:mysql://h/db", "com.mysql.cj.jdbc.Driver"),
                                         ("jdbc:sqlserver://h;databaseName=db",
                                          "com.microsoft.sqlserver.jdbc.SQLServerDriver"),
                                         ("jdbc:oracle:thin:@h:1521/db", "oracle.jdbc.OracleDriver"),
                                         ("jdbc:unknown://h/db", None)])
def test_the_usual_driver_class_of_a_connections_url(url, driver):
    from airflow_provider_seatunnel.connectors.sqlclient.connection import default_driver_class

    assert default_driver_class(url) == driver



def test_airflow_shows_a_form_for_every_connection_extra_the_provider_reads():
    """Airflow (its providers manager, and the api-server's connection form metadata, in process) lists this
    provider's connection types with their fields, read from the provider's metadata: the extras of
    connection_forms.py (which tests/test_docs_match_code.py checks against the code's reads)."""
    from airflow.api_fastapi.core_api.services.ui.connections import HookMetaService
    from airflow.providers_manager import ProvidersManager

    from airflow_provider_seatunnel.connection_forms import form_fields

    manager = ProvidersManager()
    fields = form_fields()
    widgets = {name for name, w in manager.connection_form_widgets.items()
               if w.package_name == "airflow-provider-seatunnel"}
    assert widgets == {f"extra__{t}__{f}" for t, names in fields.items() for f in names}
    assert manager.field_behaviours["seatunnel_jdbc"]["hidden_fields"] == ["host", "port", "schema"]
    # each type's hook class is ours and imports (the "spark" type stays the Spark provider's)
    assert {t: manager.hooks[t].package_name for t in fields} == dict.fromkeys(fields, "airflow-provider-seatunnel")
    assert manager.hooks["spark"].package_name == "apache-airflow-providers-apache-spark"
    # what the UI's connection form is built from
    meta = {m.connection_type: m for m in HookMetaService.hook_meta_data()}
    spark = meta["seatunnel_spark"]
    assert set(spark.extra_fields) == fields["seatunnel_spark"]
    assert spark.extra_fields["history_server_url"]["schema"]["title"] == "Spark History Server URL"
    assert spark.standard_fields.login.hidden and spark.standard_fields.host.title.startswith("Master")
    assert meta["seatunnel_sftp"].extra_fields["private_key"]["schema"]["format"] == "password"
    assert manager.connection_form_widgets["extra__seatunnel_s3__aws_session_token"].is_sensitive
