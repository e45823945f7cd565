"""The example DAGs parse, and render one task per pipeline of their job."""

from __future__ import annotations

import importlib.util

from airflow_provider_seatunnel.plan import compile_job

from ..conftest import ROOT


def _load_dag(name: str):
    spec = importlib.util.spec_from_file_location(name, ROOT / "dags" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.dag


def test_seatunnel_example_renders_one_task_per_pipeline():
    dag = _load_dag("seatunnel_example")
    plan = compile_job(ROOT / "dags" / "configs" / "example.conf",
                       {"output_dir": "{{ params.output_root }}/{{ ds }}/orders"})
    assert dag.dag_id == "seatunnel_example"
    pipelines = sorted(f"orders.{p.task_id}" for p in plan.pipelines)
    assert len(pipelines) == 4
    assert sorted(dag.task_ids) == sorted([*pipelines, "orders.prepare", "orders.summary"])
    for task_id in pipelines:  # independent of each other: prepare before, summary after
        assert dag.get_task(task_id).upstream_task_ids == {"orders.prepare"}
    # the output root is a run-time param (the demo points it into .demo/), not a path frozen at import
    assert "output_root" in dag.params
    assert all(dag.get_task(t).variables == {"output_dir": "{{ params.output_root }}/{{ ds }}/orders"}
               for t in pipelines)


def test_seatunnel_recurring_sync_is_a_daily_partitioned_sync():
    dag = _load_dag("seatunnel_recurring_sync")
    plan = compile_job(ROOT / "dags" / "configs" / "recurring_sync.conf",
                       {"dt": "{{ ds }}", "output_root": "{{ params.output_root }}"})
    assert dag.dag_id == "seatunnel_recurring_sync"
    assert dag.catchup is False and dag.start_date is not None
    assert dag.schedule == "@daily"
    assert "output_root" in dag.params
    assert sorted(dag.task_ids) == sorted([*(f"sync.{p.task_id}" for p in plan.pipelines), "sync.prepare",
                                           "sync.summary"])
    (task,) = [t for t in dag.tasks if t.task_id not in ("sync.prepare", "sync.summary")]
    assert task.variables == {"dt": "{{ ds }}", "output_root": "{{ params.output_root }}"}
    (sink,) = [v for v in plan.pipelines[0].vertices if v.plugin == "LocalFile"]
    assert sink.config["path"].endswith("/orders/dt={{ ds }}")


def test_templated_variables_still_find_their_pipeline():
    """The group compiles with ``{{ ds }}`` unrendered; the task compiles with it rendered: the
    LocalFile path (part of the id's hash) differs, the readable part does not."""
    conf = ROOT / "dags" / "configs" / "example.conf"
    parsed = compile_job(conf, {"output_dir": "/out/{{ ds }}"}, use_cache=False)
    rendered = compile_job(conf, {"output_dir": "/out/2024-05-06"}, use_cache=False)
    assert {p.task_id for p in parsed.pipelines} != {p.task_id for p in rendered.pipelines}
    for p in parsed.pipelines:
        assert rendered.pipeline(p.task_id).name == p.name
        assert rendered.pipeline(p.task_id).task_id.rsplit("_", 1)[0] == p.task_id.rsplit("_", 1)[0]


def test_seatunnel_cdc_is_a_scheduled_cdc_sync_into_a_warehouse_table():
    dag = _load_dag("seatunnel_cdc")
    variables = dag.get_task(next(t for t in dag.task_ids if t not in ("orders_cdc.prepare", "orders_cdc.summary"))
                             ).variables
    plan = compile_job(ROOT / "dags" / "configs" / "cdc_sync.conf", variables)
    assert plan.mode == "STREAMING" and len(plan.pipelines) == 1
    plugins = sorted(v.plugin for v in plan.pipelines[0].vertices)
    assert plugins == ["Jdbc", "Postgres-CDC"]
    assert not [w for w in plan.warnings if w.get("code") == "not-runnable"]
    assert dag.max_active_runs == 1 and dag.catchup is False
    assert "{{ var.value.cdc_source_password }}" in variables.values()  # the secret comes when the task runs


def test_seatunnel_lakehouse_lands_a_kafka_stream_in_a_delta_table_on_a_schedule():
    dag = _load_dag("seatunnel_lakehouse")
    group = "orders_lakehouse"
    task = next(t for t in dag.task_ids if t not in (f"{group}.prepare", f"{group}.summary"))
    variables = dag.get_task(task).variables
    assert variables["topic"] == "{{ params.topic }}"
    plan = compile_job(ROOT / "dags" / "configs" / "kafka_to_delta.conf",
                       {"bootstrap_servers": "localhost:9092", "topic": "orders", "warehouse": "/tmp/wh",
                        "checkpoint_root": "/tmp/ck"})
    assert plan.mode == "STREAMING" and len(plan.pipelines) == 1
    assert sorted(v.plugin for v in plan.pipelines[0].vertices) == ["Delta", "Kafka"]
    assert not [w for w in plan.warnings if w.get("code") == "not-runnable"]
    assert dag.max_active_runs == 1 and dag.catchup is False


def test_every_example_pipeline_task_is_restored_out_of_the_box():
    """The example DAGs, their groups and configs set no retries: each pipeline task gets
    SeaTunnel's restore policy (3 retries, 3 s apart, what the plan's text prints), not Airflow's 0."""
    from datetime import timedelta

    from airflow_provider_seatunnel.operators.seatunnel import SeaTunnelOperator

    for name in ("seatunnel_example", "seatunnel_recurring_sync", "seatunnel_cdc", "seatunnel_lakehouse"):
        pipelines = [t for t in _load_dag(name).tasks if isinstance(t, SeaTunnelOperator)]
        assert pipelines, name
        assert {(t.retries, t.retry_delay) for t in pipelines} == {(3, timedelta(seconds=3))}, name
