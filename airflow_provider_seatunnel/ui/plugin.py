"""The Airflow plugin the provider's package registers (entry point ``airflow.plugins``): the SeaTunnel view's
FastAPI app under ``/seatunnel`` on the API server, and a "SeaTunnel" tab on every DAG run's page
showing it (an external view; a run without job groups says so)."""

from __future__ import annotations

from airflow.plugins_manager import AirflowPlugin

from .app import app

#: where the page is, relative to the UI's base URL, with the placeholders Airflow fills in
HREF = "seatunnel/run?dag_id={DAG_ID}&run_id={RUN_ID}"


class SeaTunnelPlugin(AirflowPlugin):
    name = "seatunnel"
    fastapi_apps = [{"app": app, "url_prefix": "/seatunnel", "name": "SeaTunnel view"}]  # noqa: RUF012
    external_views = [{"name": "SeaTunnel", "href": HREF, "destination": "dag_run",  # noqa: RUF012
                       "url_route": "seatunnel"}]
