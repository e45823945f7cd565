"""Restore-trial targets on stores (:mod:`restore_faults`): S3File against moto's S3 server, FtpFile
against pyftpdlib, SftpFile against Debian's OpenSSH, each on loopback (the test fixtures'
servers, started once per benchmark run); HdfsFile on Hadoop's local file system (no HDFS here).

Per type, two sinks in one pipeline: json objects of ``rows // 8`` rows each, and csv
partitioned by ``grp``. A reader sees what the plugin's source would read: the visible keys come
from the source's own listing (:func:`..files.storesource.list_input_keys`, which hides the files of
a commit in progress or interrupted); *raw* counts the data files a naive listing sees.
"""

from __future__ import annotations

import csv
import json
import re
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

Row = tuple[int, str, str]
OLD: list[Row] = [(-1, "old", "g0")]


class _Target:
    """One store: how blocks reach it, its files' bytes, seeding and listing."""

    plugin = ""

    def options(self, folder: str) -> str:
        raise NotImplementedError

    def settings(self, folder: str) -> tuple[Any, Any]:
        """(the plugin's dialect, the settings of a block on ``folder``)."""
        raise NotImplementedError

    def read(self, key: str) -> bytes:
        raise NotImplementedError

    def put(self, key: str, data: bytes) -> None:
        raise NotImplementedError

    def clear(self, folder: str) -> None:
        raise NotImplementedError

    def keys(self, folder: str) -> list[str]:
        raise NotImplementedError


class _S3(_Target):
    plugin = "S3File"

    def __init__(self, server: Any):
        self.server, self.bucket = server, server.new_bucket()

    def options(self, folder: str) -> str:
        return self.server.options(self.bucket, "/" + folder)

    def settings(self, folder: str) -> tuple[Any, Any]:
        from airflow_provider_seatunnel.connectors.files.s3options import S3
        from tests import s3_server

        config = {"bucket": f"s3a://{self.bucket}", "path": "/" + folder, "fs.s3a.endpoint": self.server.endpoint,
                  "access_key": s3_server.ACCESS_KEY, "secret_key": s3_server.SECRET_KEY}
        return S3, S3.settings(config)

    def read(self, key: str) -> bytes:
        return bytes(self.server.client().get_object(Bucket=self.bucket, Key=key)["Body"].read())

    def put(self, key: str, data: bytes) -> None:
        self.server.client().put_object(Bucket=self.bucket, Key=key, Body=data)

    def clear(self, folder: str) -> None:
        keys = self.server.keys(self.bucket, folder + "/")
        for i in range(0, len(keys), 1000):
            self.server.client().delete_objects(
                Bucket=self.bucket, Delete={"Objects": [{"Key": k} for k in keys[i:i + 1000]], "Quiet": True})

    def keys(self, folder: str) -> list[str]:
        return self.server.keys(self.bucket, folder + "/")


class _FileServer(_Target):
    def __init__(self, server: Any):
        self.server = server
        self.plugin = "FtpFile" if server.scheme == "ftp" else "SftpFile"

    def _disk(self, key: str) -> Path:
        return (self.server.home if self.server.scheme == "ftp" else Path("/")) / key

    def _key(self, folder: str) -> str:
        return self.server.path(folder).lstrip("/")

    def options(self, folder: str) -> str:
        mode = ', connection_mode = "passive_local"' if self.server.scheme == "ftp" else ""
        return f'{self.server.options()}{mode}, path = "{self.server.path(folder)}"'

    def settings(self, folder: str) -> tuple[Any, Any]:
        from airflow_provider_seatunnel.connectors.remotefile.runtime import dialect

        d = dialect(self.plugin, self.server.scheme)
        return d, d.settings({"host": self.server.host, "port": self.server.port, "user": self.server.user,
                              "password": self.server.password, "key_file": self.server.key_file,
                              "connection_mode": "passive_local", "path": self.server.path(folder),
                              **({"host_key_fingerprint": self.server.host_key_fingerprint}
                                 if getattr(self.server, "host_key_fingerprint", None) else {})})

    def read(self, key: str) -> bytes:
        return self._disk(key).read_bytes()

    def put(self, key: str, data: bytes) -> None:
        path = self._disk(key)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)

    def clear(self, folder: str) -> None:
        shutil.rmtree(self._disk(self._key(folder)), ignore_errors=True)

    def keys(self, folder: str) -> list[str]:
        root = self._disk(self._key(folder))
        return sorted(str(p.relative_to(self._disk(""))) for p in root.rglob("*") if p.is_file()) \
            if root.exists() else []


