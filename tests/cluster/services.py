"""Background servers for the cluster tests: start in their own process group, wait until ready, always stop.

Every server runs in a new session, so stopping it signals its whole process group (the server and the
children it forked — Spark executors, Airflow's workers and task processes) and nothing else.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any


class Service:
    """One background server; its output goes to ``log``."""

    def __init__(self, name: str, argv: Sequence[str], env: Mapping[str, str], log: Path, cwd: Path | None = None):
        self.name = name
        self.log = log
        log.parent.mkdir(parents=True, exist_ok=True)
        with open(log, "ab") as out:
            self.proc = subprocess.Popen(list(argv), env=dict(env), cwd=cwd, stdout=out, stderr=subprocess.STDOUT,
                                         stdin=subprocess.DEVNULL, start_new_session=True)

    def alive(self) -> bool:
        return self.proc.poll() is None

    def tail(self, chars: int = 4000) -> str:
        try:
            return self.log.read_text(errors="replace")[-chars:]
        except OSError:
            return ""

    def stop(self, timeout: float = 20.0) -> None:
        """SIGTERM the server's process group, SIGKILL what is left after ``timeout`` seconds."""
        stop_all([self], timeout)

    def _signal(self, sig: signal.Signals) -> bool:
        """Send ``sig`` to the server's process group (the session leader's group: everything it started);
        whether the group was still there."""
        try:
            os.killpg(self.proc.pid, sig)
        except ProcessLookupError:
            return False
        return True

    def _stopped(self) -> bool:
        self.proc.poll()  # reap the leader
        return not _group_alive(self.proc.pid)


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    return True


def stop_all(services: Sequence[Service], timeout: float = 20.0) -> None:
    """Stop servers side by side (in the time of the slowest, not the sum of all): SIGTERM every process
    group (in reverse start order), SIGKILL what is left after ``timeout`` seconds; keep going if one fails."""
    running = list(reversed(services))
    for sig, wait in ((signal.SIGTERM, timeout), (signal.SIGKILL, 10.0)):
        signalled = []
        for service in running:
            with contextlib.suppress(Exception):  # a finalizer must try every server
                if service._signal(sig):
                    signalled.append(service)
        deadline = time.monotonic() + wait
        running = signalled
        while running and time.monotonic() < deadline:
            running = [s for s in running if not s._stopped()]
            if running:
                time.sleep(0.2)
        if not running:
            return


def wait_for(what: str, check: Callable[[], Any], timeout: float, services: Sequence[Service] = (),
             interval: float = 0.5) -> Any:
    """Poll ``check`` until it returns something truthy; fail early when one of ``services`` died."""
    deadline = time.monotonic() + timeout
    last: Any = None
    while True:
        try:
            last = check()
        except (OSError, ValueError, KeyError) as e:
            last = e
        else:
            if last:
                return last
        dead = [s for s in services if not s.alive()]
        if dead or time.monotonic() > deadline:
            why = f"{dead[0].name} exited with {dead[0].proc.returncode}" if dead else f"timed out after {timeout:.0f} s"
            logs = "\n".join(f"--- {s.name} ({s.log}) ---\n{s.tail()}" for s in services)
            raise AssertionError(f"waiting for {what}: {why} (last: {last!r})\n{logs}")
        time.sleep(interval)


def http_json(url: str, method: str = "GET", body: Any = None, token: str | None = None,
              timeout: float = 30.0) -> Any:
    """A JSON request; raises ``OSError`` (``HTTPError`` with the body in its message) on failure."""
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, method=method)
    request.add_header("Accept", "application/json")
    if data is not None:
        request.add_header("Content-Type", "application/json")
    if token:
        request.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return json.loads(response.read() or b"null")
    except urllib.error.HTTPError as e:
        detail = e.read().decode(errors="replace")[:2000]
        raise OSError(f"{method} {url}: HTTP {e.code}: {detail}") from None
