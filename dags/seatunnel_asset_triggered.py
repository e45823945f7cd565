"""Asset-triggered scheduling: a report that runs whenever ``seatunnel_recurring_sync`` has written a partition.

The sync's sink writes ``<output_root>/orders/dt=<ds>``, a path only the running task can name, so its
task declares an ``AssetAlias`` (``seatunnel/<pipeline task id>/sink[0]``) and, once the pipeline has
committed, adds the partition it wrote to it as an asset event. This DAG is scheduled on that alias:
:func:`job_outlets` compiles the sync's config with the sync DAG's own (unrendered) variables, so it
names exactly the aliases and assets the sync's tasks declare. Each run reads the partitions in its
triggering asset events and counts their rows (a manual run without events counts nothing).
"""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from urllib.parse import unquote, urlsplit

from airflow.sdk import DAG, task

from airflow_provider_seatunnel.operators.lineage import job_outlets

#: the sync's config and variables, exactly as seatunnel_recurring_sync.py passes them
SYNC_CONFIG = Path(__file__).parent / "configs" / "recurring_sync.conf"
SYNC_VARIABLES = {"dt": "{{ ds }}", "output_root": "{{ params.output_root }}"}

with DAG(
    dag_id="seatunnel_asset_triggered",
    schedule=job_outlets(SYNC_CONFIG, SYNC_VARIABLES),
    start_date=datetime(2024, 1, 1),
    catchup=False,
    tags=["seatunnel", "example"],
    doc_md=__doc__,
) as dag:

    @task
    def partition_rows(triggering_asset_events=None) -> dict[str, int]:
        """Rows of each partition the triggering events name (JSON lines files)."""
        counts: dict[str, int] = {}
        for events in (triggering_asset_events or {}).values():
            for event in events:
                uri = event.asset.uri
                folder = Path(unquote(urlsplit(uri).path))
                counts[uri] = sum(1 for f in folder.glob("*.json") for line in f.read_text().splitlines()
                                  if line.strip() and json.loads(line))
        print(json.dumps(counts))
        return counts

    partition_rows()
