"""A migrated Airflow metadata database for each isolated AIRFLOW_HOME of the tests, copied from one template.

``airflow db migrate`` takes seconds of CPU (its imports and every migration since the first); the result does
not depend on the home, so it runs once per test session (the first xdist worker to need it, under a lock,
the others wait) and each home gets a copy of the SQLite file.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

import pytest

BIN = Path(sys.executable).parent


def _template(shared: Path, env: Mapping[str, str]) -> Path:
    """The session's migrated template database under ``shared`` (made on first use, under a file lock)."""
    template = shared / "airflow-template.db"
    with open(shared / "airflow-template.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not template.exists():
            home = shared / "airflow-template-home"
            home.mkdir(exist_ok=True)
            template_env = {**env, "AIRFLOW_HOME": str(home),
                            "AIRFLOW__DATABASE__SQL_ALCHEMY_CONN": f"sqlite:///{home}/airflow.db"}
            proc = subprocess.run([str(BIN / "airflow"), "db", "migrate"], env=template_env, capture_output=True,
                                  text=True, timeout=600)
            assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
            os.replace(home / "airflow.db", template)
    return template


def migrate(env: Mapping[str, str], shared: Path) -> None:
    """Give ``env``'s ``AIRFLOW_HOME`` (SQLite at ``AIRFLOW_HOME/airflow.db``) a migrated database: a copy of
    the template in ``shared``, a folder all the session's workers see."""
    home = Path(env["AIRFLOW_HOME"])
    assert env["AIRFLOW__DATABASE__SQL_ALCHEMY_CONN"] == f"sqlite:///{home}/airflow.db", "a SQLite home only"
    home.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(_template(shared, env), home / "airflow.db")


def shared_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The session's temporary folder common to every xdist worker (a worker's own is a subfolder of it)."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
