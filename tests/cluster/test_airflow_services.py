"""The example DAG under Airflow's real services: REST API, LocalExecutor, and the UI in headless Chromium.

One run of ``seatunnel_example`` per module, triggered through the public API v2 with a run conf
redirecting its output (``{"output_root": ...}``); the tests then read what Airflow recorded and
what its UI shows. Screenshots are kept under ``.cache/test-artifacts/airflow-ui`` (named in
pytest's closing summary).
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from .conftest import ARTIFACTS, AirflowServices, report_artifact
from .services import wait_for

DAG_ID = "seatunnel_example"
RUN_ID = "cluster_test_run"
# an unusual date (after the DAG's start date, or the run has no tasks): a DAG without the
# output_root param writes under /tmp/seatunnel-example/<ds>
LOGICAL_DATE = "2024-07-17T00:00:00Z"
DS = "2024-07-17"
#: FakeSource rows per source in dags/configs/example.conf: row.num × env.parallelism (2)
ROWS = {"web_orders": 500 * 2, "store_orders": 300 * 2}
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"


@dataclass
class ExampleRun:
    state: str
    tasks: dict[str, dict[str, Any]]  # task id -> task instance (REST)
    pipelines: list[str]  # the pipeline tasks' ids (group.child)
    output: Path


def _task_log(services: AirflowServices, task_id: str, try_number: int) -> str:
    try:
        answer = services.api(f"dags/{DAG_ID}/dagRuns/{RUN_ID}/taskInstances/{task_id}/logs/{try_number}"
                              "?full_content=true")
    except OSError as e:
        return str(e)
    content = answer.get("content", "")
    return "\n".join(str(c.get("event", c)) if isinstance(c, dict) else str(c) for c in content)[-4000:]


@pytest.fixture(scope="module")
def example_run(airflow_services: AirflowServices, tmp_path_factory) -> Iterator[ExampleRun]:
    """Trigger seatunnel_example through the REST API with a run conf, and wait for its outcome."""
    output_root = tmp_path_factory.mktemp("example-output")
    params = airflow_services.api(f"dags/{DAG_ID}/details").get("params") or {}
    if "output_root" in params:
        output = output_root / DS / "orders"
    else:  # a DAG without the output_root param writes where its variables say
        output = Path("/tmp/seatunnel-example") / DS / "orders"
        shutil.rmtree(output.parent, ignore_errors=True)
    try:
        airflow_services.api(f"dags/{DAG_ID}/dagRuns", "POST", {"dag_run_id": RUN_ID, "logical_date": LOGICAL_DATE,
                                                              "conf": {"output_root": str(output_root)}})

        def finished() -> str | None:
            state = airflow_services.api(f"dags/{DAG_ID}/dagRuns/{RUN_ID}")["state"]
            return state if state in ("success", "failed") else None

        state = wait_for(f"the {DAG_ID} run to finish", finished, 480, airflow_services.services, 2.0)
        tasks = {t["task_id"]: t for t in
                 airflow_services.api(f"dags/{DAG_ID}/dagRuns/{RUN_ID}/taskInstances")["task_instances"]}
        if state != "success":
            logs = "\n".join(f"--- {t} ({ti['state']}) ---\n{_task_log(airflow_services, t, ti['try_number'])}"
                             for t, ti in tasks.items() if ti["state"] != "success")
            pytest.fail(f"{DAG_ID} run {state}: {[(t, ti['state']) for t, ti in tasks.items()]}\n{logs}")
        pipelines = sorted(t for t in tasks
                           if t.startswith("orders.") and t not in ("orders.prepare", "orders.summary"))
        yield ExampleRun(state, tasks, pipelines, output)
    finally:
        if not output.is_relative_to(output_root):
            shutil.rmtree(output.parent, ignore_errors=True)


def _sign_in(page: Any, services: AirflowServices) -> None:
    """Open the example run's page, signing in as the test user on the way."""
    page.set_default_timeout(90_000)
    page.goto(f"{services.url}/dags/{DAG_ID}/runs/{RUN_ID}")
    page.get_by_label("Username").fill(services.user)
    page.get_by_label("Password").fill(services.password)
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_url(f"**/dags/{DAG_ID}/runs/{RUN_ID}")


def _when(stamp: str) -> datetime:
    return datetime.fromisoformat(stamp.replace("Z", "+00:00"))


