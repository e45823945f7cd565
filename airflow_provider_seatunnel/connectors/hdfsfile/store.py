"""HdfsFile's settings and its driver-side store: Hadoop's FileSystem through the session's JVM.

``fs.defaultFS`` (``hdfs://namenode:8020``, or any Hadoop URI) names the file system, ``path``
the folder in it; keys are paths from its root. Spark reads and writes ``<fs.defaultFS>/<key>``
itself; the driver lists, fences and renames through the same FileSystem.

The fence's compare-and-swap (:class:`..files.filestore.FileStore`) is a directory rename that
fails when the target exists: here Hadoop's ``FileContext.rename`` with ``Options.Rename.NONE``,
one atomic step on HDFS's NameNode (on other file systems Hadoop checks, then renames).
"""

from __future__ import annotations

import logging
import posixpath
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ...spi.errors import RuntimeConfigError
from ..files.filestore import FileStore
from ..files.optionspec import HDFS_SPEC
from ..files.s3options import Traits

log = logging.getLogger("seatunnel.hdfsfile")
PLUGIN = "HdfsFile"
#: what a ``tables_configs`` item takes from its block when it does not set it
SHARED = ("fs.defaultFS", "hdfs_site_path", "remote_user")


def config_error(message: str) -> RuntimeConfigError:
    return RuntimeConfigError(f"{PLUGIN}: {message}")


@dataclass(frozen=True)
class HdfsSettings:
    default_fs: str  # without a trailing '/'
    prefix: str
    hdfs_site: str | None = None

    @property
    def traits(self) -> Traits:
        return Traits(plugin=PLUGIN, scheme=self.default_fs.split(":", 1)[0])

    @property
    def bucket(self) -> str:
        return self.default_fs

    def key(self, *parts: str) -> str:
        return posixpath.join(self.prefix, *parts) if self.prefix else posixpath.join(*parts)

    def uri(self, key: str) -> str:
        return f"{self.default_fs}/{key}"


def default_fs(value: Any) -> str:
    """``fs.defaultFS`` as a URI without a trailing '/' (``hdfs://nn:8020``, ``file://``)."""
    text = str(value or "").strip()
    if "://" not in text:
        raise config_error(f"fs.defaultFS {text!r} is not a Hadoop URI: set fs.defaultFS = \"hdfs://namenode:8020\"")
    return text.rstrip("/")


def settings(config: Mapping[str, Any]) -> HdfsSettings:
    """The store settings of a block (a table's options), typed by HdfsFile's spec."""
    o = HDFS_SPEC.run_time(config)
    text = (o["path"] or "").strip()
    parts = [p for p in text.split("/") if p]
    if not parts or any(p in (".", "..") for p in parts):
        raise config_error(f"path {text!r} must name a folder (no '.' or '..' segments)")
    return HdfsSettings(default_fs(o["fs.defaultFS"]), "/".join(parts), o["hdfs_site_path"] or None)


def _java_class(error: Exception) -> str:
    java = getattr(error, "java_exception", None)
    return str(java.getClass().getName()) if java is not None else ""


class HadoopStore(FileStore):
    """The store on a Hadoop FileSystem, through the active SparkSession's JVM (driver only)."""

    def __init__(self, spark: Any, s: HdfsSettings):
        self._jvm = spark.sparkContext._jvm
        self._conf = spark.sparkContext._jsc.hadoopConfiguration()
        self._root = s.default_fs
        self.name, self.traits = s.default_fs, s.traits
        root = self._jvm.org.apache.hadoop.fs.Path(self._root + "/")
        self._fs = root.getFileSystem(self._conf)
        self._fc = self._jvm.org.apache.hadoop.fs.FileContext.getFileContext(root.toUri(), self._conf)

    def _path(self, key: str) -> Any:
        return self._jvm.org.apache.hadoop.fs.Path(f"{self._root}/{key.lstrip('/')}")

    def alive(self) -> bool:
        return True

    def entries(self, directory: str) -> list[tuple[str, bool, int]] | None:
        try:
            found = self._fs.listStatus(self._path(directory))
        except Exception as e:
            if _java_class(e).endswith("FileNotFoundException"):
                return None
            raise
        return [(str(f.getPath().getName()), bool(f.isDirectory()), int(f.getLen())) for f in found]

    def mkdirs(self, directory: str) -> None:
        self._fs.mkdirs(self._path(directory))

    def put(self, key: str, data: bytes) -> None:
        out = self._fs.create(self._path(key), False)
        try:
            out.write(bytearray(data))
        finally:
            out.close()

    def get(self, key: str) -> bytes | None:
        try:
            stream = self._fs.open(self._path(key))
        except Exception as e:
            if _java_class(e).endswith("FileNotFoundException"):
                return None
            raise
        try:
            return bytes(self._jvm.org.apache.commons.io.IOUtils.toByteArray(stream))
        finally:
            stream.close()

    def rename(self, src: str, dst: str) -> bool:
        """Rename unless ``dst`` exists (``Options.Rename.NONE``); False when it exists."""
        rename = getattr(self._jvm.org.apache.hadoop.fs, "Options$Rename")
        none = java_array(rename, [rename.NONE])
        try:
            self._fc.rename(self._path(src), self._path(dst), none)
            return True
        except Exception as e:
            if _java_class(e).endswith(("FileAlreadyExistsException", "ParentNotDirectoryException")):
                return False
            raise

    def remove(self, key: str) -> None:
        self._fs.delete(self._path(key), False)

    def rmdir(self, directory: str) -> None:
        try:
            self._fs.delete(self._path(directory), False)
        except Exception as e:  # not empty: someone else's files
            log.debug("HdfsFile: %s stays: %s", directory, e)


def java_array(cls: Any, items: list[Any]) -> Any:
    """A Java array of ``cls`` holding ``items`` (for a varargs parameter)."""
    from pyspark import SparkContext

    gateway = SparkContext._gateway
    if gateway is None:
        raise config_error("no Spark gateway to build a Java array with")
    array = gateway.new_array(cls, len(items))
    for i, item in enumerate(items):
        array[i] = item
    return array


def open_store(s: HdfsSettings) -> HadoopStore:
    from pyspark.sql import SparkSession

    spark = SparkSession.getActiveSession()
    if spark is None:
        raise config_error("no active Spark session to reach the file system with")
    return HadoopStore(spark, s)


def reach(spark: Any, s: HdfsSettings) -> None:
    """``hdfs_site_path`` added to the session's Hadoop configuration (an HA name service)."""
    if s.hdfs_site:
        conf = spark.sparkContext._jsc.hadoopConfiguration()
        conf.addResource(spark.sparkContext._jvm.org.apache.hadoop.fs.Path("file://" + s.hdfs_site))
