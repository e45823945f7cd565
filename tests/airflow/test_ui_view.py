"""The SeaTunnel view's data (plan/view.py, ui/view.py) and its page with many pipelines.

The page against a real Airflow run is tested in tests/cluster/test_airflow_services.py; here the
view of a compiled 120-pipeline job (assembled by the view's own code from task states as Airflow's
REST API reports them) is rendered in headless Chromium from the plugin's app on a loopback port:
it must stay readable (collapsed pipelines, a state summary that filters, a search).
"""

from __future__ import annotations

import json
import shutil
import socket
import threading
import time
from contextlib import contextmanager
from pathlib import Path

import pytest

from airflow_provider_seatunnel.plan.view import job_view
from airflow_provider_seatunnel.ui.view import live_progress, prepare_tasks, run_view

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"


def _many(n: int) -> str:
    sources = "\n".join(f'FakeSource {{ plugin_output = "t{i}", row.num = 5, schema = {{ fields {{ a = int }} }} }}'
                        for i in range(n))
    sinks = "\n".join(f'LocalFile {{ plugin_input = "t{i}", path = "/tmp/out{i}", file_format_type = "json" }}'
                      for i in range(n))
    return f'env {{ job.name = "many", plan.max-pipelines = 500 }}\nsource {{\n{sources}\n}}\nsink {{\n{sinks}\n}}'


def _tis(plan, states: list[str]) -> list[dict]:
    tis = [{"task_id": "job.prepare", "operator": "SeaTunnelPrepareOperator", "state": "success", "try_number": 1}]
    tis += [{"task_id": f"job.{p.task_id}", "operator": "SeaTunnelOperator", "state": s, "try_number": 1,
             "duration": 3.5} for p, s in zip(plan.pipelines, states, strict=True)]
    return tis


def test_the_plan_view_carries_the_graph_and_no_options(plan_of):
    plan = plan_of('env { parallelism = 2 }\n'
                   'source { Jdbc { url = "jdbc:postgresql://h/db", driver = "org.postgresql.Driver", user = "u", '
                   'password = "pw-secret-1", query = "select 1 as a", plugin_output = "t" } }\n'
                   'transform { Sql { plugin_input = "t", plugin_output = "u", query = "select a from t" } }\n'
                   'sink { Console { plugin_input = "u" } }')
    view = job_view(plan, {plan.pipelines[0].task_id: "job.x"})
    (p,) = view["pipelines"]
    assert p["airflow_task_id"] == "job.x" and [v["kind"] for v in p["vertices"]] == ["source", "transform", "sink"]
    assert p["chains"] and p["slots"]["with_fusion"] >= 1 and p["vertices"][0]["parallelism"] == 2
    assert "pw-secret-1" not in json.dumps(view) and "config" not in json.dumps(view)


def test_a_run_view_joins_states_metrics_and_live_progress(plan_of):
    plan = plan_of(_many(3))
    plans = {"job.prepare": job_view(plan, {p.task_id: f"job.{p.task_id}" for p in plan.pipelines})}
    tis = _tis(plan, ["success", "running", "failed"])
    ok, running, failed = (f"job.{p.task_id}" for p in plan.pipelines)
    line = ("Pipeline [(2/3)] x: progress after 20 s: read 2,023,744 rows (101,187 rows/s), wrote 1,000 rows "
            "(50 rows/s); Spark: stage 0: 0/2 tasks (2 running)")
    view = run_view("d", "r", tis, plans, {ok: {"read_count": 5, "write_count": 5, "ui_url": "http://spark"},
                                           failed: {"error": {"message": "boom", "deterministic": True}}},
                    {"state": "running"}, {running: live_progress(["other", line])})
    (group,) = view["groups"]
    by_id = {p["airflow_task_id"]: p for p in group["pipelines"]}
    assert by_id[ok]["read_count"] == 5 and by_id[ok]["spark_ui"] == "http://spark" and not by_id[ok]["live"]
    assert by_id[running]["live"] and by_id[running]["read_count"] == 2_023_744 and by_id[running]["write_count"] == 1000
    assert by_id[failed]["error"] == "boom" and group["states"] == {"failed": 1, "running": 1, "success": 1}
    assert view["active"] and prepare_tasks(tis) == ["job.prepare"]
    assert by_id[ok]["log_url"] == f"dags/d/runs/r/tasks/{ok}?try_number=1"
    assert live_progress(["sink[0] LocalFile table t: micro-batch 4: read 10 rows, wrote 10 rows in 80 ms "
                          "(5 micro-batch(es), 1,234 rows written so far; 125 rows/s)"])["write_count"] == 1234


