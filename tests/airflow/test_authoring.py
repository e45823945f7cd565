"""Authoring at parse time: retry precedence, what cannot run here, config paths, and the group's
arguments (connections, per-pipeline task arguments, pool slots, selection, display names)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import warnings
from datetime import datetime, timedelta
from pathlib import Path

import pytest

TWO = """
env { job.name = "two", parallelism = 2 __RETRY__ }
source {
  FakeSource { plugin_output = "web", row.num = 3, schema = { fields { id = bigint } } }
  FakeSource { plugin_output = "store", row.num = 3, schema = { fields { id = bigint } } }
}
transform { Sql { plugin_input = "store", plugin_output = "store_clean", query = "select id from store" } }
sink {
  LocalFile { plugin_input = "web", path = "/data/web", file_format_type = "json" }
  Console { plugin_input = "store_clean" }
}
"""

KUDU = """
env { job.name = "kudu" }
source {
  FakeSource { plugin_output = "web", row.num = 3, schema = { fields { id = bigint } } }
  FakeSource { plugin_output = "store", row.num = 3, schema = { fields { id = bigint } } }
}
sink {
  Console { plugin_input = "web" }
  Kudu { plugin_input = "store", kudu_masters = "localhost:7051", table_name = "orders" }
}
"""


def _conf(tmp_path: Path, text: str = TWO, retry: str = "", name: str = "job.conf") -> Path:
    path = tmp_path / name
    path.write_text(text.replace("__RETRY__", retry))
    return path


def _group_dag(config, dag_kwargs: dict | None = None, fileloc: Path | None = None, **group_kwargs):
    from airflow.sdk import DAG

    from airflow_provider_seatunnel.operators.job_group import SeaTunnelJobGroup

    with DAG("st_authoring", schedule=None, start_date=datetime(2024, 1, 1), **(dag_kwargs or {})) as dag:
        if fileloc is not None:
            dag.fileloc = str(fileloc)
        group = SeaTunnelJobGroup(group_id="job", config=config, **group_kwargs)
    return dag, group



def _parse_dagbag(folder: str, cwd: Path, tmp_path: Path) -> tuple[subprocess.CompletedProcess, dict]:
    """Parse ``folder`` with a DagBag in a fresh Airflow process working in ``cwd``: (the process, what
    DAGBAG printed)."""
    proc = subprocess.run([sys.executable, "-c", DAGBAG.format(folder=folder)], cwd=cwd,
                          capture_output=True, text=True, timeout=300,
                          env={**os.environ, "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
                               "AIRFLOW_HOME": str(tmp_path / "home"),
                               "SEATUNNEL_PLAN_CACHE": str(tmp_path / "cache")})
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc, json.loads(proc.stdout.strip().splitlines()[-1])

def _pipeline_tasks(dag) -> list:
    return [t for t in dag.tasks if t.task_id not in ("job.prepare", "job.summary")]


# -- retries (problem 3) ------------------------------------------------------------------------

def test_dag_default_args_decide_retries_the_config_leaves_out(tmp_path):
    """Problem 3: a DAG's default_args={"retries": 0} gave every pipeline task 3 retries 3 s apart."""
    dag, _ = _group_dag(_conf(tmp_path), {"default_args": {"retries": 0, "retry_delay": timedelta(seconds=30)}})
    tasks = _pipeline_tasks(dag)
    assert len(tasks) == 2
    assert {(t.retries, t.retry_delay) for t in tasks} == {(0, timedelta(seconds=30))}


