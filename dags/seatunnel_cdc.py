"""A change data capture sync as an Airflow DAG: a PostgreSQL table mirrored into a warehouse table.

[`configs/cdc_sync.conf`](configs/cdc_sync.conf): Postgres-CDC (the table's snapshot on the first run,
then every insert, update and delete) → a Jdbc table upserted on its primary key, through the Airflow
connection ``warehouse``. The job is STREAMING with the default trigger ``available_now``: every
scheduled run applies the changes committed since the last run, exactly once, and stops; the
replication slot and the stream's position live under ``checkpoint_root`` (docs/cdc.md). The source's
password comes from the Airflow Variable ``cdc_source_password`` when the task runs.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from airflow.sdk import DAG, Param

from airflow_provider_seatunnel.operators.job_group import SeaTunnelJobGroup

CONFIG = Path(__file__).parent / "configs" / "cdc_sync.conf"

with DAG(
    dag_id="seatunnel_cdc",
    schedule="*/15 * * * *",
    start_date=datetime(2024, 1, 1),
    catchup=False,
    max_active_runs=1,
    params={
        "source_url": Param("jdbc:postgresql://localhost:5432/shop", type="string"),
        "source_user": Param("replicator", type="string"),
        "source_table": Param("shop.public.orders", type="string", description="database.schema.table"),
        "target_table": Param("public.orders", type="string"),
        "checkpoint_root": Param("/var/lib/seatunnel/checkpoints", type="string"),
    },
    tags=["seatunnel", "cdc"],
    doc_md=__doc__,
) as dag:
    SeaTunnelJobGroup(
        group_id="orders_cdc",
        config=CONFIG,
        variables={
            "source_url": "{{ params.source_url }}",
            "source_user": "{{ params.source_user }}",
            "source_password": "{{ var.value.cdc_source_password }}",
            "source_table": "{{ params.source_table }}",
            "target_table": "{{ params.target_table }}",
            "checkpoint_root": "{{ params.checkpoint_root }}",
        },
    )
