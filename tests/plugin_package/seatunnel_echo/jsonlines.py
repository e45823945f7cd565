"""JsonLines sink: JSON lines files in a local directory, exactly once per run id.

The whole sink is its options spec and four storage verbs (:class:`~airflow_provider_seatunnel.spi.twophase.
StorageVerbs`); the engine owns the two-phase protocol around them (commit identities, attempt tokens, fault
points, the loop over tables, restores). The store:

* ``<path>/<table>-<commit>/`` holds one commit's files, ``part-*.json`` (a reader skips dot-directories);
* ``<path>/.staging/<commit>-<token>/`` holds what one attempt staged: one Spark write at ``vertex.parallelism``;
* ``<path>/.commits/<commit>.token`` is the commit log: the newest attempt token of a commit, taken under an
  exclusive lock of the directory (``flock``). The commit record is the published directory itself.

``publish`` renames an attempt's staging directory to its commit's directory in one atomic step, holding the
lock, and only if the attempt's token is still the newest and the commit's directory does not exist yet.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from airflow_provider_seatunnel.spi import SINK, Capabilities, Connector, Lineage, RunContext, Vertex
from airflow_provider_seatunnel.spi.optionspec import Option, OptionSpec
from airflow_provider_seatunnel.spi.rows import data_only
from airflow_provider_seatunnel.spi.twophase import CommitId, Outcome, Published, Staged

NAME = "JsonLines"
STAGING, COMMITS = ".staging", ".commits"

SPEC = OptionSpec((
    Option("path", required=True, allow_blank=False, identity=True,
           description="The local directory the files are written into (a plain path or a `file://` URI)."),
))


def directory(options: Mapping[str, Any]) -> str:
    """The absolute local directory ``path`` names (a ``file://`` URI or a plain path)."""
    text = str(SPEC.run_time(options, SINK)["path"]).strip()
    return os.path.abspath(os.path.expanduser(text.removeprefix("file://")))


def published_dir(root: str, commit: CommitId) -> str:
    """Where a commit's files are visible: the table and the commit's key (one directory per commit)."""
    return os.path.join(root, f"{commit.table}-{commit.key[:16]}")


def _staging(root: str, commit: CommitId, token: int) -> str:
    return os.path.join(root, STAGING, f"{commit.key}-{token}")


@dataclass(frozen=True)
class TokenFiles:
    """The commit log: one file per commit holding its newest attempt token."""

    root: str

    @contextlib.contextmanager
    def locked(self) -> Iterator[None]:
        """The directory's commit log held exclusively (between processes, on one machine)."""
        os.makedirs(os.path.join(self.root, COMMITS), exist_ok=True)
        with open(os.path.join(self.root, COMMITS, ".lock"), "a") as fh:
            fcntl.flock(fh, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(fh, fcntl.LOCK_UN)

    def _file(self, commit: CommitId) -> str:
        return os.path.join(self.root, COMMITS, f"{commit.key}.token")

    def newest_token(self, commit: CommitId) -> int:
        try:
            with open(self._file(commit), encoding="utf-8") as fh:
                return int(fh.read().strip() or 0)
        except FileNotFoundError:
            return 0

    def take_token(self, commit: CommitId) -> tuple[int, bool]:
        with self.locked():
            token = self.newest_token(commit) + 1
            with open(self._file(commit) + ".tmp", "w", encoding="utf-8") as fh:
                fh.write(str(token))
            os.replace(self._file(commit) + ".tmp", self._file(commit))
            return token, os.path.isdir(published_dir(self.root, commit))


def _lines(path: str) -> int:
    """The rows of a staged file (0: the file is gone)."""
    try:
        with open(path, "rb") as fh:
            return sum(1 for line in fh if line.strip())
    except FileNotFoundError:
        return 0


class JsonLines(Connector, Lineage):
    name = NAME
    capabilities = Capabilities(sections=frozenset({SINK}), committer=True)  # a driver-side commit
    option_spec = SPEC  # required and identity come from it; the compiler checks the block against it
    description = "Writes JSON lines files into a local directory, exactly once per run id."

    def assets(self, options: Mapping[str, Any]) -> list[str]:
        return ["file://" + directory(options)] if SPEC.valid(options, SINK) is not None else []

    def commit_log(self, ctx: RunContext, vertex: Vertex) -> TokenFiles:
        return TokenFiles(directory(vertex.config))

    def stage(self, ctx: RunContext, vertex: Vertex, commit: CommitId, token: int, df: Any) -> Staged:
        """One Spark write of the table's rows into the attempt's staging directory."""
        root = directory(vertex.config)
        staging = _staging(root, commit, token)
        data_only(df).write.mode("errorifexists").option("compression", "none").json("file://" + staging)
        parts = tuple((name, _lines(os.path.join(staging, name)))
                      for name in sorted(os.listdir(staging)) if name.startswith("part-"))
        return Staged(commit, token, published_dir(root, commit), sum(n for _, n in parts), parts)

    def publish(self, ctx: RunContext, vertex: Vertex, staged: Staged) -> Published:
        """The staging directory renamed into place, if the token is the newest and the commit not published."""
        root = directory(vertex.config)
        log, staging = TokenFiles(root), _staging(root, staged.commit, staged.token)
        with log.locked():
            if os.path.isdir(staged.target):
                return Published(Outcome.ALREADY)
            newest = log.newest_token(staged.commit)
            if newest != staged.token:
                return Published(Outcome.SUPERSEDED, newest=newest)
            for name, rows in staged.parts:
                found = _lines(os.path.join(staging, name))
                if found != rows:
                    return Published(Outcome.MISMATCH, found=found, where=name, expected=rows)
            os.rename(staging, staged.target)
        return Published(Outcome.PUBLISHED, rows=staged.rows)

    def discard(self, ctx: RunContext, vertex: Vertex, staged: Staged) -> None:
        shutil.rmtree(_staging(directory(vertex.config), staged.commit, staged.token), ignore_errors=True)

    def discard_older(self, ctx: RunContext, vertex: Vertex, commit: CommitId, token: int) -> int:
        """The staging of every older attempt of the commit (a killed one's), deleted."""
        older = [_staging(directory(vertex.config), commit, n) for n in range(1, token)]
        gone = [path for path in older if os.path.isdir(path)]
        for path in gone:
            shutil.rmtree(path, ignore_errors=True)
        return len(gone)


CONNECTOR = JsonLines()
