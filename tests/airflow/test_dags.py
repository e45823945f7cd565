"""The example DAGs parse, and render one task per pipeline of their job."""

from __future__ import annotations

import importlib.util

from airflow_provider_seatunnel.plan import compile_job

from ..conftest import ROOT


def test_seatunnel_example_renders_one_task_per_pipeline():
    spec = importlib.util.spec_from_file_location("seatunnel_example", ROOT / "dags" / "seatunnel_example.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    dag = module.dag
    plan = compile_job(ROOT / "dags" / "configs" / "example.conf",
                       {"output_dir": "/tmp/seatunnel-example/{{ ds }}/orders"})
    assert dag.dag_id == "seatunnel_example"
    pipelines = sorted(f"orders.{p.task_id}" for p in plan.pipelines)
    assert len(pipelines) == 4
    assert sorted(dag.task_ids) == sorted([*pipelines, "orders.prepare", "orders.summary"])
    for task_id in pipelines:  # independent of each other: prepare before, summary after
        assert dag.get_task(task_id).upstream_task_ids == {"orders.prepare"}


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