def test_pipelines_run_concurrently_and_report_their_metrics(airflow_services, example_run):
    tasks, pipelines = example_run.tasks, example_run.pipelines
    assert len(pipelines) == 4 and all(tasks[t]["state"] == "success" for t in tasks), tasks
    assert {tasks[t]["operator"] for t in pipelines} == {"SeaTunnelOperator"}

    # LocalExecutor (parallelism 4) ran the independent pipeline tasks side by side
    events = sorted([(_when(tasks[t]["start_date"]), 1) for t in pipelines]
                    + [(_when(tasks[t]["end_date"]), -1) for t in pipelines])
    running = peak = 0
    for _, step in events:
        running += step
        peak = max(peak, running)
    assert peak >= 2, [(t, tasks[t]["start_date"], tasks[t]["end_date"]) for t in pipelines]
    assert all(_when(tasks["orders.prepare"]["end_date"]) <= _when(tasks[t]["start_date"]) for t in pipelines)

    # each pipeline task's XCom holds its metrics
    written = {}
    for task_id in pipelines:
        entry = airflow_services.api(f"dags/{DAG_ID}/dagRuns/{RUN_ID}/taskInstances/{task_id}/xcomEntries/return_value")
        metrics = entry["value"]
        source = next(name for name in ROWS if task_id.split(".", 1)[1].startswith(name))
        assert metrics["status"] == "FINISHED" and metrics["committed"] is True, metrics
        assert metrics["read_count"] == metrics["write_count"] == ROWS[source], (task_id, metrics)
        assert metrics["failed_count"] == 0 and metrics["attempt"] == 1, metrics
        written[task_id] = metrics["write_count"]
    summary = airflow_services.api(f"dags/{DAG_ID}/dagRuns/{RUN_ID}/taskInstances/orders.summary"
                                   "/xcomEntries/return_value")["value"]
    assert summary["write_count"] == sum(written.values()) == 2 * sum(ROWS.values()), summary

    # the Parquet files hold both sources' rows once
    import pyarrow.parquet as pq

    table = pq.read_table(example_run.output)
    channels = table.column("channel").to_pylist()
    assert table.num_rows == sum(ROWS.values()), example_run.output
    assert channels.count("web") == ROWS["web_orders"] and channels.count("store") == ROWS["store_orders"]


def test_ui_shows_one_task_per_pipeline_inside_the_group(airflow_services, example_run, request):
    """Grid, graph and Gantt views of the run, logged in as the test user; screenshots kept as artifacts."""
    from playwright.sync_api import sync_playwright

    assert Path(CHROMIUM).exists(), "Chromium is missing: run `make test-deps` (apt-get install chromium)"
    shots = ARTIFACTS / "airflow-ui"
    shots.mkdir(parents=True, exist_ok=True)
    assert len(example_run.pipelines) == 4, example_run.tasks
    # the UI labels a pipeline task with its display name (``orders → LocalFile``), the others by their id
    local_ids = [example_run.tasks[t].get("task_display_name") or t.split(".", 1)[1]
                 for t in example_run.pipelines] + ["prepare", "summary"]
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True,
                                             args=["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"])
        try:
            context = browser.new_context(viewport={"width": 1600, "height": 900})
            # a wider grid panel, so the pipeline task ids are not cut
            context.add_init_script("localStorage.setItem('react-resizable-panels:grid-ltr', JSON.stringify("
                                    "{'details-panel,main-panel': {expandToSizes: {}, layout: [45, 55]}}));")
            page = context.new_page()
            _sign_in(page, airflow_services)

            # grid: open the job's group
            page.locator('[aria-label="Toggle group"][data-group-id="orders"]').first.click()
            for local_id in local_ids:
                page.get_by_text(local_id, exact=True).first.wait_for()
            time.sleep(0.7)  # the group's chevron turns
            grid_text = page.inner_text("body")
            page.screenshot(path=str(shots / "airflow-grid.png"))

            # graph: every task group expanded, the details panel out of the way, the whole DAG in view
            page.get_by_label("Show Graph (Press g)").click()
            expand = page.get_by_label("Expand all task groups")
            expand.wait_for()
            if expand.is_enabled():
                expand.click()
            page.get_by_label("Collapse Details Panel").click()
            for local_id in local_ids:
                page.get_by_text(local_id, exact=True).first.wait_for()
            page.get_by_label("Fit View").click()
            time.sleep(1.0)  # the fit-view animation
            graph_text = page.inner_text("body")
            page.screenshot(path=str(shots / "airflow-graph.png"))

            # Gantt: the pipelines' bars side by side
            page.get_by_label("Show Gantt").click()
            page.get_by_text(local_ids[0], exact=True).first.wait_for()
            time.sleep(1.0)
            page.screenshot(path=str(shots / "airflow-gantt.png"))
        finally:
            browser.close()
    report_artifact(request.node, f"Airflow UI screenshots (grid, graph, Gantt of {DAG_ID}): {shots}")
    for text in (grid_text, graph_text):
        assert "orders" in text and all(local_id in text for local_id in local_ids), text[:3000]
    assert graph_text.count("SeaTunnelOperator") >= len(example_run.pipelines), graph_text[:3000]