def test_a_running_pipeline_shows_its_progress_report_per_table(plan_of):
    """The ``seatunnel_progress`` XCom a running task pushes (runtime/progress.py's snapshot) counts its
    tables while it runs; a log line's counts do not name tables."""
    from airflow_provider_seatunnel.runtime.progress import snapshot

    plan = plan_of(_many(1))
    (p,) = plan.pipelines
    plans = {"job.prepare": job_view(plan, {p.task_id: f"job.{p.task_id}"})}
    report = snapshot(12, {"source[0] FakeSource": [("t0", 40)]}, {"sink[0] LocalFile": [("t0", 25)]})
    view = run_view("d", "r", _tis(plan, ["running"]), plans, {}, {"state": "running"}, {f"job.{p.task_id}": report})
    (pipeline,) = view["groups"][0]["pipelines"]
    assert pipeline["live"] and (pipeline["read_count"], pipeline["write_count"]) == (40, 25)
    assert [(t["table"], t["status"], t["read"], t["written"]) for t in pipeline["tables"]] == [
        ("t0", "RUNNING", 40, 25)]
    line = run_view("d", "r", _tis(plan, ["running"]), plans, {}, {"state": "running"},
                    {f"job.{p.task_id}": live_progress(["progress after 3 s: read 4 rows, wrote 2 rows; Spark: x"])})
    assert [(t["read"], t["written"]) for t in line["groups"][0]["pipelines"][0]["tables"]] == [(None, None)]


@pytest.fixture
def view_server():
    """The plugin's FastAPI app (its page and static files) on a loopback port."""
    import uvicorn

    from airflow_provider_seatunnel.ui.app import create_app

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))  # bound here: no free port to lose before the server binds it
    port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(create_app(), host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 60
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "the view's server did not start"
        time.sleep(0.05)
    yield f"http://127.0.0.1:{port}"
    server.should_exit = True
    thread.join(10)
    sock.close()


@contextmanager
def _page(server: str, view: dict):
    """The view's page in headless Chromium, its API answering ``view`` (finished: no refresh)."""
    from playwright.sync_api import sync_playwright

    assert Path(CHROMIUM).exists(), "Chromium is missing: run `make test-deps` (apt-get install chromium)"
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=["--no-sandbox"])
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 900})
            page.route("**/api/runs/**", lambda route: route.fulfill(json={**view, "active": False}))
            page.goto(f"{server}/run?dag_id={view['dag_id']}&run_id={view['run_id']}")
            yield page
        finally:
            browser.close()


def test_a_job_of_120_pipelines_stays_readable(plan_of, view_server, tmp_path, request):
    plan = plan_of(_many(120))
    states = ["success"] * 100 + ["running"] * 12 + ["failed"] * 3 + ["queued"] * 5
    typo = {"text": "job.conf:3: warning: sink[0] LocalFile: option 'file_name_expresion': unknown option "
                    "'file_name_expresion' of LocalFile: it is ignored (did you mean 'file_name_expression'?)"}
    plans = {"job.prepare": job_view(plan, {p.task_id: f"job.{p.task_id}" for p in plan.pipelines}, [typo])}
    view = run_view("many_dag", "run_1", _tis(plan, states), plans, {}, {"state": "running"})
    assert len(view["groups"][0]["pipelines"]) == 120
    with _page(view_server, view) as page:
        page.get_by_text("success 100").wait_for()
        # the job's compile warnings, above its pipelines
        assert page.locator(".warnings summary").inner_text() == "⚠ 1 compile warning"
        assert "did you mean 'file_name_expression'?" in page.locator(".warnings li").inner_text()
        assert page.locator("section.pipeline").count() == 120
        assert page.locator(".tables").count() == 0  # one table per pipeline: no tables panel
        assert page.locator(".detail").count() == 0  # collapsed: one line per pipeline
        page.screenshot(path=str(tmp_path / "many.png"))
        page.get_by_role("button", name="failed 3").click()  # the state summary filters
        assert page.locator("section.pipeline").count() == 3
        page.get_by_role("button", name="failed 3").click()
        page.get_by_label("Search pipelines").fill("t117")  # the search: a dataset name
        assert page.locator("section.pipeline").count() == 1
        page.locator("section.pipeline .head").first.click()  # expands its graph
        assert page.locator(".detail .vertex").count() == 2
    request.node.user_properties.append(("artifact", f"the SeaTunnel view of 120 pipelines: {tmp_path / 'many.png'}"))


