"""The asset-triggered example (dags/seatunnel_asset_triggered.py): it parses with the other example DAGs and
is scheduled on the very alias the sync's pipeline declares. That a run of the sync queues a run of it is
asserted on the sync's own run, by tests/airflow/test_recurring_sync.py (one DAG run serves both)."""

from __future__ import annotations


def test_the_example_is_scheduled_on_the_syncs_alias():
    from airflow.sdk import AssetAlias

    from .test_dags import _load_dag

    sync, report = _load_dag("seatunnel_recurring_sync"), _load_dag("seatunnel_asset_triggered")
    (pipeline,) = [t for t in sync.tasks if t.task_id not in ("sync.prepare", "sync.summary")]
    aliases = [o for o in pipeline.outlets if isinstance(o, AssetAlias)]
    assert aliases and list(report.timetable.asset_condition.objects) == aliases