def test_the_seatunnel_view_api_assembles_the_run_through_airflows_api(airflow_services, example_run):
    """``/seatunnel/api/runs/<dag>/<run>`` (the plugin the provider registers on the API server): the job
    group's graph from its prepare task, each pipeline's state, counts and links, read through Airflow's
    REST API as the caller; no credentials, no view."""
    from .services import http_json

    view = http_json(f"{airflow_services.url}/seatunnel/api/runs/{DAG_ID}/{RUN_ID}", token=airflow_services.token)
    (group,) = view["groups"]
    assert group["group"] == "orders" and group["mode"] == "BATCH" and group["states"] == {"success": 4}, group
    assert group["write_count"] == 2 * sum(ROWS.values()) and view["active"] is False
    assert {p["airflow_task_id"] for p in group["pipelines"]} == set(example_run.pipelines)
    for p in group["pipelines"]:
        source = next(v for v in p["vertices"] if v["kind"] == "source")
        assert p["read_count"] == ROWS[source["output"]] and p["state"] == "success" and not p["live"], p
        assert p["log_url"] == f"dags/{DAG_ID}/runs/{RUN_ID}/tasks/{p['airflow_task_id']}?try_number=1"
        assert p["slots"]["with_fusion"] >= 1 and p["split"]["reason"] and "config" not in source
    with pytest.raises(OSError, match="HTTP 401"):
        http_json(f"{airflow_services.url}/seatunnel/api/runs/{DAG_ID}/{RUN_ID}")
    plugins = airflow_services.api("plugins")["plugins"]
    (plugin,) = [p for p in plugins if p["name"] == "seatunnel"]
    assert plugin["external_views"][0]["destination"] == "dag_run"


def test_the_seatunnel_view_in_the_ui(airflow_services, example_run, request):
    """The DAG run's SeaTunnel tab in Chromium, signed in once (the view's requests carry the UI's own
    session): the job's graph, every pipeline with its state and counts, the search; screenshots
    kept as artifacts (docs/images/seatunnel-view*.png are copies of them)."""
    from playwright.sync_api import sync_playwright

    shots = ARTIFACTS / "airflow-ui"
    shots.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True,
                                             args=["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"])
        try:
            page = browser.new_context(viewport={"width": 1500, "height": 950}).new_page()
            _sign_in(page, airflow_services)
            page.get_by_role("link", name="SeaTunnel", exact=True).click()  # the plugin's tab on the run's page
            frame = page.frame_locator("iframe").first
            frame.get_by_text("Sinks").first.wait_for()
            time.sleep(0.5)
            page.screenshot(path=str(shots / "seatunnel-view-tab.png"))
            in_tab = frame.locator("body").inner_text()

            # the page itself, full size; then searched
            page.goto(f"{airflow_services.url}/seatunnel/run?dag_id={DAG_ID}&run_id={RUN_ID}")
            page.get_by_text("Sinks").first.wait_for()
            page.screenshot(path=str(shots / "seatunnel-view.png"), full_page=True)
            page.get_by_label("Search pipelines").fill("store")
            searched = page.locator("main").inner_text()
        finally:
            browser.close()
    report_artifact(request.node, f"SeaTunnel view screenshots: {shots}/seatunnel-view*.png")
    assert "FakeSource" in in_tab and "LocalFile" in in_tab and "success 4" in in_tab, in_tab[:3000]
    assert f"read {ROWS['web_orders']:,}" in in_tab and "task log" in in_tab
    assert "2 of 4 shown" in searched and "store_orders" in searched, searched[:2000]