def test_the_api_server_calls_itself_where_airflows_configuration_says(monkeypatch):
    """The caller's credentials go to Airflow's configured address, never where a Host header points."""
    from starlette.requests import Request

    from airflow_provider_seatunnel.ui.app import api_base

    request = Request({"type": "http", "scheme": "http", "server": ("evil.example", 80), "root_path": "/seatunnel",
                       "path": "/seatunnel/api/runs/d/r", "query_string": b"", "headers": [(b"host", b"evil.example")]})
    monkeypatch.setenv("AIRFLOW__API__BASE_URL", "https://airflow.internal:8443/af/")
    assert api_base(request) == "https://airflow.internal:8443/af/api/v2/"
    monkeypatch.setenv("AIRFLOW__API__BASE_URL", "")
    monkeypatch.setenv("AIRFLOW__API__HOST", "0.0.0.0")
    monkeypatch.setenv("AIRFLOW__API__PORT", "9090")
    assert api_base(request) == "http://127.0.0.1:9090/api/v2/"


def _wide(n: int) -> str:
    """One pipeline of ``n`` tables (public.t000...) and one of two tables (x.a, x.b)."""
    tables = ", ".join(f'{{ schema = {{ table = "public.t{i:03d}", fields {{ a = int }} }}, row.num = 1 }}'
                       for i in range(n))
    return ('env { job.name = "wide" }\n'
            f'source {{ FakeSource {{ plugin_output = "w", tables_configs = [{tables}] }}\n'
            '  FakeSource { plugin_output = "x", tables_configs = [{ schema = { table = "x.a", fields { a = int } } },'
            ' { schema = { table = "x.b", fields { a = int } } }] } }\n'
            'sink { Console { plugin_input = "w" }\n  Console { plugin_input = "x" } }')


def test_a_pipeline_of_200_tables_shows_them_failed_first_and_sortable(plan_of, view_server, tmp_path, request):
    plan = plan_of(_wide(200))
    wide = max(plan.pipelines, key=lambda p: len(p.vertices[0].tables or ()))
    plans = {"job.prepare": job_view(plan, {p.task_id: f"job.{p.task_id}" for p in plan.pipelines})}
    counts = {f"public.t{i:03d}": (i * 7) % 1000 for i in range(200)}
    metrics = {f"job.{wide.task_id}": {"status": "FINISHED", "pipeline": wide.id, "per_table": {"k": counts},
                                       "per_table_read": {"s": counts}}}
    states = ["success" if p is wide else "failed" for p in plan.pipelines]
    view = run_view("wide_dag", "run_1", _tis(plan, states), plans, metrics, {"state": "failed"})
    assert len(view["groups"][0]["tables"]) == 202
    with _page(view_server, view) as page:
        page.get_by_text("Tables: 202 (2 failed)").wait_for()
        rows = page.locator(".tables tbody tr")
        assert rows.count() == 202
        assert rows.nth(0).locator("td").nth(1).inner_text() == "x.a"  # the failed pipeline's tables first
        assert rows.nth(1).locator("td").nth(0).inner_text() == "FAILED"
        page.screenshot(path=str(tmp_path / "tables.png"))
        page.locator(".tables th", has_text="Read").click()  # most rows read first
        top = max(counts, key=lambda t: (counts[t], t))
        assert rows.nth(0).locator("td").nth(1).inner_text() in {t for t, n in counts.items() if n == counts[top]}
        page.locator(".tables th", has_text="Read").click()  # again: fewest first (uncounted last)
        assert rows.nth(0).locator("td").nth(3).inner_text() == "0"
        assert rows.nth(201).locator("td").nth(3).inner_text() == "–"
        page.locator(".tables th", has_text="Table").click()
        assert rows.nth(0).locator("td").nth(1).inner_text() == "public.t000"
        page.get_by_label("Search pipelines").fill("t19")
        assert rows.count() == 10  # public.t190 ... public.t199
    request.node.user_properties.append(("artifact", f"the SeaTunnel view of 200 tables: {tmp_path / 'tables.png'}"))
