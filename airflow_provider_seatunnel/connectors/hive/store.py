"""The driver's file operations on a Hive table's file system (Hadoop's FileSystem through the
session: local, HDFS...), and the one atomic step the sink's commit is built on.

:meth:`Store.create_new` writes a small JSON file **only if it does not exist**, in one step that
two writers cannot both win: the content goes to a temporary sibling first, then it is linked
(local file system: ``link(2)`` fails on an existing name) or renamed (HDFS: a rename onto an
existing file fails) into place. A file system whose rename replaces the target (object stores:
S3A, GCS, ABFS...) cannot give that guarantee: :func:`check_scheme` refuses it.
"""

from __future__ import annotations

import contextlib
import json
import os
import uuid
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlparse

from .options import config_error

#: file systems whose rename of a file refuses an existing target
ATOMIC_SCHEMES = ("file", "hdfs", "viewfs")


def check_scheme(location: str) -> None:
    scheme = urlparse(location).scheme or "file"
    if scheme not in ATOMIC_SCHEMES:
        raise config_error(f"the table's location {location} is on '{scheme}': the Hive sink's exactly-once commit "
                           f"needs a file system whose renames cannot replace a file ({', '.join(ATOMIC_SCHEMES)})")


def hidden(name: str) -> bool:
    """Names Hive and Spark readers skip."""
    return name.startswith((".", "_"))


def join(base: str, *parts: str) -> str:
    return "/".join([base.rstrip("/"), *[p.strip("/") for p in parts if p]])


class Store:
    """Files under Hadoop URIs, on the driver."""

    def __init__(self, spark: Any):
        self.spark = spark
        self.jvm = spark.sparkContext._jvm
        self.conf = spark._jsparkSession.sessionState().newHadoopConf()

    def _fs(self, uri: str) -> tuple[Any, Any]:
        path = self.jvm.org.apache.hadoop.fs.Path(uri)
        return path.getFileSystem(self.conf), path

    def exists(self, uri: str) -> bool:
        fs, path = self._fs(uri)
        return bool(fs.exists(path))

    def size(self, uri: str) -> int | None:
        fs, path = self._fs(uri)
        return int(fs.getFileStatus(path).getLen()) if fs.exists(path) else None

    def children(self, uri: str) -> list[str]:
        """The names directly under ``uri`` (none when it does not exist)."""
        fs, path = self._fs(uri)
        if not fs.exists(path):
            return []
        return sorted(str(s.getPath().getName()) for s in fs.listStatus(path))

    def files(self, uri: str) -> list[tuple[str, int]]:
        """(path relative to ``uri``, size) of every file under it, hidden names skipped at every level."""
        out: list[tuple[str, int]] = []

        def walk(directory: Any, prefix: str) -> None:
            for status in fs.listStatus(directory):
                name = str(status.getPath().getName())
                if hidden(name):
                    continue
                if status.isDirectory():
                    walk(status.getPath(), f"{prefix}{name}/")
                else:
                    out.append((prefix + name, int(status.getLen())))

        fs, root = self._fs(uri)
        if fs.exists(root):
            walk(root, "")
        return sorted(out)

    def rename(self, src: str, dst: str) -> bool:
        """Move ``src`` to ``dst`` (its parent made first); False when ``src`` was gone."""
        fs, source = self._fs(src)
        _, target = self._fs(dst)
        fs.mkdirs(target.getParent())
        return bool(fs.rename(source, target))

    def delete(self, uri: str) -> None:
        fs, path = self._fs(uri)
        if fs.exists(path):
            fs.delete(path, True)

    def read_json(self, uri: str) -> dict[str, Any] | None:
        fs, path = self._fs(uri)
        if not fs.exists(path):
            return None
        stream = fs.open(path)
        try:
            text = self.jvm.org.apache.commons.io.IOUtils.toString(stream, "UTF-8")
        finally:
            stream.close()
        return dict(json.loads(text)) if text.strip() else None

    def _write(self, uri: str, payload: Mapping[str, Any]) -> None:
        fs, path = self._fs(uri)
        out = fs.create(path, True)
        try:
            out.write(bytearray(json.dumps(payload, indent=1, default=str).encode("utf-8")))
        finally:
            out.close()

    def create_new(self, uri: str, payload: Mapping[str, Any]) -> bool:
        """Create ``uri`` holding ``payload`` unless it exists, atomically; whether this call created it."""
        parsed = urlparse(uri)
        tmp = join(uri.rsplit("/", 1)[0], f".{uri.rsplit('/', 1)[1]}.{uuid.uuid4().hex[:12]}.tmp")
        if (parsed.scheme or "file") == "file":
            local, local_tmp = parsed.path, urlparse(tmp).path
            os.makedirs(os.path.dirname(local), exist_ok=True)
            with open(local_tmp, "w", encoding="utf-8") as fh:
                json.dump(payload, fh, indent=1, default=str)
                fh.flush()
                os.fsync(fh.fileno())
            try:
                os.link(local_tmp, local)
                return True
            except FileExistsError:
                return False
            finally:
                with contextlib.suppress(OSError):
                    os.remove(local_tmp)
        self._write(tmp, payload)
        fs, target = self._fs(uri)
        try:
            return bool(fs.rename(self._fs(tmp)[1], target))
        finally:
            with contextlib.suppress(Exception):
                self.delete(tmp)
