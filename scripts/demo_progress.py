"""Run a command (``airflow dags test ...``) with its whole output in a log file and only its progress on screen.

Usage: ``python scripts/demo_progress.py LOG -- COMMAND [ARG...]``. Shown: the pipeline each task starts,
SeaTunnel's one-line result per pipeline, task failures and retries, and the DAG run's end; everything
else (Airflow's and Spark's logs) goes to LOG only. The exit status is the command's; when it fails, the
last lines of the log are shown too.
"""

from __future__ import annotations

import re
import subprocess
import sys
import time
from pathlib import Path

from airflow_provider_seatunnel.spi.safe_files import UnsafePath, open_write


def _name(task_id: str) -> str:
    """A pipeline's id without its hash: the hash covers the rendered variables (the output path), so it
    differs between the plan printed above, the Airflow task id and the pipeline as run."""
    return re.sub(r"_[0-9a-f]{8}$", "", task_id)


#: (pattern, how to show a match) for the lines worth showing; the first match wins.
PROGRESS = [
    (re.compile(r"seatunnel\.runtime: Job \S+, Pipeline \[\((\d+)/\d+\)\] (\S+): running \((attempt \d+)"),
     lambda m: f"  pipeline {m[1]} {_name(m[2])}: running ({m[3]})"),
    (re.compile(r"seatunnel\.runtime: Job \S+, Pipeline \[\((\d+)/\d+\)\] (\S+): "
                r"((?:FINISHED|FAILED|CANCELED).*?) \[airflow\."),
     lambda m: f"  pipeline {m[1]} {_name(m[2])}: {m[3].strip()}"),
    (re.compile(r"\b(AirflowFailException|AirflowException|SeaTunnelPipelineFailed): (.*)"),
     lambda m: f"  error: {m[2].strip()[:400]}"),
    (re.compile(r"Task instance state updated.*new_state=(failed|up_for_retry)"),
     lambda m: f"  a task ended {m[1].replace('_', ' ')}"),
    (re.compile(r"Marking run <DagRun (\S+) @ .*?: (\S+), state.*?> (successful|failed)"),
     lambda m: f"  DAG run {m[1]} {m[2].rstrip(',')}: {m[3]}"),
]
TAIL = 25


def main(argv: list[str]) -> int:
    if len(argv) < 3 or argv[1] != "--":
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    log = Path(argv[0])
    log.parent.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    print(f"  (Airflow's and Spark's logs: {log})", flush=True)
    with open_write(str(log), what="the demo's log") as out:  # 0600, never through a symlink at its name
        proc = subprocess.Popen(argv[2:], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                encoding="utf-8", errors="replace", bufsize=1)
        assert proc.stdout is not None
        last: list[str] = []
        errors = 0
        for line in proc.stdout:
            out.write(line)
            last = [*last[-(TAIL - 1):], line.rstrip("\n")]
            for pattern, show in PROGRESS:
                m = pattern.search(line)
                if m:
                    shown = show(m)
                    errors += shown.lstrip().startswith("error:")
                    print(shown, flush=True)
                    break
        rc = proc.wait()
    print(f"  ({time.monotonic() - started:.0f} s)", flush=True)
    if rc != 0:
        command = " ".join(Path(a).name if i == 0 else a for i, a in enumerate(argv[2:4]))
        if errors:  # the cause is on screen already
            print(f"error: {command} exited with status {rc}; the whole story is in {log}", file=sys.stderr)
        else:
            print(f"error: {command} exited with status {rc}; the last lines of {log}:", file=sys.stderr)
            print("\n".join(last), file=sys.stderr)
    return rc


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except UnsafePath as e:
        print(f"error: {e.strerror}", file=sys.stderr)
        sys.exit(2)
