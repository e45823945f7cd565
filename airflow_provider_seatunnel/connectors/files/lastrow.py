"""No row delimiter after the last row: SeaTunnel's line files put it between rows, Spark's line writers
end every row with it.

:class:`LastRowWrite` wraps the Spark writer of a table's line files (text, csv, json). Every store's
sink stages through ``writer.save(uri)`` (LocalFile into its staging directory, S3 through ``s3a://``,
SFTP and HDFS through their Hadoop file systems, FTP into a local spool it then uploads), so the trim
happens where the files were staged, before the sink lists and sizes them for the commit: the staged
files the commit publishes already have SeaTunnel's bytes, and the two phases are untouched (a
trim that fails fails the stage, whose staging the sink then discards as for any failed write).

Each staged data file (not hidden, not ``_``-prefixed, not empty) whose content ends with the row
delimiter (in the file's charset) loses it:

* an uncompressed local file is truncated in place;
* any other file (compressed, or on another file system) is rewritten through Hadoop's FileSystem
  and compression codec in the session's JVM: streamed, decompressed and recompressed with the
  codec Spark wrote it with, into a hidden sibling that then replaces it.

A file whose content does not end with the delimiter is left as it is. xml documents, which SeaTunnel
ends with a newline after the root element and Spark without, get that newline the same way.
"""

from __future__ import annotations

import codecs
import contextlib
import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from .options import PART

__all__ = ["LAST_ROW_FORMATS", "NEWLINE_END_FORMATS", "LastRowWrite", "delimiter_bytes", "hadoop_data_files",
           "trim_file", "trim_local", "trim_tree"]

#: the line formats; their files end without a row delimiter, as SeaTunnel's
LAST_ROW_FORMATS = ("text", "csv", "json")
#: the formats whose files end with a newline (SeaTunnel's xml documents), Spark's without
NEWLINE_END_FORMATS = ("xml",)

#: the hidden sibling a rewritten file is written to before it replaces the file
_TMP = ".trim-"
#: files rewritten at once (each streams through the driver's JVM)
_THREADS = 8


def delimiter_bytes(spark: Any, row_delimiter: str, encoding: str) -> bytes:
    """The row delimiter as the files hold it: encoded in their charset (by Python, else by the JVM,
    which knows every charset Spark writes), without a byte order mark."""
    try:
        encoded = row_delimiter.encode(codecs.lookup(encoding).name)
    except LookupError:
        encoded = bytes(spark._jvm.java.lang.String(row_delimiter).getBytes(encoding))
    for bom in (codecs.BOM_UTF32_LE, codecs.BOM_UTF32_BE, codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE, codecs.BOM_UTF8):
        if encoded.startswith(bom) and len(encoded) > len(bom):
            return encoded[len(bom):]
    return encoded


def _data_file(name: str, size: int) -> bool:
    return size > 0 and not name.startswith((".", "_"))


def _data_dir(name: str) -> bool:
    """A directory holding data files: not hidden, not Spark's ``_temporary``; staging partitions are."""
    return name.startswith(PART) or not name.startswith((".", "_"))


def trim_local(path: str, tail: bytes, end: bytes = b"") -> bool:
    """Replace the ``tail`` an uncompressed local file ends with by ``end`` (in place); whether it did. The checksum
    Hadoop's local file system wrote beside it (``.<name>.crc``) no longer holds and goes: a sink that
    moves the file through Hadoop (HdfsFile on ``file://``) would move it along, and readers would refuse."""
    size = os.path.getsize(path)
    if size < len(tail):
        return False
    with open(path, "r+b") as f:
        f.seek(size - len(tail))
        if f.read() != tail:
            return False
        f.truncate(size - len(tail))
        f.seek(size - len(tail))
        f.write(end)
    folder, name = os.path.split(path)
    with contextlib.suppress(FileNotFoundError):
        os.remove(os.path.join(folder, f".{name}.crc"))
    return True


