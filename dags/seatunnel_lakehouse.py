"""A Kafka topic landed in a lakehouse table on a schedule: order events upserted into a Delta table.

[`configs/kafka_to_delta.conf`](configs/kafka_to_delta.conf): Kafka (json records) → a Delta table
upserted on ``id``. The job is STREAMING with the default trigger ``available_now``: every scheduled run
reads what was published since the last run (the offsets live in the stream's checkpoint under
``checkpoint_root``), commits it to the table as one Delta commit per micro-batch that carries the
run's transaction id (a retry never commits twice), and stops. The table keeps a change data feed
that another job can stream on (docs/delta.md).
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from airflow.sdk import DAG, Param

from airflow_provider_seatunnel.operators.job_group import SeaTunnelJobGroup

CONFIG = Path(__file__).parent / "configs" / "kafka_to_delta.conf"

with DAG(
    dag_id="seatunnel_lakehouse",
    schedule="@hourly",
    start_date=datetime(2024, 1, 1),
    catchup=False,
    max_active_runs=1,
    params={
        "bootstrap_servers": Param("localhost:9092", type="string"),
        "topic": Param("orders", type="string"),
        "warehouse": Param("/var/lib/seatunnel/warehouse", type="string"),
        "checkpoint_root": Param("/var/lib/seatunnel/checkpoints", type="string"),
    },
    tags=["seatunnel", "kafka", "delta"],
    doc_md=__doc__,
) as dag:
    SeaTunnelJobGroup(
        group_id="orders_lakehouse",
        config=CONFIG,
        variables={key: f"{{{{ params.{key} }}}}" for key in ("bootstrap_servers", "topic", "warehouse",
                                                              "checkpoint_root")},
    )
