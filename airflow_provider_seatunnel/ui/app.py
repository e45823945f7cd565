"""The SeaTunnel view's FastAPI app, served by Airflow's API server under ``/seatunnel`` (:mod:`.plugin`).

* ``GET /seatunnel/run?dag_id=...&run_id=...``: the page (static HTML and JavaScript, ``static/``),
  shown as a tab of the DAG run in Airflow's UI;
* ``GET /seatunnel/api/runs/{dag_id}/{run_id}``: the view of a DAG run as JSON (:func:`.view.run_view`).

The API server calls itself at the address Airflow's configuration gives (``[api] base_url``).

The API reads everything through Airflow's own REST API (``/api/v2``) with the caller's own
credentials — the UI's session cookie, or an ``Authorization`` header — so the view shows exactly
what the user may see, needs no login of its own and never touches Airflow's database; an answer of
401 or 403 from Airflow is passed on.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any
from urllib.parse import quote

from fastapi import FastAPI, HTTPException, Request
from fastapi.responses import FileResponse, JSONResponse
from fastapi.staticfiles import StaticFiles

from ..operators.observability import PROGRESS_XCOM_KEY
from ..plan.view import XCOM_KEY
from .view import live_progress, pipeline_tasks, prepare_tasks, run_view

STATIC = Path(__file__).parent / "static"
#: the REST API's page size (its ``maximum_page_limit`` default)
PAGE = 100
#: pipeline tasks fetched at once
CONCURRENCY = 16


class AirflowApi:
    """Airflow's REST API as the caller: its cookies and Authorization header passed on."""

    def __init__(self, request: Request) -> None:
        import httpx

        headers = {"Accept": "application/json"}
        if "authorization" in request.headers:
            headers["Authorization"] = request.headers["authorization"]
        self.client = httpx.AsyncClient(base_url=api_base(request), headers=headers, cookies=dict(request.cookies),
                                        timeout=30.0)
        self.limit = asyncio.Semaphore(CONCURRENCY)

    async def get(self, path: str, params: dict[str, Any] | None = None, missing_ok: bool = False) -> Any:
        async with self.limit:
            answer = await self.client.get(path, params=params)
        if answer.status_code == 404 and missing_ok:
            return None
        if answer.status_code >= 400:
            detail = answer.json().get("detail") if "json" in answer.headers.get("content-type", "") else answer.text
            raise HTTPException(answer.status_code, detail=detail or answer.reason_phrase)
        return answer.json()

    async def close(self) -> None:
        await self.client.aclose()


def api_base(request: Request) -> str:
    """Where Airflow's REST API is, from Airflow's own configuration (``[api] base_url``, else the
    API server's host and port) — never from the request's Host header, which the caller chooses:
    the caller's credentials go there."""
    from airflow.configuration import conf

    base = (conf.get("api", "base_url", fallback="") or "").strip().rstrip("/")
    if not base:
        host = conf.get("api", "host", fallback="127.0.0.1") or "127.0.0.1"
        host = "127.0.0.1" if host in ("0.0.0.0", "::", "") else host
        scheme = "https" if conf.get("api", "ssl_cert", fallback="") else "http"
        base = f"{scheme}://{host}:{conf.getint('api', 'port', fallback=8080)}"
    return f"{base}/api/v2/"


async def _task_instances(api: AirflowApi, run_path: str) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    while True:
        page = await api.get(f"{run_path}/taskInstances", {"limit": PAGE, "offset": len(found)})
        found.extend(page.get("task_instances", ()))
        if len(found) >= int(page.get("total_entries", 0)) or not page.get("task_instances"):
            return found


async def _xcom(api: AirflowApi, run_path: str, task_id: str, key: str) -> Any:
    answer = await api.get(f"{run_path}/taskInstances/{quote(task_id, safe='')}/xcomEntries/{quote(key, safe='')}",
                           missing_ok=True)
    return None if answer is None else answer.get("value")


async def _live(api: AirflowApi, run_path: str, ti: dict[str, Any]) -> dict[str, Any] | None:
    """A running task's last progress report: its ``seatunnel_progress`` XCom (plain data the task
    pushes), else, for a task that pushes none (one run by an earlier version of the package), the
    counts of the last progress line in its log."""
    report = await _xcom(api, run_path, ti["task_id"], PROGRESS_XCOM_KEY)
    if isinstance(report, dict):
        return report
    answer = await api.get(f"{run_path}/taskInstances/{quote(ti['task_id'], safe='')}/logs/{ti['try_number']}",
                           {"full_content": "true"}, missing_ok=True)
    content = (answer or {}).get("content") or []
    lines = (str(c.get("event", "")) if isinstance(c, dict) else str(c) for c in content)
    return live_progress(lines)


async def build_view(api: AirflowApi, dag_id: str, run_id: str) -> dict[str, Any]:
    run_path = f"dags/{quote(dag_id, safe='')}/dagRuns/{quote(run_id, safe='')}"
    run = await api.get(run_path)
    tis = await _task_instances(api, run_path)
    preparers = prepare_tasks(tis)
    plans = dict(zip(preparers, await asyncio.gather(*(_xcom(api, run_path, t, XCOM_KEY) for t in preparers)),
                     strict=True))
    plans = {k: v for k, v in plans.items() if isinstance(v, dict)}
    by_id = {t["task_id"]: t for t in tis}
    finished = [t for t in pipeline_tasks(plans) if (by_id.get(t) or {}).get("state") in ("success", "failed")]
    running = [by_id[t] for t in pipeline_tasks(plans) if (by_id.get(t) or {}).get("state") == "running"]
    metrics = await asyncio.gather(*(_xcom(api, run_path, t, "return_value") for t in finished))
    live = await asyncio.gather(*(_live(api, run_path, ti) for ti in running))
    return run_view(dag_id, run_id, tis, plans,
                    {t: m for t, m in zip(finished, metrics, strict=True) if isinstance(m, dict)}, run,
                    {ti["task_id"]: p for ti, p in zip(running, live, strict=True) if p})


def create_app() -> FastAPI:
    app = FastAPI(title="SeaTunnel", description="The SeaTunnel view of a DAG run's job groups")
    app.mount("/static", StaticFiles(directory=STATIC), name="static")

    @app.get("/run", include_in_schema=False)
    async def page() -> FileResponse:
        return FileResponse(STATIC / "run.html", headers={"Cache-Control": "no-cache"})

    @app.get("/api/runs/{dag_id}/{run_id}")
    async def run(dag_id: str, run_id: str, request: Request) -> JSONResponse:
        api = AirflowApi(request)
        try:
            return JSONResponse(await build_view(api, dag_id, run_id))
        finally:
            await api.close()

    return app


app = create_app()
