"""The example job as an Airflow DAG: one task per pipeline of ``configs/example.conf``.

Two generated sources → Sql → Parquet files plus an Assert; the job splits into four
pipelines, which run as four parallel tasks of the ``orders`` group. The files land in
``<output_root>/<ds>/orders``; the DAG param ``output_root`` redirects them
(``airflow dags test seatunnel_example -c '{"output_root": "/data"}'``; ``make demo`` uses ``.demo/output``).
Nothing here sets retries: each pipeline task is restored up to 3 times, 3 s apart (SeaTunnel's
default restore policy; ``job.retry.*`` in the config, ``retries=`` or ``default_args`` change it).
"""

from __future__ import annotations

import tempfile
from datetime import datetime
from pathlib import Path

from airflow.sdk import DAG, Param

from airflow_provider_seatunnel.operators.job_group import SeaTunnelJobGroup

CONFIG = Path(__file__).parent / "configs" / "example.conf"

with DAG(
    dag_id="seatunnel_example",
    schedule=None,
    start_date=datetime(2024, 1, 1),
    catchup=False,
    params={
        "output_root": Param(str(Path(tempfile.gettempdir()) / "seatunnel-example"), type="string",
                             description="Where the orders go: <output_root>/<ds>/orders"),
    },
    tags=["seatunnel", "example"],
    doc_md=__doc__,
) as dag:
    SeaTunnelJobGroup(
        group_id="orders",
        config=CONFIG,
        variables={"output_dir": "{{ params.output_root }}/{{ ds }}/orders"},
    )
