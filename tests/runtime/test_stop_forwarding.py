"""A STREAMING run's stop (SIGTERM or SIGINT to ``seatunnel-airflow run``): passed on to its pipeline drivers as
SIGTERM, a driver that starts after the stop included; a pipeline stopped before its queries started starts none.
Stand-in drivers (a Python script at a ``runtime/app.py`` path), no Spark: the real path runs in
tests/runtime/test_postgres_cdc.py (a CDC stream stopped by SIGTERM to the command)."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from pathlib import Path
from types import SimpleNamespace

from airflow_provider_seatunnel.runtime.launcher import _forward_stop
from airflow_provider_seatunnel.runtime.streaming import _run_queries

DRIVER = """
import signal, sys, time
from pathlib import Path
out = Path(sys.argv[sys.argv.index("--out") + 1])
signal.signal(signal.SIGTERM, lambda *_: (out.write_text("SIGTERM"), sys.exit(0)))
Path(str(out) + ".ready").write_text("")
time.sleep(60)
"""


def _driver(tmp_path: Path, plan: Path, name: str) -> tuple[subprocess.Popen, Path]:
    app = tmp_path / "runtime" / "app.py"
    app.parent.mkdir(exist_ok=True)
    app.write_text(DRIVER)
    out = tmp_path / name
    proc = subprocess.Popen([sys.executable, str(app), "--plan", str(plan), "--out", str(out)])
    deadline = time.monotonic() + 30
    while not Path(str(out) + ".ready").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    return proc, out


def test_a_stop_reaches_each_driver_of_the_run_once_and_one_started_later_too(tmp_path):
    plan, other = tmp_path / "plan.json", tmp_path / "other-plan.json"
    stop, done = threading.Event(), threading.Event()
    said: list[str] = []
    forwarder = threading.Thread(target=_forward_stop, args=(stop, plan, done, said.append), daemon=True)
    forwarder.start()
    first, first_out = _driver(tmp_path, plan, "first")
    stranger, stranger_out = _driver(tmp_path, other, "stranger")  # another run's driver: left alone
    try:
        time.sleep(1.0)
        assert not first_out.exists()  # nothing before the stop
        stop.set()
        assert first.wait(30) == 0 and first_out.read_text() == "SIGTERM"
        late, late_out = _driver(tmp_path, plan, "late")  # started after the stop (a pipeline still starting)
        assert late.wait(30) == 0 and late_out.read_text() == "SIGTERM"
        assert stranger.poll() is None and not stranger_out.exists()
        assert len(said) == 2 and all("SIGTERM to the pipeline driver" in s for s in said)
    finally:
        done.set()
        for p in (first, stranger):
            if p.poll() is None:
                p.kill()
                p.wait()


def test_a_pipeline_stopped_before_its_queries_started_starts_none():
    said: list[str] = []
    stop = threading.Event()
    stop.set()
    query = SimpleNamespace(handle=None)  # starting it would fail: it has no DataFrame
    ctx = SimpleNamespace(pipeline=SimpleNamespace(task_id="p"))
    assert _run_queries(ctx, [query], SimpleNamespace(), stop, said.append) == "stop requested"  # type: ignore[arg-type]
    assert query.handle is None and "none is started" in said[0]