def test_retry_precedence(tmp_path):
    # nothing set anywhere: SeaTunnel's restore policy (3 restores, 3 s apart), as the plan's text says,
    # not Airflow's default of no retry
    from airflow_provider_seatunnel.plan import compile_job
    from airflow_provider_seatunnel.plan.render import render_text

    dag, _ = _group_dag(_conf(tmp_path))
    assert {(t.retries, t.retry_delay) for t in _pipeline_tasks(dag)} == {(3, timedelta(seconds=3))}
    assert "restore: 3 retries, 3s apart" in render_text(compile_job(_conf(tmp_path)))
    # only the delay set (the DAG's default_args): the number is still SeaTunnel's
    dag, _ = _group_dag(_conf(tmp_path), {"default_args": {"retry_delay": timedelta(seconds=30)}})
    assert {(t.retries, t.retry_delay) for t in _pipeline_tasks(dag)} == {(3, timedelta(seconds=30))}
    # the task log's plan text gives the task's real policy for its pipeline (not the plan's 3 s), and sends
    # the job's other pipelines to their own tasks
    task = _pipeline_tasks(dag)[0]
    assert task.restore_policy() == (3, 30.0)
    text = render_text(compile_job(_conf(tmp_path)), restore={task.pipeline: task.restore_policy()})
    assert "restore: 3 retries, 30s apart (this Airflow task's retries and retry_delay)" in text
    assert "restore: as its own Airflow task's retries and retry_delay" in text and "3s apart" not in text
    # the config sets job.retry.times only: it wins over every argument; the delay follows Airflow's order
    only_times = _conf(tmp_path, retry=", job.retry.times = 2", name="times.conf")
    dag_args = {"default_args": {"retries": 0, "retry_delay": timedelta(seconds=30)}}
    for group_kwargs, delay in [({}, 30), ({"default_args": {"retry_delay": timedelta(seconds=45)}}, 45),
                                ({"default_args": {"retry_delay": timedelta(seconds=45)},
                                  "operator_kwargs": {"retries": 9, "retry_delay": timedelta(seconds=50)}}, 50),
                                ({"pipeline_kwargs": lambda p: {"retries": 9, "retry_delay": timedelta(seconds=60)}},
                                 60)]:
        dag, _ = _group_dag(only_times, dag_args, **group_kwargs)
        assert {(t.retries, t.retry_delay.total_seconds()) for t in _pipeline_tasks(dag)} == {(2, delay)}, group_kwargs
    # both set: the config's, whatever the arguments say
    both = _conf(tmp_path, retry=", job.retry.times = 4, job { retry { interval { seconds = 7 } } }", name="both.conf")
    dag, _ = _group_dag(both, dag_args, operator_kwargs={"retries": 1, "retry_delay": 2})
    assert {(t.retries, t.retry_delay.total_seconds()) for t in _pipeline_tasks(dag)} == {(4, 7)}


def test_standalone_operator_retry_precedence(tmp_path):
    from airflow.sdk import DAG

    from airflow_provider_seatunnel.operators.seatunnel import SeaTunnelOperator

    plain = _conf(tmp_path, retry="", name="plain.conf")
    five = _conf(tmp_path, retry=", job.retry.times = 5", name="five.conf")
    with DAG("st_standalone", schedule=None, start_date=datetime(2024, 1, 1), default_args={"retries": 1}):
        from_dag = SeaTunnelOperator(task_id="from_dag", config=str(plain), pipeline=1)
        own = SeaTunnelOperator(task_id="own", config=str(plain), pipeline=1, retries=0)
        with pytest.warns(UserWarning, match=r"retries=0 \(job.retry.times = 5\)"):
            config_wins = SeaTunnelOperator(task_id="config_wins", config=str(five), pipeline=1, retries=0)
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # an argument the config agrees with is not worth a warning
            same = SeaTunnelOperator(task_id="same", config=str(five), pipeline=1, retries=5)
    assert (from_dag.retries, own.retries, config_wins.retries, same.retries) == (1, 0, 5, 5)
    with DAG("st_standalone_bare", schedule=None, start_date=datetime(2024, 1, 1)):
        bare = SeaTunnelOperator(task_id="bare", config=str(plain), pipeline=1)
    assert (bare.retries, bare.retry_delay) == (3, timedelta(seconds=3))  # SeaTunnel's restore policy


