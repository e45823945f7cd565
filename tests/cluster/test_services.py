"""The background servers' helper: stopping several servers at once stops every process group they started."""

from __future__ import annotations

import os
import signal
import time

from .services import Service, _group_alive, stop_all


def _started(tmp_path, name: str, script: str) -> Service:
    """A shell running ``script`` then a child ``sleep``, once both are in place."""
    ready = tmp_path / f"{name}.ready"
    service = Service(name, ["sh", "-c", f"{script} sleep 60 & touch {ready}; wait"], os.environ, tmp_path / f"{name}.log")
    deadline = time.monotonic() + 60
    while not ready.exists():
        assert time.monotonic() < deadline and service.alive(), service.tail()
        time.sleep(0.05)
    return service


def test_stop_all_terminates_every_group_and_kills_the_ones_ignoring_sigterm(tmp_path):
    polite = _started(tmp_path, "polite", "")
    # SIGTERM ignored by the shell and, inherited, by its child: only SIGKILL stops this group
    stubborn = _started(tmp_path, "stubborn", "trap '' TERM;")
    groups = [polite.proc.pid, stubborn.proc.pid]
    stop_all([polite, stubborn], timeout=1.0)
    assert not any(_group_alive(pgid) for pgid in groups)
    assert polite.proc.returncode == -signal.SIGTERM and stubborn.proc.returncode == -signal.SIGKILL
    stop_all([polite, stubborn])  # stopped already: nothing to do, no error
