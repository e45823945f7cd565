"""Adapters of the file sinks: a local directory, an S3-compatible bucket (moto), FTP, SFTP and HDFS (a
``file:`` default filesystem). What landed is what the store's own source reads back; staging is any
bookkeeping entry (:data:`~tests.conformance.adapters.STAGING_MARKS`) left in the target."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from tests.conformance.adapters import (
    OLD,
    SCHEMA,
    STAGING_MARKS,
    STEPS_SPECS,
    Adapter,
    Target,
    json_options,
    read_source,
    staging_on_disk,
)

OLD_FILE = json.dumps(OLD) + "\n"
#: the sinks on one object-store commit (files/storecommits.py): a fence record is the commit point, a
#: restore rolls an interrupted commit forward (its staging stays until then, its finals hidden from readers)
STORE_COMMIT = {"rolls_forward": True, "specs": STEPS_SPECS, "drop_specs": ("sink.prepared", "sink.move"), "fails": {
    "drop_data:sink.move": "DROP_DATA is not atomic for readers once the commit point is passed: the commit "
                           "deletes the earlier objects before it copies the staged ones, so a commit interrupted "
                           "between the two (sink.move) leaves a target a reader sees empty (neither the old rows "
                           "nor the new) until the restore rolls it forward"}}


def _local_seed(t: Target) -> None:
    (t.root / t.name).mkdir(parents=True, exist_ok=True)
    (t.root / t.name / "old.json").write_text(OLD_FILE)


def _local_staging(t: Target) -> bool:
    return staging_on_disk(t.root / t.name)


def _files(plugin: str, where: Callable[[Target], str], seed: Callable[[Target], None],
           staging: Callable[[Target], bool], **more: Any) -> Adapter:
    """A file sink writing JSON lines where ``where`` (its options naming the target) says, read back by the
    same plugin's source."""
    return Adapter(
        plugin, seed,
        lambda t, i, extra: f"{plugin} {{ {where(t)}, {json_options(i, extra)} }}",
        lambda t: read_source(t, f'{plugin} {{ plugin_output = "r", {where(t)}, file_format_type = "json", '
                                 f"{SCHEMA} }}"),
        staging, **more)


LOCALFILE = _files(
    "LocalFile", lambda t: f'path = "{t.root / t.name}"', _local_seed, _local_staging,
    # every fault point of a file commit (a move per file, the commit record), not only the engine's two
    # (sink.write+100000: no task reaches the row, the fault fires on the driver after the write)
    specs=("sink.write+3", "sink.write+100000", "sink.prepared", "sink.move+1", "sink.commit", "sink.commit+1",
           "pipeline.committed"),
    drop_specs=("sink.write+3", "sink.commit"))  # its commit point is inside its commit: rolled back

# HdfsFile: file: URIs through Hadoop's FileSystem, as its own tests run it. HDFS has no secret of its own:
# its commit records are sealed with the deployment's journal key
HDFSFILE = _files(
    "HdfsFile", lambda t: f'fs.defaultFS = "file:///", path = "{t.root / t.name}"', _local_seed, _local_staging,
    environ={"SEATUNNEL_JOURNAL_KEY": "conformance-journal-key"}, **STORE_COMMIT)


# -- S3File (moto's server) ------------------------------------------------------------------------------

def _s3_seed(t: Target) -> None:
    client = t.env.client()
    client.create_bucket(Bucket=t.name)
    client.put_object(Bucket=t.name, Key="out/old.json", Body=OLD_FILE.encode())


S3FILE = _files(
    "S3File", lambda t: t.env.options(t.name, "/out"), _s3_seed,
    lambda t: any(m in "/" + k for k in t.env.keys(t.name) for m in STAGING_MARKS),
    server="s3", markers=("s3",), **STORE_COMMIT)


# -- FtpFile, SftpFile (pyftpdlib, OpenSSH) --------------------------------------------------------------

def _remote_where(t: Target) -> str:
    mode = ', connection_mode = "passive_local"' if t.env.scheme == "ftp" else ""
    return f'{t.env.options()}{mode}, path = "{t.env.path(t.name)}"'


def _remote_seed(t: Target) -> None:
    t.env.local(t.name).mkdir(parents=True, exist_ok=True)
    (t.env.local(t.name) / "old.json").write_text(OLD_FILE)


FTPFILE, SFTPFILE = (_files(plugin, _remote_where, _remote_seed, lambda t: staging_on_disk(t.env.local(t.name)),
                            server=f"{scheme}_server", markers=(scheme,), **STORE_COMMIT)
                     for plugin, scheme in (("FtpFile", "ftp"), ("SftpFile", "sftp")))

ADAPTERS = (LOCALFILE, HDFSFILE, S3FILE, FTPFILE, SFTPFILE)