def test_a_job_only_known_at_run_time_is_restored_too(tmp_path):
    """A templated config path, or a pipeline left to choose in a job of two, is not compiled at
    parse time: with nothing set, the task still gets SeaTunnel's restore policy, not Airflow's 0;
    an argument or ``default_args`` still decide."""
    from airflow.sdk import DAG

    from airflow_provider_seatunnel.operators.seatunnel import SeaTunnelOperator

    two = _conf(tmp_path, name="two.conf")
    with DAG("st_run_time", schedule=None, start_date=datetime(2024, 1, 1)):
        templated = SeaTunnelOperator(task_id="templated", config=str(tmp_path / "{{ params.job }}.conf"))
        unchosen = SeaTunnelOperator(task_id="unchosen", config=str(two))
        own = SeaTunnelOperator(task_id="own", config=str(tmp_path / "{{ params.job }}.conf"), retries=0)
    with DAG("st_run_time_args", schedule=None, start_date=datetime(2024, 1, 1),
             default_args={"retries": 1, "retry_delay": timedelta(seconds=9)}):
        from_dag = SeaTunnelOperator(task_id="from_dag", config=str(tmp_path / "{{ params.job }}.conf"))
    restored = (3, timedelta(seconds=3))
    assert (templated.retries, templated.retry_delay) == (unchosen.retries, unchosen.retry_delay) == restored
    assert own.retries == 0 and (from_dag.retries, from_dag.retry_delay) == (1, timedelta(seconds=9))


# -- what cannot run here (problem 4), at parse time -----------------------------------------------

def test_a_plugin_that_cannot_run_here_marks_its_task_and_warns(tmp_path):
    from airflow_provider_seatunnel.operators.authoring import SeaTunnelPlanWarning

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        dag, group = _group_dag(_conf(tmp_path, KUDU))
    (warning,) = [w for w in caught if issubclass(w.category, SeaTunnelPlanWarning)]
    assert "Kudu" in str(warning.message) and "cannot run" in str(warning.message)
    assert warning.filename == __file__  # located at the DAG file's line that built the group
    blocked, fine = sorted(_pipeline_tasks(dag), key=lambda t: "kudu" not in t.task_id)
    assert blocked.task_display_name == "⚠ store → Kudu" and "Kudu" in blocked.doc_md
    assert fine.task_display_name == "web → Console" and not fine.doc_md
    assert "cannot run here" in group.tooltip


def test_strict_makes_it_the_import_error(tmp_path, monkeypatch):
    from airflow_provider_seatunnel.config.errors import ConfigError

    conf = _conf(tmp_path, KUDU)
    with pytest.raises(ConfigError, match="sink\\[1\\] Kudu"):
        _group_dag(conf, strict=True)
    monkeypatch.setenv("AIRFLOW__SEATUNNEL__STRICT", "True")  # the [seatunnel] strict setting
    with pytest.raises(ConfigError, match="Kudu"):
        _group_dag(conf)
    dag, _ = _group_dag(conf, strict=False)  # the argument wins over the setting
    assert len(_pipeline_tasks(dag)) == 2


DAGBAG = """
import json
from airflow.dag_processing.dagbag import DagBag
bag = DagBag(dag_folder={folder!r})
tasks = {{d: {{t.task_id: t.task_display_name for t in bag.dags[d].tasks}} for d in bag.dag_ids}}
print(json.dumps({{"errors": bag.import_errors, "dags": sorted(bag.dag_ids), "tasks": tasks,
                  "warnings": {{k: list(v) for k, v in bag.captured_warnings.items()}}}}))
"""

