"""archive_compress_codec: file sources read the entries of zip, tar and tar.gz archives made here (each
entry a file: its own header rows, the archive's partition directories), and refuse hostile archives
(names escaping the spool, bombs) with a clear error before they fill the disk."""

from __future__ import annotations

import io
import os
import tarfile
import zipfile
from pathlib import Path

import pytest

from airflow_provider_seatunnel.connectors.files import archives
from airflow_provider_seatunnel.connectors.files.archives import ArchiveError, unpack
from tests.runtime.test_localfile import rows, source


def _zip(path: Path, entries: dict[str, bytes], method: int = zipfile.ZIP_DEFLATED) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(path, "w", method) as z:
        for name, data in entries.items():
            z.writestr(name, data)
    return path


def _tar(path: Path, entries: dict[str, bytes], gz: bool = False) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with tarfile.open(path, "w:gz" if gz else "w") as t:
        for name, data in entries.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            t.addfile(info, io.BytesIO(data))
    return path


# ------------------------------------------------------------------------------------------------
# unpacking (no Spark)
# ------------------------------------------------------------------------------------------------

def test_entries_of_the_format_in_archive_order_under_safe_names(tmp_path):
    archive = _zip(tmp_path / "k=1" / "a.zip", {"dir/": b"", "dir/nested/x.txt": b"1\n", "../../escape.txt": b"2\n",
                                                "/abs/y.txt": b"3\n", "skip.csv": b"4\n", "empty.txt": b""})
    got = unpack(None, [str(archive)], "text", "zip")
    names = [os.path.basename(p) for p in got]
    assert names == ["00000-x.txt", "00001-escape.txt", "00002-y.txt"]
    spool = os.path.commonpath(got)
    assert all(os.path.realpath(p).startswith(os.path.realpath(spool)) for p in got)
    assert "/k=1/" in got[0]  # the archive's partition directory stays in the entries' paths
    assert [Path(p).read_bytes() for p in got] == [b"1\n", b"2\n", b"3\n"]
    assert not (tmp_path / "escape.txt").exists() and not Path("/abs/y.txt").exists()


def test_archives_whose_names_sanitise_alike_stay_apart(tmp_path):
    first = _zip(tmp_path / "a b.zip", {"x.txt": b"1\n"})
    second = _zip(tmp_path / "a_b.zip", {"x.txt": b"2\n"})
    got = unpack(None, [str(first), str(second)], "text", "zip")
    assert [Path(p).read_bytes() for p in got] == [b"1\n", b"2\n"] and len(set(got)) == 2


def test_tar_links_and_devices_are_skipped(tmp_path):
    path = tmp_path / "links.tar"
    with tarfile.open(path, "w") as t:
        link = tarfile.TarInfo("evil.txt")
        link.type, link.linkname = tarfile.SYMTYPE, "/etc/passwd"
        t.addfile(link)
        data = tarfile.TarInfo("ok.txt")
        data.size = 3
        t.addfile(data, io.BytesIO(b"ok\n"))
    (got,) = unpack(None, [str(path)], "text", "tar")
    assert Path(got).read_bytes() == b"ok\n"


def test_bombs_and_impostors_fail_clearly(tmp_path, monkeypatch):
    monkeypatch.setattr(archives, "MIN_BUDGET", 1 << 20)  # the floor, lowered so that the bombs stay small
    zero = b"\0" * (8 << 20)
    bomb = _zip(tmp_path / "bomb.zip", {"a.txt": zero})
    assert bomb.stat().st_size < (8 << 20) // archives.MAX_RATIO
    with pytest.raises(ArchiveError, match="archive bomb"):
        unpack(None, [str(bomb)], "text", "zip")
    tar_bomb = _tar(tmp_path / "bomb.tar.gz", {"skipped.bin": zero, "a.txt": b"1\n"}, gz=True)
    with pytest.raises(ArchiveError, match="archive bomb"):  # a skipped entry is inflated too: it counts
        unpack(None, [str(tar_bomb)], "text", "tar_gz")
    monkeypatch.setattr(archives, "MAX_ENTRIES", 3)
    many = _zip(tmp_path / "many.zip", {f"{i}.txt": b"x" for i in range(5)})
    with pytest.raises(ArchiveError, match="more than 3 entries"):  # from the end record, before the directory
        unpack(None, [str(many)], "text", "zip")
    many_tar = _tar(tmp_path / "many.tar", {f"{i}.txt": b"x" for i in range(5)})
    with pytest.raises(ArchiveError, match="more than 3 entries"):
        unpack(None, [str(many_tar)], "text", "tar")
    plain = tmp_path / "plain.txt"
    plain.write_text("not an archive\n")
    for codec in ("zip", "tar", "tar_gz"):
        with pytest.raises(ArchiveError, match="is not a"):
            unpack(None, [str(plain)], "text", codec)
    whole = _zip(tmp_path / "ok.zip", {"a.txt": os.urandom(4000)}, zipfile.ZIP_STORED).read_bytes()
    (tmp_path / "cut.zip").write_bytes(whole[:1000])
    with pytest.raises(ArchiveError, match="is not a zip"):
        unpack(None, [str(tmp_path / "cut.zip")], "text", "zip")
    flipped = bytearray(whole)
    flipped[2000] ^= 0xFF  # inside the entry's data: its CRC no longer matches
    (tmp_path / "flipped.zip").write_bytes(bytes(flipped))
    with pytest.raises(ArchiveError, match="damaged"):
        unpack(None, [str(tmp_path / "flipped.zip")], "text", "zip")


