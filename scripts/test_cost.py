"""What a test command costs, load-independently: CPU seconds of everything it starts, JVM starts, servers.

    python scripts/test_cost.py [--label NAME] [--jsonl FILE] -- python -m pytest -q tests/runtime/test_x.py

The command runs in a cgroup of its own (cgroup v1 ``cpuacct``, as root; without it, the CPU time of the
processes the command waited for, from ``getrusage``): its CPU seconds then include the servers that
daemonize (PostgreSQL, MariaDB). Every JVM started under it writes an empty file named by its pid (a
``-Xlog`` option added to ``JAVA_TOOL_OPTIONS``), so JVM starts are counted exactly; a poll of the
cgroup's processes every 0.2 s names most of them by main class (SparkSubmit, the launcher, Kafka, ...)
and the servers' processes by program (a server that forks per connection, PostgreSQL or sshd, shows one per
connection), and sums their resident memory (its peak is printed). Wall time is printed too, but on a shared
machine only ratios of runs side by side mean anything.
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import json
import os
import resource
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

CPUACCT = Path("/sys/fs/cgroup/cpuacct")
#: program names counted as server starts
SERVERS = ("postgres", "mariadbd", "redis-server", "sshd", "chromium", "chrome")
_JAVA_CLASSES = (
    ("org.apache.spark.launcher.Main", "spark-launcher"), ("org.apache.spark.deploy.SparkSubmit", "spark-submit"),
    ("kafka.Kafka", "kafka"), ("org.apache.spark.sql.connect", "spark-connect"),
    ("org.apache.spark.deploy.master", "spark-master"), ("org.apache.spark.deploy.worker", "spark-worker"),
    ("org.apache.spark.executor", "spark-executor"), ("seatunnel", "zeta"), ("metastore", "hive-metastore"),
    ("py4j", "pyspark-driver"), ("org.apache.maven", "mvn"),
)


def _kind(cmdline: list[str]) -> str | None:
    if not cmdline:
        return None
    prog = os.path.basename(cmdline[0])
    if prog == "java":
        joined = " ".join(cmdline)
        for needle, name in _JAVA_CLASSES:
            if needle in joined:
                return name
        return "java-other"
    for server in SERVERS:
        if prog.startswith(server) or (len(cmdline) > 1 and os.path.basename(cmdline[1]) == server):
            return server
    return None


def _rss(pid: str) -> int:
    try:
        with open(f"/proc/{pid}/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


def _cmdline(pid: str) -> list[str]:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return [a.decode(errors="replace") for a in f.read().split(b"\0") if a]
    except OSError:
        return []


class Poller(threading.Thread):
    def __init__(self, procs_file: Path | None, root_pid: int) -> None:
        super().__init__(daemon=True)
        self.procs_file, self.root_pid = procs_file, root_pid
        self.seen: dict[str, str] = {}
        self.peak_rss = 0
        self.stop = threading.Event()

    def _pids(self) -> list[str]:
        if self.procs_file is not None:
            try:
                return self.procs_file.read_text().split()
            except OSError:
                return []
        import psutil  # without a cgroup: the command's process tree (what daemonized is not seen)

        try:
            root = psutil.Process(self.root_pid)
            return [str(p.pid) for p in (root, *root.children(recursive=True))]
        except psutil.Error:
            return []

    def run(self) -> None:
        while not self.stop.wait(0.2):
            total = 0
            for pid in self._pids():
                total += _rss(pid)
                if pid not in self.seen:
                    kind = _kind(_cmdline(pid))
                    if kind:
                        self.seen[pid] = kind
            self.peak_rss = max(self.peak_rss, total)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--label", default="")
    parser.add_argument("--jsonl", type=Path, help="append the result as one JSON line")
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    jvm_dir = Path(tempfile.mkdtemp(prefix="test-cost-jvms-"))
    env = dict(os.environ)
    env["JAVA_TOOL_OPTIONS"] = (env.get("JAVA_TOOL_OPTIONS", "") +
                                f" -Xlog:arguments=info:file={jvm_dir}/jvm-%p.log").strip()
    group = CPUACCT / f"test-cost-{os.getpid()}"
    usage = None
    try:
        group.mkdir()
        usage = group / "cpuacct.usage"
    except OSError:
        group = None  # type: ignore[assignment]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.monotonic()

    def enter() -> None:
        if group is not None:
            (group / "cgroup.procs").write_text(str(os.getpid()))

    proc = subprocess.Popen(command, env=env, preexec_fn=enter)
    poller = Poller(group / "cgroup.procs" if group is not None else None, proc.pid)
    poller.start()
    rc = proc.wait()
    wall = time.monotonic() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    # servers a fixture left behind would keep the cgroup busy: the count is of what ran until now
    poller.stop.set()
    poller.join()
    if usage is not None:
        cpu = int(usage.read_text()) / 1e9
    else:
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    kinds = collections.Counter(poller.seen.values())
    jvms = len(list(jvm_dir.glob("jvm-*.log")))
    result = {"label": args.label or " ".join(command[-1:]), "rc": rc, "wall_s": round(wall, 1),
              "cpu_s": round(cpu, 1), "jvm_starts": jvms, "peak_rss_mib": poller.peak_rss // 2**20,
              "seen": dict(sorted(kinds.items())), "cgroup": group is not None}
    for f in jvm_dir.iterdir():
        f.unlink()
    jvm_dir.rmdir()
    if group is not None:
        for _ in range(50):
            try:
                group.rmdir()
                break
            except OSError:  # a straggler still inside: move what is left to the root group
                for pid in (group / "cgroup.procs").read_text().split():
                    with contextlib.suppress(OSError):
                        (CPUACCT / "cgroup.procs").write_text(pid)
                time.sleep(0.1)
    line = json.dumps(result)
    print(line, file=sys.stderr)
    if args.jsonl:
        with args.jsonl.open("a") as f:
            f.write(line + "\n")
    return rc


if __name__ == "__main__":
    sys.exit(main())