DAG_FILES = {
    "st_warned.py": """
        from datetime import datetime
        from airflow.sdk import DAG
        from airflow_provider_seatunnel.operators.job_group import SeaTunnelJobGroup
        from airflow_provider_seatunnel.operators.seatunnel import SeaTunnelOperator

        with DAG("st_warned", schedule=None, start_date=datetime(2024, 1, 1)) as dag:
            SeaTunnelJobGroup(group_id="job", config="configs/kudu.conf")
            SeaTunnelOperator(task_id="alone", config="configs/kudu.conf", pipeline=2)
        """,
    "st_strict.py": """
        from datetime import datetime
        from airflow.sdk import DAG
        from airflow_provider_seatunnel.operators.job_group import SeaTunnelJobGroup

        with DAG("st_strict", schedule=None, start_date=datetime(2024, 1, 1)) as dag:
            SeaTunnelJobGroup(group_id="job", config="configs/kudu.conf", strict=True)
        """,
    "st_missing.py": """
        from datetime import datetime
        from airflow.sdk import DAG
        from airflow_provider_seatunnel.operators.job_group import SeaTunnelJobGroup

        with DAG("st_missing", schedule=None, start_date=datetime(2024, 1, 1), template_searchpath="/srv/shared") as dag:
            SeaTunnelJobGroup(group_id="job", config="configs/nowhere.conf")
        """,
}


def test_dag_processor_view(tmp_path):
    """What Airflow's DagBag (the DAG processor's loader) makes of DAG files in a folder, parsed from
    another working directory: a relative config path is the DAG folder's (problem 5); a plugin that
    cannot run here is a parse warning, not an import error, unless strict (problem 4)."""
    folder = tmp_path / "dags"
    (folder / "configs").mkdir(parents=True)
    (folder / "configs" / "kudu.conf").write_text(KUDU)
    for name, source in DAG_FILES.items():
        (folder / name).write_text(textwrap.dedent(source))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    _, result = _parse_dagbag(str(folder), elsewhere, tmp_path)
    assert result["dags"] == ["st_warned"], result["errors"]
    errors = {Path(k).name: v for k, v in result["errors"].items()}
    assert set(errors) == {"st_strict.py", "st_missing.py"}
    assert "ConfigError" in errors["st_strict.py"] and "sink[1] Kudu" in errors["st_strict.py"]
    missing = errors["st_missing.py"]
    assert "config file not found: configs/nowhere.conf" in missing
    assert str(folder / "configs" / "nowhere.conf") in missing and "/srv/shared/configs/nowhere.conf" in missing
    (warned,) = [v for k, v in result["warnings"].items() if k.endswith("st_warned.py")]
    assert len(warned) == 2  # the group's and the standalone operator's
    assert all("SeaTunnelPlanWarning" in w and "Kudu" in w and "st_warned.py:" in w for w in warned)
    names = result["tasks"]["st_warned"]
    assert names["alone"] == "⚠ alone"
    assert sorted(n for t, n in names.items() if t.startswith("job.") and "→" in n) == [
        "web → Console", "⚠ store → Kudu"]


RELATIVE_DAG = """
    from datetime import datetime
    from pathlib import Path
    from airflow.sdk import DAG
    from airflow_provider_seatunnel.operators.job_group import SeaTunnelJobGroup
    from airflow_provider_seatunnel.operators.seatunnel import SeaTunnelOperator

    CONFIG = Path(__file__).parent / "configs" / "two.conf"
    with DAG("st_relative", schedule=None, start_date=datetime(2024, 1, 1)) as dag:
        SeaTunnelJobGroup(group_id="job", config=CONFIG)
        SeaTunnelOperator(task_id="alone", config=CONFIG, pipeline=1)
    print("CONFIGS", sorted({str(t.config) for t in dag.tasks if hasattr(t, "config")}))
"""


def test_a_config_path_relative_to_the_working_directory_is_used_as_given(tmp_path):
    """A DAG building its config path from ``__file__``, parsed by ``DagBag("dags")`` (a relative
    folder), asks for ``dags/configs/two.conf``: that file, relative to the working directory, is
    the config (it was looked for only in ``dags/dags/configs/two.conf``: an import error)."""
    project = tmp_path / "project"
    (project / "dags" / "configs").mkdir(parents=True)
    _conf(project / "dags" / "configs", name="two.conf")
    (project / "dags" / "st_relative.py").write_text(textwrap.dedent(RELATIVE_DAG))
    proc, result = _parse_dagbag("dags", project, tmp_path)
    assert result["errors"] == {} and result["dags"] == ["st_relative"]
    assert len(result["tasks"]["st_relative"]) == 5  # prepare, two pipelines, summary; the standalone task
    (configs,) = [line for line in proc.stdout.splitlines() if line.startswith("CONFIGS")]
    assert configs == f"CONFIGS {[str(project / 'dags' / 'configs' / 'two.conf')]}"  # absolute: any worker's cwd


