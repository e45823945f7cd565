"""Reading files packed in archives: a file source's ``archive_compress_codec`` (``zip``, ``tar``,
``tar_gz``; ``none``, the default, reads files as they are).

Which entries: every regular file of an archive whose name ends with the format's suffix (text:
``.txt``; csv: ``.csv`` or ``.txt``; json: ``.json``; xml: ``.xml``; excel: ``.xlsx`` or ``.xls``), in
the archive's order, nested folders included. Directories, links, devices and entries of another
suffix are skipped (the latter logged). Each entry is read as a file of its own: ``skip_header_row_number``
and the excel sheet apply per entry, and its rows take the partition columns (``k=v`` directories) of
the archive's path; ``file_filter_pattern`` and ``read_partitions`` select archives, not entries.
parquet, orc and binary files are read as they are (the option does not apply to them, as in SeaTunnel).

Hostile archives: an entry's name never becomes a path (entries are written to a private spool, on
the driver, under generated names: ``00000-<name>``, the name reduced to safe characters), so no entry
can write outside it (``../``, absolute names, links). Expansion is bounded and streamed (never held
in memory): an archive may expand to at most :data:`MAX_RATIO` times its size or :data:`MIN_BUDGET`
bytes, whichever is more, counting the declared size of every tar entry (skipped ones too) and the
bytes actually inflated from a zip; at most :data:`MAX_ENTRIES` entries. Beyond either, or on an
encrypted zip entry or a file that is not such an archive, the read fails naming the archive
(a deterministic error: a retry would fail alike). The spool is deleted when the process ends.
"""

from __future__ import annotations

import atexit
import logging
import os
import re
import shutil
import struct
import tarfile
import tempfile
import zipfile
import zlib
from collections.abc import Iterator
from typing import IO, Any

from ...spi.errors import RuntimeConfigError

log = logging.getLogger("seatunnel.files")

#: SeaTunnel's ``archive_compress_codec`` values
ARCHIVE_CODECS = ("none", "zip", "tar", "tar_gz")
#: format -> the suffixes of the entries read from an archive
ENTRY_SUFFIXES = {"text": (".txt",), "csv": (".csv", ".txt"), "json": (".json",), "xml": (".xml",),
                  "excel": (".xlsx", ".xls")}
#: an archive expands to at most this many times its own size...
MAX_RATIO = 200
#: ...or this many bytes, whichever is more
MIN_BUDGET = 256 << 20
#: entries (of any kind) an archive may hold
MAX_ENTRIES = 100_000
_CHUNK = 1 << 20


class ArchiveError(RuntimeConfigError):
    """An archive this reader refuses: not an archive of the codec, encrypted, or expanding too far."""


def applies(fmt: str, codec: str | None) -> bool:
    """Whether files of ``fmt`` are read out of archives under ``codec``."""
    return (codec or "none").strip().lower() != "none" and fmt in ENTRY_SUFFIXES


class _Budget:
    """The bytes and entries one archive may still expand to."""

    def __init__(self, archive: str, size: int):
        self.archive = archive
        self.left = max(MIN_BUDGET, MAX_RATIO * size)
        self.limit = self.left
        self.entries = 0

    def entry(self) -> None:
        self.entries += 1
        if self.entries > MAX_ENTRIES:
            raise ArchiveError(f"the archive {self.archive} holds more than {MAX_ENTRIES} entries; refusing it")

    def take(self, n: int, entry: str) -> None:
        self.left -= n
        if self.left < 0:
            raise ArchiveError(f"the archive {self.archive} expands beyond {self.limit} bytes (at the entry "
                               f"{entry!r}): refusing it as a possible archive bomb; unpack it yourself if it "
                               "is genuine")


def _safe_name(index: int, entry: str) -> str:
    """The spool's name of an archive's ``index``-th entry: its base name reduced to safe characters."""
    base = re.sub(r"[^A-Za-z0-9_.-]", "_", entry.replace("\\", "/").rsplit("/", 1)[-1]).lstrip(".") or "entry"
    return f"{index:05d}-{base[-120:]}"


def _copy(src: IO[bytes], dst: str, budget: _Budget, entry: str) -> int:
    """Stream ``src`` into the new file ``dst`` within the budget; the bytes copied."""
    copied = 0
    with open(dst, "xb") as out:
        while chunk := src.read(_CHUNK):
            budget.take(len(chunk), entry)
            out.write(chunk)
            copied += len(chunk)
    return copied


def _declared_zip_entries(path: str) -> int:
    """The entry count a zip's end record declares (0 when it has none): checked before the central
    directory is read, which the reader holds in memory whole."""
    end_record = getattr(zipfile, "_EndRecData", None)
    try:
        with open(path, "rb") as f:
            end = end_record(f) if end_record is not None else None
    except (OSError, ValueError, struct.error):
        return 0
    return int(end[getattr(zipfile, "_ECD_ENTRIES_TOTAL", 4)]) if end else 0


