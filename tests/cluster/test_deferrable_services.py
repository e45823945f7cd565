"""A deferrable pipeline task under Airflow's real services, its triggerer killed while the task is deferred.

Airflow's API server, scheduler (LocalExecutor), DAG processor and ``airflow triggerer``: the task defers
once its detached driver runs; the triggerer watching it is SIGKILLed; a second triggerer takes the trigger
over (the first one's heartbeat has stopped) and the task resumes and reports, every row written once,
without a retry. ``slow`` (``make test-slow``): Airflow's services take minutes to start on a loaded machine.
"""

from __future__ import annotations

import json
import signal
import textwrap
from pathlib import Path

import pytest

from ..airflow_db import shared_dir
from .conftest import BIN, airflow_running
from .services import Service, stop_all, wait_for

DAG_ID = "st_deferrable_services"
#: enough rows that the driver still runs once the trigger is picked up (its JVM's start alone takes seconds)
ROWS = 200_000
JOB = """
env { job.name = "deferred_services" }
source { FakeSource { plugin_output = "gen", row.num = __ROWS__, schema = { fields { id = bigint, name = string } } } }
sink { LocalFile { plugin_input = "gen", path = "__OUT__", file_format_type = "json" } }
"""
DAG = """
from datetime import datetime
from airflow.sdk import DAG
from airflow_provider_seatunnel.operators.seatunnel import SeaTunnelOperator

with DAG({dag_id!r}, schedule=None, start_date=datetime(2024, 1, 1)) as dag:
    SeaTunnelOperator(task_id="job", config={config!r}, format="hocon", deferrable=True, retries=0)
"""


@pytest.mark.slow
def test_a_killed_triggerer_hands_the_deferred_pipeline_to_the_next_and_it_commits_once(tmp_path_factory):
    home = tmp_path_factory.mktemp("airflow-deferrable")
    out = home / "out"
    (home / "dags").mkdir()
    (home / "dags" / f"{DAG_ID}.py").write_text(textwrap.dedent(DAG.format(
        dag_id=DAG_ID, config=JOB.replace("__OUT__", str(out)).replace("__ROWS__", str(ROWS)))))
    settings = {"AIRFLOW__TRIGGERER__TRIGGERER_HEALTH_CHECK_THRESHOLD": "5",
                "AIRFLOW__TRIGGERER__JOB_HEARTBEAT_SEC": "1"}
    with airflow_running(home, DAG_ID, shared_dir(tmp_path_factory), **settings) as services:
        airflow = str(BIN / "airflow")
        first = Service("airflow triggerer", [airflow, "triggerer"], services.env, home / "triggerer-1.log", cwd=home)
        services.services.append(first)
        services.api(f"dags/{DAG_ID}/dagRuns", "POST", {"dag_run_id": "deferred", "logical_date": None})

        def ti() -> dict:
            return services.api(f"dags/{DAG_ID}/dagRuns/deferred/taskInstances/job")

        def watched_by() -> int | None:  # the triggerer job running the task's trigger
            task = ti()
            return (task.get("trigger") or {}).get("triggerer_id") if task["state"] == "deferred" else None

        first_job = wait_for("the deferred task's trigger to run in the first triggerer", watched_by, 480,
                             services.services, 0.5)
        assert not list(out.rglob("*.json")), "the pipeline committed before the triggerer was killed"
        first._signal(signal.SIGKILL)
        stop_all([first], timeout=5.0)
        services.services.remove(first)
        second = Service("airflow triggerer (2)", [airflow, "triggerer"], services.env, home / "triggerer-2.log",
                         cwd=home)
        services.services.append(second)

        jobs = {first_job}

        def finished() -> str | None:
            task = ti()
            jobs.add((task.get("trigger") or {}).get("triggerer_id"))
            state = services.api(f"dags/{DAG_ID}/dagRuns/deferred")["state"]
            return state if state in ("success", "failed") else None

        state = wait_for("the resumed run to finish", finished, 480, services.services, 1.0)
        task = ti()
        assert state == "success" and task["try_number"] == 1, (task, second.tail())
        assert len(jobs - {None}) == 2, jobs  # the second triggerer took the trigger over
        rows = [json.loads(line) for f in out.rglob("*.json") for line in Path(f).read_text().splitlines() if line]
        assert len(rows) == ROWS  # once: a second commit of the run would double them