# -- what cannot run here (problem 4), at run time ----------------------------------------------

def test_the_task_fails_before_any_spark_submit(monkeypatch):
    """Problem 4: the pipeline ran spark-submit, failed after ~40 s with a retryable error, and was retried."""
    from airflow.sdk.exceptions import AirflowFailException

    from airflow_provider_seatunnel.operators.seatunnel import SeaTunnelOperator

    monkeypatch.setenv("AIRFLOW_CONN_SPARK_DEFAULT", json.dumps({"conn_type": "spark", "host": "local[1]"}))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        op = SeaTunnelOperator(task_id="store", config=KUDU, pipeline=2, retries=3)
    with pytest.raises(AirflowFailException, match="cannot run here") as failure:  # not retried
        op.execute({"run_id": "manual__1"})
    assert "sink[1] Kudu" in str(failure.value)
    assert op.hook.spark_hook is None  # no spark-submit was prepared, let alone started
    assert op.hook.plan_path is None  # and the private work directory is gone


# -- config paths (problem 5) ------------------------------------------------------------------

def test_relative_config_paths_start_at_the_dag_folder(tmp_path, monkeypatch):
    """Problem 5: README's config="configs/orders.conf" raised "config file not found" under the scheduler.
    The DAG folder and template_searchpath come first; the working directory last (issue 34, item 14)."""
    from airflow.sdk import DAG

    from airflow_provider_seatunnel.config.errors import ConfigError
    from airflow_provider_seatunnel.operators.seatunnel import SeaTunnelOperator

    dags, shared, elsewhere = tmp_path / "dags", tmp_path / "shared", tmp_path / "elsewhere"
    for d in (dags / "configs", shared / "configs", elsewhere / "configs"):
        d.mkdir(parents=True)
    _conf(dags / "configs", name="orders.conf")
    _conf(shared / "configs", name="shared.conf")
    for name in ("orders.conf", "shared.conf", "only_here.conf"):  # the working directory's namesakes
        (elsewhere / "configs" / name).write_text(TWO.replace("__RETRY__", ""))
    monkeypatch.chdir(elsewhere)  # the scheduler's working directory is not the DAG folder
    searchpath = {"template_searchpath": [str(shared)]}
    dag, _ = _group_dag("configs/orders.conf", searchpath, fileloc=dags / "orders_dag.py")
    assert {t.config for t in [*_pipeline_tasks(dag), dag.get_task("job.prepare")]} == {
        str(dags / "configs" / "orders.conf")}
    dag, _ = _group_dag("configs/shared.conf", searchpath, fileloc=dags / "orders_dag.py")
    assert {t.config for t in _pipeline_tasks(dag)} == {str(shared / "configs" / "shared.conf")}
    # found in neither: the path as given, relative to the working directory, held absolute
    dag, _ = _group_dag("configs/only_here.conf", searchpath, fileloc=dags / "orders_dag.py")
    assert {t.config for t in _pipeline_tasks(dag)} == {str(elsewhere / "configs" / "only_here.conf")}
    with pytest.raises(ConfigError, match=r"config file not found: configs/nowhere\.conf") as missing:
        _group_dag("configs/nowhere.conf", searchpath, fileloc=dags / "orders_dag.py")
    for place in (dags, shared, elsewhere):
        assert f"{place}/configs/nowhere.conf" in str(missing.value)
    # the standalone operator: found at parse time, it holds the absolute path
    with DAG("st_op_paths", schedule=None, start_date=datetime(2024, 1, 1), **searchpath) as dag:
        dag.fileloc = str(dags / "orders_dag.py")
        op = SeaTunnelOperator(task_id="orders", config="configs/orders.conf", pipeline=1)
        here = SeaTunnelOperator(task_id="here", config="configs/only_here.conf", pipeline=1)
        lost = SeaTunnelOperator(task_id="lost", config="configs/nowhere.conf", pipeline=1)
    assert op.config == str(dags / "configs" / "orders.conf") and op.retries is not None
    assert here.config == str(elsewhere / "configs" / "only_here.conf")
    assert lost.config == "configs/nowhere.conf"


