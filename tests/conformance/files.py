"""Adapters of the file sinks: a local directory, an S3-compatible bucket (moto), FTP, SFTP and HDFS (a
``file:`` default filesystem). What landed is what the store's own source reads back; staging is any
bookkeeping entry (:data:`~tests.conformance.adapters.STAGING_MARKS`) left in the target."""

from __future__ import annotations

import json

from tests.conformance.adapters import (
    OLD,
    SCHEMA,
    STAGING_MARKS,
    Adapter,
    Target,
    json_options,
    read_source,
    staging_on_disk,
)

OLD_FILE = json.dumps(OLD) + "\n"
#: the sinks on one object-store commit (files/storecommits.py): a fence record is the commit point, a
#: restore rolls an interrupted commit forward (its staging stays until then, its finals hidden from readers)
STORE_COMMIT = {"rolls_forward": True, "drop_specs": ("sink.prepared", "sink.move"), "fails": {
    "drop_data:sink.move": "DROP_DATA is not atomic for readers once the commit point is passed: the commit "
                           "deletes the earlier objects before it copies the staged ones, so a commit interrupted "
                           "between the two (sink.move) leaves a target a reader sees empty (neither the old rows "
                           "nor the new) until the restore rolls it forward"}}


def _local_seed(t: Target) -> None:
    (t.root / t.name).mkdir(parents=True, exist_ok=True)
    (t.root / t.name / "old.json").write_text(OLD_FILE)


def _reader(plugin: str, where: str) -> str:
    return f'{plugin} {{ plugin_output = "r", {where}, file_format_type = "json", {SCHEMA} }}'


# -- LocalFile -----------------------------------------------------------------------------------------

def _lf_where(t: Target) -> str:
    return f'path = "{t.root / t.name}"'


LOCALFILE = Adapter(
    "LocalFile", _local_seed,
    lambda t, i, extra: f"LocalFile {{ {_lf_where(t)}, {json_options(i, extra)} }}",
    lambda t: read_source(t, _reader("LocalFile", _lf_where(t))),
    lambda t: staging_on_disk(t.root / t.name),
    # every fault point of a file commit (a move per file, the commit record), not only the engine's two
    specs=("sink.write+3", "sink.prepared", "sink.move+1", "sink.commit", "sink.commit+1", "pipeline.committed"),
    drop_specs=("sink.write+3", "sink.commit"))  # its commit point is inside its commit: rolled back


# -- HdfsFile (file: URIs through Hadoop's FileSystem, as its own tests run it) --------------------------

def _hdfs_where(t: Target) -> str:
    return f'fs.defaultFS = "file:///", path = "{t.root / t.name}"'


HDFSFILE = Adapter(
    "HdfsFile", _local_seed,
    lambda t, i, extra: f"HdfsFile {{ {_hdfs_where(t)}, {json_options(i, extra)} }}",
    lambda t: read_source(t, _reader("HdfsFile", _hdfs_where(t))),
    lambda t: staging_on_disk(t.root / t.name),
    # HDFS has no secret of its own: its commit records are sealed with the deployment's journal key
    environ={"SEATUNNEL_JOURNAL_KEY": "conformance-journal-key"}, **STORE_COMMIT)


# -- S3File (moto's server) ------------------------------------------------------------------------------

def _s3_where(t: Target) -> str:
    return t.env.options(t.name, "/out")


def _s3_seed(t: Target) -> None:
    client = t.env.client()
    client.create_bucket(Bucket=t.name)
    client.put_object(Bucket=t.name, Key="out/old.json", Body=OLD_FILE.encode())


S3FILE = Adapter(
    "S3File", _s3_seed,
    lambda t, i, extra: f"S3File {{ {_s3_where(t)}, {json_options(i, extra)} }}",
    lambda t: read_source(t, _reader("S3File", _s3_where(t))),
    lambda t: any(m in "/" + k for k in t.env.keys(t.name) for m in STAGING_MARKS),
    server="s3", markers=("s3",), **STORE_COMMIT)


# -- FtpFile, SftpFile (pyftpdlib, OpenSSH) --------------------------------------------------------------

def _remote_where(t: Target) -> str:
    mode = ', connection_mode = "passive_local"' if t.env.scheme == "ftp" else ""
    return f'{t.env.options()}{mode}, path = "{t.env.path(t.name)}"'


def _remote_seed(t: Target) -> None:
    t.env.local(t.name).mkdir(parents=True, exist_ok=True)
    (t.env.local(t.name) / "old.json").write_text(OLD_FILE)


def _remote(plugin: str, server: str) -> Adapter:
    return Adapter(
        plugin, _remote_seed,
        lambda t, i, extra: f"{plugin} {{ {_remote_where(t)}, {json_options(i, extra)} }}",
        lambda t: read_source(t, _reader(plugin, _remote_where(t))),
        lambda t: staging_on_disk(t.env.local(t.name)),
        server=server, markers=(server.split("_")[0],), **STORE_COMMIT)


FTPFILE = _remote("FtpFile", "ftp_server")
SFTPFILE = _remote("SftpFile", "sftp_server")

ADAPTERS = (LOCALFILE, HDFSFILE, S3FILE, FTPFILE, SFTPFILE)
