"""Overlap trials for benchmarks/restore_faults.py: two attempts of one run id at the same time.

What Airflow does when a worker stops heart-beating (the retry starts while the old attempt may
still run) and what two command-line runs given one ``--run-id`` do. Per trial, attempt 1 and
attempt 2 of the same run id run as two ``seatunnel-airflow run`` processes, in one of four ways
(cycled):

* ``together``: both start at once;
* ``staggered``: attempt 2 starts a random delay (within an undisturbed run's time) after attempt 1;
* ``paused``: attempt 1's processes (spark-submit and the Python driver) get SIGSTOP a random
  moment around its commit phase, attempt 2 runs, then attempt 1 gets SIGCONT and finishes;
* ``lock``: around attempt 1's commit phase the first target is locked from outside (a psql
  session holding ``LOCK TABLE`` for Jdbc, the target's commit lock for LocalFile, the broker
  stopped by SIGSTOP for Kafka) while attempt 2 starts; the lock is released once attempt 2
  finished or after a while. Table formats that commit optimistically, with no lock to hold (Delta,
  Iceberg, Paimon), cycle the other three.

Then: every target must hold every row exactly once, and, when an attempt reported success,
right then (the metrics never claim rows that were not committed). Should both attempts fail (a
legitimate outcome: the older is fenced out, the newer found its staging gone), a third attempt
restores, as Airflow's next retry would.
"""

from __future__ import annotations

import contextlib
import os
import random
import signal
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

MODES = ("together", "staggered", "paused", "lock")
#: targets whose commit is optimistic (no lock an outsider could hold; Elasticsearch, MongoDB: conditional
#: writes): their trials cycle the other modes
NO_OUTSIDE_LOCK = ("Delta", "Iceberg", "Paimon", "Paimon on HDFS", "Elasticsearch", "MongoDB", "RabbitMQ", "ActiveMQ")


def modes_for(sink_type: str) -> tuple[str, ...]:
    """The overlap modes a sink type's trials cycle through: ``lock`` only where a target has a lock to hold."""
    return tuple(m for m in MODES if m != "lock") if sink_type in NO_OUTSIDE_LOCK else MODES
#: how long a paused attempt or an outside lock holds on at most, when attempt 2 does not finish first
HOLD_SECONDS = 20.0


def descendants(pid: int, children: Callable[[int], list[int]]) -> list[int]:
    out, todo = [], [pid]
    while todo:
        for child in children(todo.pop()):
            out.append(child)
            todo.append(child)
    return out


def _near_commit(events: list[tuple[float, str]], sinks: int) -> bool:
    return any(f"sink[{sinks - 1}]" in e and "prepared" in e for _, e in events)


@contextlib.contextmanager
def outside_lock(sink_type: str, work: Path, resources: Any) -> Iterator[Callable[[], None]]:
    """A callable that locks the first target from outside (released when the context ends)."""
    held: list[Any] = []

    def take() -> None:
        if sink_type == "Jdbc MySQL":
            session = resources.mysql.session()
            session.stdin.write("LOCK TABLES my_plain WRITE;\n")  # released when the session ends
            session.stdin.flush()
            held.append(session)
        elif sink_type.startswith("Jdbc"):
            table = "upsert_a" if "upsert" in sink_type else "plain_a"
            session = resources.postgres.session()
            session.stdin.write(f"BEGIN;\nLOCK TABLE public.{table} IN ACCESS EXCLUSIVE MODE;\n")
            session.stdin.flush()
            held.append(session)
        elif sink_type == "Kafka":
            paused = resources.kafka.paused()
            paused.__enter__()
            held.append(paused)
        else:
            from airflow_provider_seatunnel.connectors.files.fencing import commit_lock

            lock = commit_lock(str(work / "sink_json"), "benchmark")
            lock.__enter__()
            held.append(lock)

    try:
        yield take
    finally:
        for h in held:
            if hasattr(h, "stdin"):
                with contextlib.suppress(OSError):
                    h.stdin.write("COMMIT;\n")
                    h.stdin.close()
                h.wait(30)
            else:
                h.__exit__(None, None, None)


def overlap_trial(n: int, run_id: str, mode: str, rng: random.Random, ctx: dict[str, Any]) -> Any:
    """One overlap trial (``ctx``: the harness's conf, work, sinks, expected, base run, helpers)."""
    Trial, run_cli, state = ctx["Trial"], ctx["run_cli"], ctx["state"]
    sinks, expected, conf, work = ctx["sinks"], ctx["expected"], ctx["conf"], ctx["work"]
    t = Trial(n, "overlap", mode)
    for s in sinks:
        s.seed()
    t0 = time.monotonic()
    started: dict[str, Any] = {}
    results: dict[int, Any] = {}
    second_go = threading.Event()

    def watch_first(proc: Any, events: list[tuple[float, str]]) -> None:
        started["proc"], started["events"] = proc, events

    def attempt(number: int, watch: Callable | None = None) -> None:
        results[number] = run_cli(conf, work, run_id, number, watch=watch)

    first = threading.Thread(target=attempt, args=(1, watch_first), daemon=True)
    second = threading.Thread(target=lambda: (second_go.wait(600), attempt(2)), daemon=True)
    with outside_lock(ctx["sink_type"], work, ctx["resources"]) as lock:
        first.start()
        second.start()
        if mode == "together":
            second_go.set()
        elif mode == "staggered":
            delay = rng.uniform(0.0, ctx["base"].seconds)
            t.what += f" by {delay:.1f}s"
            time.sleep(delay)
            second_go.set()
        else:
            delay = rng.uniform(0.0, 0.15)
            deadline = time.monotonic() + 600
            while time.monotonic() < deadline and first.is_alive() and not (
                    "events" in started and _near_commit(started["events"], len(sinks))):
                time.sleep(0.01)
            time.sleep(delay)
            t.what += f" {delay * 1000:.0f}ms after attempt 1 prepared"
            paused: list[int] = []
            if mode == "paused" and first.is_alive():
                paused = [started["proc"].pid, *descendants(started["proc"].pid, ctx["children"])]
                for pid in paused:
                    with contextlib.suppress(ProcessLookupError):
                        os.kill(pid, signal.SIGSTOP)
            elif mode == "lock":
                lock()
            second_go.set()
            second.join(HOLD_SECONDS)
            for pid in paused:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGCONT)
    first.join(900)
    second.join(900)
    codes = [results[1].code if 1 in results else -1, results[2].code if 2 in results else -1]
    t.first_code, t.stopped = codes[0], f"exits {codes[0]} / {codes[1]}"
    for number in (1, 2):  # why an attempt failed: the CLI's error line
        run = results.get(number)
        if run is not None and run.code != 0:
            why = [ln for ln in (run.stderr or "").splitlines() if ln.startswith("error:")]
            t.why.append(f"attempt {number}: {(why[-1] if why else run.stderr.strip()[-200:])[:300]}")
    t.after_first = [state(s.read(), s, expected) for s in sinks]
    if 0 in codes and any(x != "all" for x in t.after_first):
        t.false_success = 1
        t.details.append("an attempt reported success but a target did not hold every row")
    t.restore_code = 0
    if 0 not in codes:  # both refused or failed: the next retry restores
        t.restore_code = run_cli(conf, work, run_id, 3).code
        t.stopped += f", restore {t.restore_code}"
    ctx["score"](t, sinks, expected)
    t.raw_after_restore = [s.raw() for s in sinks if s.raw]
    t.orphans = len(ctx["drivers_of"](run_id))
    t.seconds = time.monotonic() - t0
    return t