def test_a_config_found_nowhere_at_run_time_names_where_it_looked(tmp_path):
    from airflow.sdk import DAG
    from airflow.sdk.exceptions import AirflowFailException

    from airflow_provider_seatunnel.operators.seatunnel import SeaTunnelOperator

    with DAG("st_op_lost", schedule=None, start_date=datetime(2024, 1, 1), template_searchpath="/srv/shared") as dag:
        dag.fileloc = str(tmp_path / "dag.py")
        op = SeaTunnelOperator(task_id="lost", config="configs/lost.conf")
    with pytest.raises(AirflowFailException, match=r"config file not found: configs/lost\.conf") as failure:
        op.render_template(op.config, {})
    assert f"{tmp_path}/configs/lost.conf" in str(failure.value) and "/srv/shared/configs/lost.conf" in str(failure.value)


# -- the group's arguments -----------------------------------------------------------------------

def test_connections_and_per_pipeline_task_arguments(tmp_path):
    dag, _ = _group_dag(_conf(tmp_path), spark_conn_id="spark_cluster", jdbc_conn_id="warehouse",
                        pipeline_kwargs={"pool": "spark", "queue": "spark_q", "priority_weight": 5,
                                         "executor": "LocalExecutor"})
    tasks = _pipeline_tasks(dag)
    assert {(t.spark_conn_id, t.jdbc_conn_id, t.pool, t.queue, t.priority_weight, t.executor) for t in tasks} == {
        ("spark_cluster", "warehouse", "spark", "spark_q", 5, "LocalExecutor")}
    assert dag.get_task("job.prepare").jdbc_conn_id == "warehouse"
    # pool_slots default: the pipeline's slots (parallelism 2, one fused task group)
    assert {t.pool_slots for t in tasks} == {2}
    # a callable gets each pipeline's plan
    dag, _ = _group_dag(_conf(tmp_path), pipeline_kwargs=lambda p: {
        "pool_slots": 1 if p.sinks[0].plugin == "Console" else 3, "priority_weight": len(p.vertices)})
    by_sink = {t.task_id.rsplit("_", 2)[-2]: (t.pool_slots, t.priority_weight) for t in _pipeline_tasks(dag)}
    assert by_sink == {"console": (1, 3), "localfile": (3, 2)}
    with pytest.raises(ValueError, match="given twice"):
        _group_dag(_conf(tmp_path), spark_conn_id="a", operator_kwargs={"spark_conn_id": "b"})
    with pytest.raises(ValueError, match="may not set task_id"):
        _group_dag(_conf(tmp_path), pipeline_kwargs=lambda p: {"task_id": "x"})


