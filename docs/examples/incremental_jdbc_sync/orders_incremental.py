"""An incremental Jdbc sync: each DAG run copies the orders changed in its data interval from the
shop's database into the warehouse, as an upsert on the primary key.

The interval comes from the run: ``interval_start``/``interval_end`` are ``{{ data_interval_start | ts }}``
and ``{{ data_interval_end | ts }}``, so the run triggered at midnight of 2024-05-08 reads the rows with
``2024-05-07T00:00:00+00:00 <= updated_at < 2024-05-08T00:00:00+00:00``. Intervals tile time (each
starts where the one before ended), so every change is read by exactly one run; a row changed again
later is read again and the upsert overwrites it. Re-running an interval reads the same rows and the
upsert leaves the warehouse as it was; a retry of a run is its restore (nothing is written twice).

Airflow 3's ``schedule="@daily"`` gives zero-length data intervals (start = end = the run's time);
``CronTriggerTimetable`` with ``interval=`` gives the day before each run.

Connections (the blocks name the two databases with ``jdbc_conn_id``; every pipeline task also needs the
Spark connection ``spark_default``; nothing is looked up at parse time)::

    AIRFLOW_CONN_SPARK_DEFAULT='{"conn_type": "spark", "host": "local[*]"}'

    AIRFLOW_CONN_SHOP_DB='{"conn_type": "postgres", "host": "shop-db", "port": 5432, "schema": "shop",
                           "login": "reader", "password": "..."}'
    AIRFLOW_CONN_WAREHOUSE='{"conn_type": "postgres", "host": "warehouse", "port": 5432, "schema": "dwh",
                             "login": "loader", "password": "..."}'

(or ``airflow connections add``, or a secrets backend). See docs/airflow.md, "Incremental Jdbc sync".
"""

from __future__ import annotations

from datetime import datetime, timedelta

from airflow.sdk import DAG, CronTriggerTimetable

from airflow_provider_seatunnel.operators.job_group import SeaTunnelJobGroup

with DAG(
    dag_id="orders_incremental",
    schedule=CronTriggerTimetable("0 0 * * *", timezone="UTC", interval=timedelta(days=1)),
    start_date=datetime(2024, 1, 1),
    catchup=False,
    max_active_runs=1,
    tags=["seatunnel", "example"],
    doc_md=__doc__,
) as dag:
    SeaTunnelJobGroup(
        group_id="orders",
        config="configs/orders_incremental.conf",  # next to this file
        variables={"interval_start": "{{ data_interval_start | ts }}",
                   "interval_end": "{{ data_interval_end | ts }}"},
    )
