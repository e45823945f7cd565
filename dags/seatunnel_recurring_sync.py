"""A daily sync as an Airflow DAG: each run writes one date partition, ``<output_root>/orders/dt=<ds>``.

[`configs/recurring_sync.conf`](configs/recurring_sync.conf): generated orders → Sql (stamps each row
with the run's day) → JSON files in the day's partition, checked by an Assert. The day comes from
``{{ ds }}`` (the variable ``dt``); the output root from the DAG param ``output_root``, so a run can
be pointed elsewhere: ``airflow dags test seatunnel_recurring_sync 2024-05-06 -c '{"output_root": "/data"}'``.

The sink's ``data_save_mode = DROP_DATA`` replaces the day's partition once per run: re-running a
day does not append a second copy, and a retry of the same run keeps what the run already committed.
"""

from __future__ import annotations

import tempfile
from datetime import datetime
from pathlib import Path

from airflow.sdk import DAG, Param

from airflow_provider_seatunnel.operators.job_group import SeaTunnelJobGroup

CONFIG = Path(__file__).parent / "configs" / "recurring_sync.conf"

with DAG(
    dag_id="seatunnel_recurring_sync",
    schedule="@daily",
    start_date=datetime(2024, 1, 1),
    catchup=False,
    max_active_runs=1,
    params={
        "output_root": Param(str(Path(tempfile.gettempdir()) / "seatunnel-recurring-sync"), type="string",
                             description="Directory of the synced table: each day lands in orders/dt=<ds>"),
    },
    tags=["seatunnel", "example"],
    doc_md=__doc__,
) as dag:
    SeaTunnelJobGroup(
        group_id="sync",
        config=CONFIG,
        variables={"dt": "{{ ds }}", "output_root": "{{ params.output_root }}"},
    )