# ------------------------------------------------------------------------------------------------
# reading (Spark)
# ------------------------------------------------------------------------------------------------

def test_text_json_xml_and_excel_entries_are_read(spark, plan_of, tmp_path):
    text = tmp_path / "text"
    _zip(text / "day=1" / "a.zip", {"h/one.txt": b"id|name\n1|ann\n2|bob\n", "two.txt": b"id|name\n3|cy\n"})
    _tar(text / "day=2" / "b.tar.gz", {"three.txt": b"id|name\n4|di\n"}, gz=True)
    got = source(plan_of, spark, f'''path = "{text}"
file_format_type = text
archive_compress_codec = zip
file_filter_pattern = ".*zip"
field_delimiter = "\\\\|"
skip_header_row_number = 1
schema = {{ fields {{ id = int, name = string }} }}''')["default"]
    # the header of each entry is skipped; the tar.gz is filtered out by its archive's name
    assert rows(got) == [(1, "ann", "1"), (2, "bob", "1"), (3, "cy", "1")]

    docs = tmp_path / "docs"
    _tar(docs / "j.tar", {"a.json": b'{"id": 1, "s": "x"}\n{"id": 2, "s": null}\n', "b.json": b'{"id": 3, "s": "z"}\n'})
    got = source(plan_of, spark, f'''path = "{docs}"
file_format_type = json
archive_compress_codec = tar
schema = {{ fields {{ id = int, s = string }} }}''')["default"]
    assert rows(got) == [(1, "x"), (2, None), (3, "z")]

    xml = tmp_path / "xml"
    doc = b'<?xml version="1.0"?><RECORDS><RECORD><id>5</id><s>q</s></RECORD></RECORDS>'
    _tar(xml / "x.tar.gz", {"d/x.xml": doc, "d/y.xml": doc.replace(b"5", b"6")}, gz=True)
    got = source(plan_of, spark, f'''path = "{xml}"
file_format_type = xml
archive_compress_codec = tar_gz
xml_row_tag = RECORD
xml_use_attr_format = false
schema = {{ fields {{ id = int, s = string }} }}''')["default"]
    assert rows(got) == [(5, "q"), (6, "q")]

    openpyxl = pytest.importorskip("openpyxl")
    book = openpyxl.Workbook()
    book.active.append(["id", "name"])
    book.active.append([7, "eve"])
    buffer = io.BytesIO()
    book.save(buffer)
    excel = tmp_path / "excel"
    _zip(excel / "e.zip", {"e1.xlsx": buffer.getvalue(), "e2.xlsx": buffer.getvalue()})
    got = source(plan_of, spark, f'''path = "{excel}"
file_format_type = excel
archive_compress_codec = zip
skip_header_row_number = 1
schema = {{ fields {{ id = int, name = string }} }}''')["default"]
    assert rows(got) == [(7, "eve"), (7, "eve")]


def test_archives_refused_in_streaming_and_unknown_codec(config_error, write_conf, tmp_path):
    from airflow_provider_seatunnel.plan.compiler import validate_job

    base = f'source {{ LocalFile {{ path = "{tmp_path}", file_format_type = json, archive_compress_codec = %s,\n' \
           'schema = { fields { id = int } } } }\nsink { Console { } }'
    error = config_error(base % "rar")
    assert "archive_compress_codec" in str(error)
    assert not validate_job(write_conf(base % "tar_gz", "batch.conf"), environ={})[0]
    errors, _, _ = validate_job(write_conf("env { job.mode = STREAMING }\n" + base % "zip", "stream.conf"), environ={})
    assert [e.code for e in errors] == ["not-runnable"] and "BATCH only" in errors[0].message
