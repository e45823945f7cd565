"""Check that `make test-deps` provides everything the tests use from outside the venv (`make check-test-deps`).

Lists, one line each, and fails (exit 1) on any problem:

* every Debian path a test or fixture names (``"/usr/..."`` literals under tests/) and every program it looks up
  with ``shutil.which``: each must be one of the Makefile's TEST_FILES (the files whose presence lets
  `make test-deps` skip the install) or owned by the Java runtime `make check-java` asks for;
* every TEST_FILES path: there, and owned (``dpkg -S``) by one of TEST_PACKAGES or a package they depend on;
* every jar of TEST_JARS (the Maven fetches into ~/.m2): there.

Usage: ``python scripts/check_test_deps.py --packages "..." --files "..." --jars "..."`` (the Makefile passes
its lists).
"""

from __future__ import annotations

import argparse
import fnmatch
import glob
import os
import re
import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: a Debian path a test names (programs, drivers, fonts, the PostgreSQL binaries)
DEBIAN_PATH = re.compile(r"""["'](/usr/(?:s?bin|share/java|lib/postgresql|share/fonts)/[^"']+)["']""")
WHICH = re.compile(r"""which\(["']([\w.-]+)["']\)""")
#: what `make check-java` requires (the JDK is the one prerequisite the README names), and what every Debian has
OUTSIDE = {"java", "setpriv"}


def named_by_tests(root: Path = ROOT) -> dict[str, list[str]]:
    """Debian paths and ``which`` programs the tests name -> the files naming them."""
    found: dict[str, list[str]] = {}
    for path in sorted((root / "tests").rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        for name in DEBIAN_PATH.findall(text) + WHICH.findall(text):
            found.setdefault(name, []).append(str(path.relative_to(root)))
    return found


def covered(name: str, files: Iterable[str]) -> bool:
    """Is ``name`` (a path, a glob, or a program looked up on PATH) one of ``files`` or a directory of one?"""
    for pattern in files:
        if fnmatch.fnmatch(name, pattern) or pattern.startswith(name.rstrip("/") + "/"):
            return True
        if "/" not in name and os.path.basename(pattern) == name and "/bin/" in pattern + "/":
            return True
    return False


def closure(packages: list[str]) -> set[str]:
    """``packages`` and everything they depend on (apt-cache), without recommends and suggests."""
    out = subprocess.run(["apt-cache", "depends", "--recurse", "--no-recommends", "--no-suggests", "--no-conflicts",
                          "--no-breaks", "--no-replaces", "--no-enhances", *packages],
                         capture_output=True, text=True, check=True).stdout
    names = {line.strip() for line in out.splitlines() if line and not line.startswith(" ")}
    names |= {line.split(":", 1)[1].strip() for line in out.splitlines() if "Depends:" in line}
    return {n.split(":")[0] for n in names if not n.startswith("<")} | set(packages)


def owner(path: str) -> str | None:
    done = subprocess.run(["dpkg", "-S", os.path.realpath(path)], capture_output=True, text=True)
    return done.stdout.split(":", 1)[0].strip() if done.returncode == 0 else None


def check(packages: list[str], files: list[str], jars: list[str], root: Path = ROOT) -> list[str]:
    """Print one line per item; return the problems."""
    problems = []
    for name, users in sorted(named_by_tests(root).items()):
        ok = name in OUTSIDE or covered(name, files)
        print(f"{'ok' if ok else 'UNCHECKED':9} {name} (named by {', '.join(sorted(set(users)))})")
        if not ok:
            problems.append(f"{name}: named by {users[0]} but not in the Makefile's TEST_FILES")
    installable = closure(packages)
    for pattern in files:
        paths = glob.glob(pattern)
        if not paths:
            print(f"MISSING   {pattern}")
            problems.append(f"{pattern}: missing (make test-deps)")
            continue
        pkg = owner(paths[0])
        ok = pkg in installable
        print(f"{'ok' if ok else 'NO STEP':9} {paths[0]} ({pkg or 'no package owns it'})")
        if not ok:
            problems.append(f"{paths[0]}: owned by {pkg}, which TEST_PACKAGES do not install")
    for jar in jars:
        ok = os.path.isfile(jar)
        print(f"{'ok' if ok else 'MISSING':9} {jar}")
        if not ok:
            problems.append(f"{jar}: missing (make test-deps)")
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--packages", required=True)
    parser.add_argument("--files", required=True)
    parser.add_argument("--jars", required=True)
    args = parser.parse_args(argv)
    problems = check(args.packages.split(), args.files.split(), args.jars.split())
    for problem in problems:
        print(f"error: {problem}", file=sys.stderr)
    if problems:
        print("run `make test-deps` (as root for the Debian packages)", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
