"""The example job as an Airflow DAG: one task per pipeline of ``configs/example.conf``.

Two generated sources → Sql → Parquet files plus an Assert; the job splits into four
pipelines, which run as four parallel tasks of the ``orders`` group.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from airflow.sdk import DAG

from airflow_provider_seatunnel.operators.job_group import SeaTunnelJobGroup

CONFIG = Path(__file__).parent / "configs" / "example.conf"

with DAG(
    dag_id="seatunnel_example",
    schedule=None,
    start_date=datetime(2024, 1, 1),
    catchup=False,
    tags=["seatunnel", "example"],
    doc_md=__doc__,
) as dag:
    SeaTunnelJobGroup(
        group_id="orders",
        config=CONFIG,
        variables={"output_dir": "/tmp/seatunnel-example/{{ ds }}/orders"},
    )
