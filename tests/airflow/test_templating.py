"""The operator's templated fields: ours (``config``, ``variables``) and the Spark provider's (``conf``,
``env_vars``...), where only ``config`` is ever read as a template file."""

from __future__ import annotations

from datetime import datetime
from types import SimpleNamespace

import pytest

JOB = """
env { job.name = "templated" }
source { FakeSource { plugin_output = "gen", row.num = 2, schema = { fields { id = bigint } } } }
sink { LocalFile { plugin_input = "gen", path = "${out}/dt={{ ds }}", file_format_type = "json" } }
"""


def _operator(tmp_path, **kwargs):
    from airflow.sdk import DAG

    from airflow_provider_seatunnel.operators.seatunnel import SeaTunnelOperator

    (tmp_path / "job.conf").write_text(JOB)
    with DAG("st_templating", schedule=None, start_date=datetime(2024, 1, 1)) as dag:
        dag.fileloc = str(tmp_path / "dag.py")
        op = SeaTunnelOperator(task_id="job", config="job.conf", **kwargs)
    return op


def test_the_spark_providers_fields_stay_templated_and_only_the_config_is_read_as_a_file(tmp_path):
    from airflow.providers.apache.spark.operators.spark_submit import SparkSubmitOperator

    from airflow_provider_seatunnel.operators.seatunnel import SeaTunnelOperator

    assert set(SparkSubmitOperator.template_fields) <= set(SeaTunnelOperator.template_fields)
    # files named like templates (.conf, .json) that must stay paths: their text is never read
    defaults = tmp_path / "spark-defaults.conf"
    defaults.write_text("spark.x {{ not a template")
    shipped = tmp_path / "lookup.json"
    shipped.write_text("{{ broken")
    op = _operator(tmp_path, variables={"out": "{{ params.base }}/out", "schema_file": str(shipped)},
                   conf={"spark.app.tag": "run-{{ ds }}"}, env_vars={"BATCH_DAY": "{{ ds_nodash }}"},
                   properties_file=str(defaults), files=f"{shipped},{{{{ params.base }}}}/extra.conf")
    op.resolve_template_files()
    assert op.properties_file == str(defaults) and op.config == str(tmp_path / "job.conf")  # found at parse time
    op.render_template_fields({"ds": "2024-05-06", "ds_nodash": "20240506", "params": {"base": "/data"}})
    assert op.conf == {"spark.app.tag": "run-2024-05-06"}
    assert op.env_vars == {"BATCH_DAY": "20240506"}
    assert op.properties_file == str(defaults)
    assert op.files == f"{shipped},/data/extra.conf"
    assert op.variables == {"out": "/data/out", "schema_file": str(shipped)}
    assert 'path = "${out}/dt=2024-05-06"' in op.config  # the config file, rendered


def test_an_absolute_config_path_is_still_rendered_from_its_file(tmp_path):
    op = _operator(tmp_path)
    op.config = str(tmp_path / "job.conf")
    op.resolve_template_files()
    op.render_template_fields({"ds": "2024-05-07"})
    assert 'dt=2024-05-07"' in op.config


def test_the_operators_env_vars_join_the_submissions_environment(tmp_path):
    op = _operator(tmp_path, env_vars={"BATCH_DAY": "20240506", "SEATUNNEL_PLAN_TEST": "mine"})

    # what the SeaTunnel hook hands the Spark provider, with the launcher's environment
    built = SimpleNamespace(_env_vars={"SEATUNNEL_PLAN_TEST": "launcher"})
    op.__dict__["hook"] = SimpleNamespace(spark_hook=built, add_spark_conf=lambda conf: None)
    hook = op._get_hook()
    assert hook._env_vars == {"BATCH_DAY": "20240506", "SEATUNNEL_PLAN_TEST": "launcher"}


def test_application_args_are_refused_as_the_launchers_own(tmp_path):
    with pytest.raises(ValueError, match="application_args"):
        _operator(tmp_path, application_args=["--x"])