def _zip_entries(path: str, budget: _Budget) -> Iterator[tuple[str, IO[bytes]]]:
    if _declared_zip_entries(path) > MAX_ENTRIES:
        raise ArchiveError(f"the archive {budget.archive} holds more than {MAX_ENTRIES} entries; refusing it")
    try:
        archive = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError) as e:
        raise ArchiveError(f"{path} is not a zip archive ({e})") from None
    with archive:
        for info in archive.infolist():
            budget.entry()
            if info.is_dir():
                continue
            if info.flag_bits & 0x1:
                raise ArchiveError(f"the zip entry {info.filename!r} of {path} is encrypted")
            with archive.open(info) as stream:
                yield info.filename, stream


def _tar_entries(path: str, budget: _Budget, gz: bool) -> Iterator[tuple[str, IO[bytes]]]:
    try:
        # a stream: entries in order, nothing held but the current one
        with tarfile.open(path, "r|gz" if gz else "r|") as archive:
            for member in archive:
                budget.entry()
                budget.take(max(0, member.size), member.name)  # what the tar's reader inflates, read or skipped
                if not member.isfile():
                    continue
                stream = archive.extractfile(member)
                if stream is not None:
                    budget.left += member.size  # counted again as it is copied
                    yield member.name, stream
    except (tarfile.TarError, EOFError, OSError) as e:
        raise ArchiveError(f"{path} is not a {'tar.gz' if gz else 'tar'} archive ({e})") from None


def _entries(path: str, codec: str, budget: _Budget) -> Iterator[tuple[str, IO[bytes]]]:
    if codec == "zip":
        return _zip_entries(path, budget)
    return _tar_entries(path, budget, gz=codec == "tar_gz")


def _local_copy(spark: Any, uri: str, spool: str) -> str:
    """``uri`` as a local file: a plain or ``file:`` path as it is, another one copied by Hadoop into the spool."""
    if re.match(r"^file:", uri):
        return re.sub(r"^file:(//)?", "", uri)
    if not re.match(r"^[A-Za-z][A-Za-z0-9+.-]*:", uri):
        return uri
    from ...spi.hadoop import filesystem

    fs, source = filesystem(spark, uri)
    local = os.path.join(spool, f"archive-{len(os.listdir(spool)):05d}")
    fs.copyToLocalFile(False, source, spark.sparkContext._jvm.org.apache.hadoop.fs.Path("file://" + local), True)
    return local


def _mirror(spool: str, uri: str, index: int) -> str:
    """A spool directory for the entries of the archive ``uri``: its directories (so that its ``k=v``
    partition directories stay in the entries' paths), then its name made safe (never a ``k=v``)."""
    plain = re.sub(r"^[A-Za-z][A-Za-z0-9+.-]*:(//)?", "", uri)
    parts = [p for p in plain.split("/") if p not in ("", ".", "..")]
    dirs = [re.sub(r"[^A-Za-z0-9_.=%-]", "_", p).lstrip(".") or "_" for p in parts[:-1]]
    name = re.sub(r"[^A-Za-z0-9_.-]", "_", parts[-1] if parts else "archive").lstrip(".") or "archive"
    return os.path.join(spool, "entries", *dirs, f"{name}.{index}.d")  # two names made alike stay apart


def _spool_root(spark: Any) -> str:
    local = spark.conf.get("spark.local.dir", None) if spark is not None else None
    root = str(local).split(",")[0] if local else tempfile.gettempdir()
    os.makedirs(root, exist_ok=True)
    spool = tempfile.mkdtemp(prefix="seatunnel-archives-", dir=root)
    atexit.register(shutil.rmtree, spool, True)
    return spool


def unpack(spark: Any, archives: list[str], fmt: str, codec: str, plugin: str = "LocalFile") -> list[str]:
    """The entries of ``fmt`` in ``archives`` (paths or URIs), each written to a file of a private spool:
    their local paths, in the archives' order then each archive's (empty entries left out)."""
    codec = codec.strip().lower()
    if codec not in ARCHIVE_CODECS[1:]:
        raise ArchiveError(f"{plugin}: unknown archive_compress_codec {codec!r} "
                           f"(use one of {', '.join(ARCHIVE_CODECS)})")
    suffixes = ENTRY_SUFFIXES[fmt]
    spool = _spool_root(spark)
    out: list[str] = []
    skipped = 0
    for number, uri in enumerate(archives):
        path = _local_copy(spark, uri, spool)
        budget = _Budget(uri, os.path.getsize(path))
        target = _mirror(spool, uri, number)
        os.makedirs(target, exist_ok=True)
        try:
            for index, (name, stream) in enumerate(_entries(path, codec, budget)):
                if not name.endswith(suffixes):
                    skipped += 1
                    log.warning("%s: skipping the entry %r of %s: not a %s file (%s)", plugin, name, uri, fmt,
                                " or ".join(suffixes))
                    continue
                local = os.path.join(target, _safe_name(index, name))
                if _copy(stream, local, budget, name):
                    out.append(local)
                else:
                    os.remove(local)
        except (zipfile.BadZipFile, zlib.error, tarfile.TarError, EOFError) as e:
            raise ArchiveError(f"{plugin}: the archive {uri} is damaged ({e})") from None
        if path.startswith(spool):
            os.remove(path)
    log.info("%s: unpacked %d %s entr%s of %d archive(s) into %s%s", plugin, len(out), fmt,
             "y" if len(out) == 1 else "ies", len(archives), spool, f" ({skipped} skipped)" if skipped else "")
    return out
