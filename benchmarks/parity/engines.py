"""The two engines as subprocesses: SeaTunnel's Zeta (``run-zeta.sh`` of the shared zeta folder) and the project's
command line (``seatunnel-airflow run``), each given ``-i out=DIR`` and the case's variables.

Nothing of Zeta's tooling is copied here: the harness finds its folder (:func:`zeta_dir`), runs its ``setup.sh``
(idempotent: a fresh machine builds the home, a second call downloads nothing) and its ``run-zeta.sh``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
#: what Zeta's home needs beyond its defaults (fake, console, assert, file-local, jdbc, and Hadoop's uber jar
#: in lib/ that Paimon's connector uses for a local warehouse): the Kafka, Elasticsearch, RabbitMQ, InfluxDB,
#: Cassandra and Paimon connectors and the JDBC drivers of the test databases (its Jdbc connector finds drivers
#: in lib/)
ZETA_CONNECTORS = ("kafka", "elasticsearch", "rabbitmq", "influxdb", "cassandra", "paimon")
ZETA_LIBS = ("org.postgresql:postgresql:42.7.4", "com.mysql:mysql-connector-j:8.4.0")
TIMEOUT_S = 900


@dataclass(frozen=True)
class EngineRun:
    """One run of one engine: exit code, wall time (the subprocess, JVM start included) and its log text."""

    engine: str
    exit_code: int
    wall_s: float
    log: str


def zeta_dir() -> Path | None:
    """The shared zeta folder: env ``SEATUNNEL_ZETA_DIR``, else ``<repo>/../shared/zeta``, else
    ``/work/shared/zeta``; ``None`` when none holds ``run-zeta.sh``."""
    candidates = [os.environ.get("SEATUNNEL_ZETA_DIR", ""), str(REPO.parent / "shared" / "zeta"), "/work/shared/zeta"]
    for c in candidates:
        if c and (Path(c) / "run-zeta.sh").is_file():
            return Path(c)
    return None


def setup_zeta(folder: Path, connectors: Sequence[str] = ZETA_CONNECTORS, libs: Sequence[str] = ZETA_LIBS
               ) -> tuple[int, str]:
    """Run ``setup.sh`` with the connectors and libraries the configs need. Returns its exit code (3: the home
    works but a connector is NOT SERVED by Maven Central for the version) and its stderr."""
    cmd = [str(folder / "setup.sh")]
    if connectors:
        cmd += ["--connectors", ",".join(connectors)]
    if libs:
        cmd += ["--lib", ",".join(libs)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT_S)
    return proc.returncode, proc.stderr


def project_cli() -> list[str]:
    """The project's command line from the checkout's own interpreter: ``python -m`` of the CLI module, so the
    checkout (first on ``PYTHONPATH``) is what runs."""
    return [sys.executable, "-m", "airflow_provider_seatunnel.cli"]


def _variables(variables: Mapping[str, str]) -> list[str]:
    return [a for k, v in variables.items() for a in ("-i", f"{k}={v}")]


def run_zeta(folder: Path, config: Path, variables: Mapping[str, str], extra_env: Mapping[str, str] | None = None
             ) -> EngineRun:
    """``run-zeta.sh CONFIG -i K=V ...``; the log is the JVM's log file (its path is on run-zeta.sh's last stderr
    line), where the Console sink prints. ``extra_env``: added to the environment (``TZ``: the JVM's zone)."""
    env = dict(os.environ, ZETA_QUIET="1", **(extra_env or {}))
    start = time.monotonic()
    proc = subprocess.run([str(folder / "run-zeta.sh"), str(config), *_variables(variables)], capture_output=True,
                          text=True, env=env, timeout=TIMEOUT_S + 60)
    wall = time.monotonic() - start
    log = proc.stdout + proc.stderr
    for line in reversed(proc.stderr.splitlines()):
        if line.startswith("zeta ") and "log=" in line:
            path = Path(line.rsplit("log=", 1)[1].strip())
            if path.is_file():
                log = path.read_text(errors="replace") + "\n" + log
            break
    return EngineRun("zeta", proc.returncode, wall, log)


def run_project(config: Path, variables: Mapping[str, str], extra_env: Mapping[str, str] | None = None
                ) -> EngineRun:
    """``seatunnel-airflow run CONFIG -i K=V ...`` with a kept work directory: the pipelines' logs (where the
    Console sink prints) are read, then the directory removed. ``extra_env``: added to the environment."""
    work = Path(tempfile.mkdtemp(prefix="parity-work-"))
    path = os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))
    env = dict(os.environ, **(extra_env or {}), PYTHONPATH=path)
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    cmd = [*project_cli(), "run", str(config), *_variables(variables), "--work-dir", str(work), "--keep-work-dir"]
    start = time.monotonic()
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=TIMEOUT_S, cwd=REPO)
        wall = time.monotonic() - start
        logs = [p.read_text(errors="replace") for p in sorted(work.rglob("*.log"))]
        return EngineRun("ours", proc.returncode, wall, "\n".join([*logs, proc.stdout, proc.stderr]))
    finally:
        shutil.rmtree(work, ignore_errors=True)