def test_select_and_exclude(tmp_path):
    conf = _conf(tmp_path)

    def kept(**kwargs) -> list[str]:
        dag, _ = _group_dag(conf, **kwargs)
        summary = dag.get_task("job.summary")
        assert sorted(summary.pipeline_task_ids) == sorted(t.task_id for t in _pipeline_tasks(dag))
        return sorted(t.task_id.split(".", 1)[1].rsplit("_", 1)[0] for t in _pipeline_tasks(dag))

    assert kept() == ["store_to_console", "web_to_localfile"]
    assert kept(select="plugin:localfile") == ["web_to_localfile"]  # plugin names in any case
    assert kept(select=["dataset:store_clean"]) == ["store_to_console"]  # an output in the pipeline
    assert kept(select="Sql") == ["store_to_console"]  # a bare pattern: task id, plugin or dataset
    assert kept(select="task:web_*") == ["web_to_localfile"]
    assert kept(exclude="plugin:Console") == ["web_to_localfile"]
    assert kept(select=["web", "store"], exclude="dataset:web") == ["store_to_console"]
    dag, _ = _group_dag(conf, select="web")
    assert dag.get_task("job.prepare").pipelines == [t.task_id.split(".", 1)[1] for t in _pipeline_tasks(dag)]
    with pytest.raises(ValueError, match=r"'plugin:Jbdc' matches no pipeline.*plugin: Console, FakeSource"):
        _group_dag(conf, select="plugin:Jbdc")
    with pytest.raises(ValueError, match="unknown kind 'tag'"):
        _group_dag(conf, select="tag:nightly")
    with pytest.raises(ValueError, match="leave no pipeline"):
        _group_dag(conf, select="web", exclude="LocalFile")


def test_display_names(tmp_path):
    from airflow_provider_seatunnel.operators.authoring import display_names
    from airflow_provider_seatunnel.plan import compile_job

    conf = tmp_path / "names.conf"
    conf.write_text("""
        source {
          FakeSource { plugin_output = "web_orders", row.num = 3, schema = { fields { id = bigint } } }
          FakeSource { row.num = 3, schema = { fields { id = bigint } } }
        }
        sink {
          LocalFile { plugin_input = "web_orders", path = "/data/a", file_format_type = "json" }
          Assert { plugin_input = "web_orders", rules { row_rules = [{ rule_type = MIN_ROW, rule_value = 1 }] } }
          Console { }
        }
    """)
    plan = compile_job(conf, use_cache=False)
    assert sorted(display_names(plan.pipelines).values()) == ["FakeSource → Console",
                                                              "web_orders → LocalFile + Assert"]
    # a split makes pipelines with the same sources and sink plugins: the task id's hash tells them apart
    split = tmp_path / "split.conf"
    split.write_text("""
        source {
          FakeSource { plugin_output = "web", row.num = 3, schema = { fields { id = bigint } } }
          FakeSource { plugin_output = "store", row.num = 3, schema = { fields { id = bigint } } }
        }
        transform {
          Sql { plugin_input = ["web", "store"], plugin_output = "all", query = "select id from web union all select id from store" }
        }
        sink {
          LocalFile { plugin_input = "all", path = "/data/a", file_format_type = "json" }
          LocalFile { plugin_input = "all", path = "/data/b", file_format_type = "json" }
        }
    """)
    plan = compile_job(split, use_cache=False)
    names = display_names(plan.pipelines)
    assert len(names) == 4 and len(set(names.values())) == 4
    for task_id, name in names.items():
        assert name == f"{task_id.split('_', 1)[0]} → LocalFile ({task_id.rsplit('_', 1)[1]})"
    example = compile_job(Path(__file__).parents[2] / "dags" / "configs" / "example.conf", use_cache=False)
    assert sorted(display_names(example.pipelines).values()) == [
        "store_orders → Assert", "store_orders → LocalFile", "web_orders → Assert", "web_orders → LocalFile"]
    dag, _ = _group_dag(_conf(tmp_path))
    assert sorted(t.task_display_name for t in _pipeline_tasks(dag)) == ["store → Console", "web → LocalFile"]


# -- includes: the DAG's folders are allowed ---------------------------------------------------

