"""Small files through Hadoop's FileSystem (any URI Spark can reach: local, HDFS, S3...): a
toolkit for connectors and the runtime that keep state beside the data. Needs a live SparkSession."""

from __future__ import annotations

import re
import time
from collections.abc import Mapping
from typing import Any


def as_uri(path: str) -> str:
    """A Hadoop URI for ``path`` (a plain path is local: ``file://...``)."""
    return path if re.match(r"^[A-Za-z][A-Za-z0-9+.-]*:", path) else "file://" + path


def filesystem(spark: Any, uri: str) -> tuple[Any, Any]:
    """Hadoop's (FileSystem, Path) for ``uri``, with the session's Hadoop configuration."""
    jvm = spark.sparkContext._jvm
    path = jvm.org.apache.hadoop.fs.Path(uri)
    return path.getFileSystem(spark.sparkContext._jsc.hadoopConfiguration()), path


def write_once(spark: Any, directory: str, files: Mapping[str, tuple[str, int]]) -> bool:
    """Create ``directory`` holding ``files`` (name -> (text, modification time in ms)) unless it exists.

    The files are written under a temporary sibling, then renamed into place in one step, so a
    reader never sees a partial set. Returns whether it wrote them (False: they were there)."""
    fs, target = filesystem(spark, directory)
    if fs.exists(target):
        return False
    jvm = spark.sparkContext._jvm
    tmp = jvm.org.apache.hadoop.fs.Path(target.getParent(), f".{target.getName()}.{time.time_ns()}.tmp")
    fs.mkdirs(tmp)
    for name, (text, mtime) in files.items():
        path = jvm.org.apache.hadoop.fs.Path(tmp, name)
        out = fs.create(path, True)
        try:
            out.write(bytearray(text.encode("utf-8")))
        finally:
            out.close()
        fs.setTimes(path, int(mtime), -1)
    if not fs.rename(tmp, target):  # another run created it meanwhile
        fs.delete(tmp, True)
        return False
    return True


def read_text(spark: Any, uri: str) -> str | None:
    """A small file's text, None when it does not exist."""
    fs, path = filesystem(spark, uri)
    if not fs.exists(path):
        return None
    jvm = spark.sparkContext._jvm
    stream = fs.open(path)
    try:
        return jvm.org.apache.commons.io.IOUtils.toString(stream, "UTF-8")
    finally:
        stream.close()