def trim_file(spark: Any, path: Any, tail: bytes, end: bytes = b"") -> bool:
    """Replace the ``tail`` the content of the file at ``path`` ends with by ``end`` (a Hadoop ``Path``: no string
    round trip, which would escape the ``%`` of escaped partition values again), compressed by the codec
    its name implies, if any; whether it did. Streams within the JVM: a compressed file is read once to
    measure it and once to copy it."""
    jvm, conf = spark._jvm, spark._jsc.hadoopConfiguration()
    hadoop, io = jvm.org.apache.hadoop, jvm.org.apache.commons.io
    fs = path.getFileSystem(conf)
    codec = hadoop.io.compress.CompressionCodecFactory(conf).getCodec(path)

    def opened() -> Any:
        raw = fs.open(path)
        return codec.createInputStream(raw) if codec is not None else raw

    if codec is None:
        length = fs.getFileStatus(path).getLen()
    else:
        stream = opened()
        try:
            length = io.IOUtils.copyLarge(stream, io.output.NullOutputStream.INSTANCE)
        finally:
            stream.close()
    if length < len(tail):
        return False
    stream = opened()
    try:
        if codec is None:
            stream.seek(length - len(tail))
        else:
            io.IOUtils.skipFully(stream, length - len(tail))
        if bytes(io.IOUtils.toByteArray(stream)) != tail:
            return False
    finally:
        stream.close()
    tmp = hadoop.fs.Path(path.getParent(), _TMP + path.getName())
    source, sink = opened(), fs.create(tmp, True)
    target = codec.createOutputStream(sink) if codec is not None else sink
    try:
        io.IOUtils.copyLarge(source, target, 0, length - len(tail))
        if end:
            target.write(bytearray(end))
    finally:
        source.close()
        target.close()
    fs.delete(path, False)
    if not fs.rename(tmp, path):
        raise OSError(f"could not replace {path} by its trimmed copy {tmp}")
    return True


def _local_root(uri: str) -> str | None:
    """The local path of a ``file:`` URI (``file:///x``, ``file:/x``) or a plain path; None for other schemes."""
    parsed = urlsplit(uri)
    if parsed.scheme == "file" and parsed.netloc in ("", "localhost"):
        return parsed.path  # as the sinks spell it: not percent-encoded
    return uri if uri.startswith("/") else None


def _local_files(root: str) -> list[str]:
    """The data files under a local directory (:func:`_data_file` in :func:`_data_dir` directories)."""
    found = []
    for folder, dirs, names in os.walk(root):
        dirs[:] = [d for d in dirs if _data_dir(d)]
        found += [os.path.join(folder, n) for n in names if _data_file(n, os.path.getsize(os.path.join(folder, n)))]
    return sorted(found)


def trim_tree(spark: Any, uri: str, tail: bytes, compressed: bool, end: bytes = b"") -> int:
    """Trim every data file under the directory ``uri`` (uncompressed local files by :func:`trim_local`,
    others by :func:`trim_file`, a few at a time); how many lost their tail."""
    local = _local_root(uri)
    if local is not None and not compressed:
        return sum(trim_local(p, tail, end) for p in _local_files(local))
    hadoop = spark._jvm.org.apache.hadoop
    if local is not None:
        paths = [hadoop.fs.Path(spark._jvm.java.io.File(p).toURI()) for p in _local_files(local)]
    else:
        paths = hadoop_data_files(spark, hadoop.fs.Path(uri))
    if not paths:
        return 0
    with ThreadPoolExecutor(min(_THREADS, len(paths))) as pool:
        return sum(pool.map(lambda path: trim_file(spark, path, tail, end), paths))


def hadoop_data_files(spark: Any, root: Any) -> list[Any]:
    """The data files under ``root`` on its Hadoop file system (:func:`_data_file` in :func:`_data_dir`
    directories), as Hadoop paths."""
    fs = root.getFileSystem(spark._jsc.hadoopConfiguration())
    files = fs.listFiles(root, True)
    base = str(root.toUri().getPath()).rstrip("/")
    found = []
    while files.hasNext():
        status = files.next()
        path = status.getPath()
        relative = str(path.toUri().getPath())[len(base) + 1:]
        if _data_file(path.getName(), status.getLen()) and all(_data_dir(d) for d in relative.split("/")[:-1]):
            found.append(path)
    return found


@dataclass(frozen=True)
class LastRowWrite:
    """A Spark writer whose ``save`` ends each file as SeaTunnel does: a line file's final row delimiter
    (``tail``) goes; an xml document gets ``end``, a newline after its root element."""

    writer: Any
    spark: Any
    tail: bytes
    compressed: bool
    #: what replaces the tail (xml: SeaTunnel's documents end with a newline, Spark's without)
    end: bytes = b""

    def save(self, uri: str) -> None:
        self.writer.save(uri)
        trim_tree(self.spark, uri, self.tail, self.compressed, self.end)