def test_a_config_may_include_from_its_dags_folder_and_template_searchpath_not_elsewhere(tmp_path):
    """``include`` reads under the config's own folder tree; an operator's DAG file folder and its
    ``template_searchpath`` are allowed too (the DAG folder of the DAG being parsed), nothing else."""
    from airflow.sdk import DAG

    from airflow_provider_seatunnel.config.errors import ConfigError
    from airflow_provider_seatunnel.operators.seatunnel import SeaTunnelOperator
    from airflow_provider_seatunnel.plan import compile_job

    dags, shared, elsewhere = tmp_path / "dags", tmp_path / "shared", tmp_path / "elsewhere"
    for d in (dags / "configs", dags / "common", shared, elsewhere):
        d.mkdir(parents=True)
    job = 'env { job.name = "two" }\nsource { FakeSource { row.num = 3, schema = { fields { id = bigint } } } }\n' \
          'sink { Console { } }\n'
    (dags / "common" / "base.conf").write_text('include "job_body.conf"\n')
    (dags / "common" / "job_body.conf").write_text(job)
    (shared / "body.conf").write_text(job)
    (elsewhere / "body.conf").write_text(job)
    (dags / "configs" / "from_dags.conf").write_text('include required("../common/base.conf")\n')
    (dags / "configs" / "from_shared.conf").write_text(f'include required("{shared}/body.conf")\n')
    (dags / "configs" / "from_elsewhere.conf").write_text(f'include required("{elsewhere}/body.conf")\n')
    with pytest.raises(ConfigError, match="leads out of the folders includes may read"):
        compile_job(dags / "configs" / "from_dags.conf")  # alone, only its own folder tree
    with DAG("st_includes", schedule=None, start_date=datetime(2024, 1, 1), template_searchpath=[str(shared)]) as dag:
        dag.fileloc = str(dags / "includes_dag.py")
        ok_dags = SeaTunnelOperator(task_id="dags", config="configs/from_dags.conf", pipeline=1)
        ok_shared = SeaTunnelOperator(task_id="shared", config="configs/from_shared.conf", pipeline=1)
        assert len(ok_dags.hook.plan.pipelines) == len(ok_shared.hook.plan.pipelines) == 1
        refused = SeaTunnelOperator(task_id="elsewhere", config="configs/from_elsewhere.conf", pipeline=1)
        with pytest.raises(ConfigError, match="leads out of the folders includes may read"):
            refused.hook.plan  # noqa: B018


def test_one_id_per_pipeline_where_the_run_compiles_another_hash(tmp_path):
    """A path completed by the run's rendered variables changes the compiled task id's hash: the run takes
    the parsed id (the task's) for its pipeline, everywhere the plan names it; a STREAMING pipeline keeps its
    compiled id (it names the stream's checkpoint)."""
    from airflow_provider_seatunnel.hooks.seatunnel import SeaTunnelHook, one_task_id
    from airflow_provider_seatunnel.plan import compile_job

    conf = _conf(tmp_path, TWO.replace('"/data/web"', '"/data/${day}"'))
    parsed = compile_job(conf, {"day": "{{ ds }}"})
    rendered = compile_job(conf, {"day": "2024-05-06"})
    (web,) = [p.task_id for p in parsed.pipelines if p.task_id.startswith("web_")]
    (compiled,) = [p.task_id for p in rendered.pipelines if p.task_id.startswith("web_")]
    assert web != compiled and web.rsplit("_", 1)[0] == compiled.rsplit("_", 1)[0]
    one = one_task_id(rendered, web)
    assert sorted(p.task_id for p in one.pipelines) == sorted(
        web if p.task_id == compiled else p.task_id for p in rendered.pipelines)
    assert one.to_dict()["pipelines"][0].keys() == rendered.to_dict()["pipelines"][0].keys()  # the JSON's fields
    hook = SeaTunnelHook(conf, {"day": "2024-05-06"}, task_id=web)
    assert hook.pipeline(web).task_id == web and hook.pipeline(web).vertices == rendered.pipeline(compiled).vertices
    streaming = compile_job(_conf(tmp_path, TWO.replace('"/data/web"', '"/data/${day}"').replace(
        'job.name = "two"', 'job.name = "two", job.mode = "STREAMING"'), name="stream.conf"), {"day": "x"})
    assert one_task_id(streaming, web) is streaming
