"""FtpFile and SftpFile at run time: S3File's source and sink (:mod:`..files.storesource`,
:mod:`..files.storesink`) with a file server for the bucket, through a :class:`..files.s3options.Dialect`
per plugin.

* SFTP: Spark reads and writes ``sftp://`` URIs itself (Hadoop's SFTP file system, on the
  executors); the driver's store (:class:`.clients.SftpStore`) lists, fences and renames.
* FTP: the driver downloads the files a source reads into a local spool, and uploads what a sink's
  Spark write put into a local spool into the staging directory on the server (Hadoop's FTP file
  system can neither seek nor rename across directories). Spools are deleted when the upload is
  done, and a source's when the process ends.
"""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
import uuid
from typing import Any

from ..files.s3options import Dialect
from .options import SHARED, ServerSettings, ensure_sftp, log, settings, spool_root, store

#: one logged-in client per server and login, reused while it answers
_STORES: dict[ServerSettings, Any] = {}


def _open(s: ServerSettings) -> Any:
    key = ServerSettings(s.plugin, s.scheme, s.host, s.port, s.user, "", s.passive, s.password, s.key_file,
                         s.host_keys)
    client = _STORES.get(key)
    if client is not None and client.alive():
        return client
    client = store(s)
    _STORES[key] = client
    return client


def _reach(spark: Any, s: ServerSettings) -> None:
    """Make the server reachable by Spark; for SFTP, only once the driver's client has checked the host
    key (Hadoop's SFTP file system does not check it)."""
    if s.scheme == "sftp":
        _open(s)
        ensure_sftp(spark, s)


def _spool(spark: Any, kind: str) -> str:
    return tempfile.mkdtemp(prefix=f"seatunnel-{kind}-", dir=spool_root(spark))


def _upload_staged(spark: Any, writer: Any, client: Any, s: ServerSettings, key: str) -> None:
    """Spark writes into a local spool; every data file of it (not ``_SUCCESS``, checksums or
    hidden files) is uploaded to the same relative path under ``key``; the spool goes."""
    local = os.path.join(_spool(spark, "ftp-out"), "data")
    try:
        writer.save("file://" + local)
        count = 0
        for folder, _, names in os.walk(local):
            relative = os.path.relpath(folder, local)
            target = key if relative == "." else f"{key}/{relative}"
            wanted = [n for n in names if not n.startswith((".", "_"))]
            if wanted:
                client.mkdirs(target)
            for name in wanted:
                client.upload(os.path.join(folder, name), f"{target}/{name}")
                count += 1
        log.info("%s: uploaded %d staged file(s) to %s", s.plugin, count, client.uri(key))
    finally:
        shutil.rmtree(os.path.dirname(local), ignore_errors=True)


def _download_inputs(spark: Any, client: Any, s: ServerSettings, keys: list[str]) -> list[str]:
    """Each key downloaded to the same relative path in a local spool (kept until the process
    ends: Spark reads it lazily); their ``file://`` URIs."""
    if not keys:
        return []
    root = _spool(spark, "ftp-in")
    atexit.register(shutil.rmtree, root, True)
    out = []
    for key in keys:
        local = os.path.join(root, key)
        os.makedirs(os.path.dirname(local), exist_ok=True)
        tmp = f"{local}.{uuid.uuid4().hex[:8]}.part"
        client.download(key, tmp)
        os.replace(tmp, local)
        out.append("file://" + local)
    log.info("%s: downloaded %d file(s) from %s into %s", s.plugin, len(keys), client.uri(s.prefix), root)
    return out


def _sftp_inputs(spark: Any, client: Any, s: ServerSettings, keys: list[str]) -> list[str]:
    return [s.uri(k) for k in keys]


def _sftp_stage(spark: Any, writer: Any, client: Any, s: ServerSettings, key: str) -> None:
    writer.save(s.uri(key))


def dialect(plugin: str, scheme: str) -> Dialect:
    """How a plugin's blocks run on S3File's code."""
    ftp = scheme == "ftp"
    return Dialect(plugin, lambda config: settings(plugin, scheme, config), SHARED,  # type: ignore[arg-type, return-value]
                   reach_with=_reach, open_with=_open,
                   stage_with=_upload_staged if ftp else _sftp_stage,
                   inputs_with=_download_inputs if ftp else _sftp_inputs)