class _Hdfs(_Target):
    """HdfsFile on Hadoop's local file system (``file:///``): no HDFS runs here."""

    plugin = "HdfsFile"

    def __init__(self, root: Path):
        self.root = root

    def options(self, folder: str) -> str:
        return f'fs.defaultFS = "file:///", path = "{self.root / folder}"'

    def settings(self, folder: str) -> tuple[Any, Any]:
        from pyspark.sql import SparkSession

        from airflow_provider_seatunnel.connectors.hdfsfile import DIALECT

        if SparkSession.getActiveSession() is None:  # the driver-side store reaches Hadoop through a JVM
            SparkSession.builder.master("local[1]").config("spark.ui.enabled", "false").getOrCreate()

        return DIALECT, DIALECT.settings({"fs.defaultFS": "file:///", "path": str(self.root / folder)})

    def read(self, key: str) -> bytes:
        return (Path("/") / key).read_bytes()

    def put(self, key: str, data: bytes) -> None:
        path = Path("/") / key
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)

    def clear(self, folder: str) -> None:
        shutil.rmtree(self.root / folder, ignore_errors=True)

    def keys(self, folder: str) -> list[str]:
        root = self.root / folder
        return sorted(str(p.relative_to("/")) for p in root.rglob("*") if p.is_file() and not p.name.startswith(".")) \
            if root.exists() else []


def _target(plugin: str, resources: Any) -> _Target:
    """The plugin's store, its server started once for the benchmark run."""
    cache = getattr(resources, "stores", None)
    if cache is None:
        cache = resources.stores = {}
    if plugin not in cache:
        if plugin == "HdfsFile":
            import os
            import secrets
            import tempfile

            # HDFS has no secret credential to seal the commit records with: the deployment sets
            # [seatunnel] journal_key; the runs (and their restores) inherit this one
            os.environ.setdefault("SEATUNNEL_JOURNAL_KEY", secrets.token_hex(16))
            root = Path(tempfile.mkdtemp(prefix="rf-hdfs-"))
            resources.callback(shutil.rmtree, root, True)
            cache[plugin] = _Hdfs(root)
        elif plugin == "S3File":
            from tests import s3_server

            cache[plugin] = _S3(resources.enter_context(s3_server.running()))
        else:
            from tests import file_servers

            server = file_servers.start_ftp() if plugin == "FtpFile" else file_servers.start_sftp()
            resources.callback(server.stop)
            cache[plugin] = _FileServer(server)
    return cache[plugin]


def _rows(target: _Target, key: str, fmt: str) -> list[Row]:
    text = target.read(key).decode("utf-8")
    if fmt == "json":
        return [(r["id"], r["name"], r["grp"]) for r in map(json.loads, text.splitlines()) if r]
    grp = re.search(r"/grp=([^/]*)/", key)
    return [(int(r[0]), r[1], grp.group(1) if grp else r[2]) for r in csv.reader(text.splitlines()) if r]


def store_sinks(plugin: str, rows: int, resources: Any, sink_cls: Any) -> list[Any]:
    """The two sinks of ``plugin``'s restore trials (``sink_cls``: :class:`restore_faults.Sink`)."""
    from airflow_provider_seatunnel.connectors.files.storesource import list_input_keys

    target = _target(plugin, resources)

    def reader(folder: str, fmt: str) -> Callable[[], list[Row]]:
        def read() -> list[Row]:
            dialect, s = target.settings(folder)
            keys = list_input_keys(dialect.open(s), s, {"path": "/" + folder})
            return [row for key in keys for row in _rows(target, key, fmt)]
        return read

    def raw(folder: str) -> Callable[[], int]:
        return lambda: sum(1 for k in target.keys(folder) if ".seatunnel-" not in k and "/_" not in k)

    def seeder(folder: str, fmt: str) -> Callable[[], None]:
        def seed() -> None:
            target.clear(folder)
            base = target.settings(folder)[1].prefix
            if fmt == "json":
                target.put(f"{base}/old.json", (json.dumps({"id": -1, "name": "old", "grp": "g0"}) + "\n").encode())
            else:
                target.put(f"{base}/grp=g0/old.csv", b"-1,old\n")
        return seed

    name = plugin.removesuffix("File")
    a, b = f"rf_{name.lower()}_json", f"rf_{name.lower()}_csv"
    return [
        sink_cls(f"{plugin} json", f'{plugin} {{ plugin_input = "rows", {target.options(a)}, '
                                   f'file_format_type = "json", batch_size = {max(1, rows // 8)} }}',
                 seeder(a, "json"), reader(a, "json"), raw(a), list(OLD)),
        sink_cls(f"{plugin} csv", f'{plugin} {{ plugin_input = "rows", {target.options(b)}, file_format_type = "csv", '
                                  'have_partition = true, partition_by = ["grp"] }',
                 seeder(b, "csv"), reader(b, "csv"), raw(b), list(OLD)),
    ]


READING = ("*Visible after attempt 1* is what the plugin's source reads per sink (its listing hides the files of a "
           "commit in progress or interrupted); *raw files* counts the data files a naive listing sees after "
           "attempt 1 → after the restore (bookkeeping and staging excluded).")
