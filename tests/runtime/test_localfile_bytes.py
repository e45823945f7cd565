"""The bytes of LocalFile's line files (text, csv, json): csv quoting by ``csv_string_quote_mode`` and no row
delimiter after a file's last row (SeaTunnel's layout), with headers, roll-over, partitions and every codec;
and that the project's source still reads every file back."""

from __future__ import annotations

import bz2
import gzip
import zlib

import pytest

from airflow_provider_seatunnel.connectors.files.csvquote import csv_header, needs_quotes
from airflow_provider_seatunnel.connectors.files.lastrow import (
    delimiter_bytes,
    hadoop_data_files,
    trim_file,
    trim_local,
)
from airflow_provider_seatunnel.spi.rows import with_kind
from tests.runtime.test_localfile import data_files, rows, sink_conf, sink_ctx, source, write

VALUES = [(1, "plain"), (2, "WITH,COMMA"), (3, 'QUOTE"D'), (4, '"LEAD'), (5, "LINE\nBREAK"), (6, ""), (7, None)]
#: what each mode writes for VALUES (NONE: SeaTunnel 2.3.8's bytes)
QUOTED = {
    "MINIMAL": '1,plain\n2,"WITH,COMMA"\n3,QUOTE"D\n4,"""LEAD"\n5,"LINE\nBREAK"\n6,\n7,',
    "ALL": '1,"plain"\n2,"WITH,COMMA"\n3,"QUOTE""D"\n4,"""LEAD"\n5,"LINE\nBREAK"\n6,""\n7,',
    "NONE": '1,plain\n2,WITH,COMMA\n3,QUOTE"D\n4,"LEAD\n5,LINE\nBREAK\n6,\n7,',
}
SCHEMA = "schema = { fields { id = int, s = string } }"


# ------------------------------------------------------------------------------------------------
# the rules (no Spark)
# ------------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("text", "quoted"), [
    ("plain", False), ('mid"quote', False), ("tab\there", False), (" pad ", False), ("#hash", False), ("", False),
    ("a,b", True), ('"lead', True), ("a\nb", True), ("a\rb", True), ("a|b", True)])
def test_which_fields_need_quotes(text, quoted):
    assert needs_quotes(text, ",", "|") is quoted


def test_header_names_quoted_as_minimal_fields_raw_under_none():
    opts = {"delimiter": ",", "row_delimiter": "\n"}
    assert csv_header(["id", "a,b", 'q"x'], {**opts, "quote_mode": "MINIMAL"}) == ["id", '"a,b"', 'q"x']
    assert csv_header(["id", "a,b"], {**opts, "quote_mode": "ALL"}) == ["id", '"a,b"']
    assert csv_header(["id", "a,b"], {**opts, "quote_mode": "NONE"}) == ["id", "a,b"]


def test_trim_local_drops_only_a_final_delimiter_and_the_stale_checksum(tmp_path):
    f, crc = tmp_path / "a.txt", tmp_path / ".a.txt.crc"
    for content, tail, after in ((b"1\n2\n", b"\n", b"1\n2"), (b"1\r\n2\r\n", b"\r\n", b"1\r\n2"),
                                 (b"1\n2", b"\n", b"1\n2"), (b"", b"\n", b""), (b"x|", b"\n", b"x|")):
        f.write_bytes(content)
        crc.write_bytes(b"crc")
        assert trim_local(str(f), tail) is (content != after)
        assert f.read_bytes() == after
        assert crc.exists() is (content == after)
    f.write_bytes(b"<R/>")  # xml: a newline after the document
    assert trim_local(str(f), b"", b"\n") is True and f.read_bytes() == b"<R/>\n"


def test_delimiter_bytes_in_the_files_charset():
    assert delimiter_bytes(None, "\r\n", "UTF-8") == b"\r\n"
    assert delimiter_bytes(None, "\n", "UTF-16LE") == b"\n\x00"
    assert delimiter_bytes(None, "\n", "UTF-16") in (b"\n\x00", b"\x00\n")  # no byte order mark
    assert delimiter_bytes(None, "|", "GBK") == b"|"


def test_quote_mode_is_checked_when_compiling(config_error):
    error = config_error("""
source { LocalFile { plugin_output = "t", path = "/in", file_format_type = "parquet" } }
sink { LocalFile { plugin_input = "t", path = "/o", file_format_type = "csv", csv_string_quote_mode = "MINIMUM" } }""")
    text = "\n".join(p.format() for p in error.problems)
    assert "unknown csv_string_quote_mode 'MINIMUM' (did you mean 'MINIMAL'?)" in text


# ------------------------------------------------------------------------------------------------
# csv quoting
# ------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("mode", ["MINIMAL", "ALL", "NONE"])
def test_csv_quote_modes_bytes_and_round_trip(mode, spark, plan_of, tmp_path):
    df = spark.createDataFrame(VALUES, "id int, s string")
    out = tmp_path / mode
    ctx, sink = sink_ctx(plan_of, spark, sink_conf(out, file_format_type="csv", csv_string_quote_mode=mode.lower()))
    write(ctx, sink, {"t": with_kind(df.coalesce(1))})
    (only,) = data_files(out)
    assert only.read_text() == QUOTED[mode]
    if mode == "NONE":  # SeaTunnel 2.3.8's bytes: the comma splits row 2, the lone quote swallows what follows
        return
    # the project's source reads back every value; its reader, like SeaTunnel's, reads a row per line, so
    # the quoted line break is left to readers of multi-line csv (Spark's, here)
    no_break = out.parent / f"{mode}-read"
    ctx, sink = sink_ctx(plan_of, spark, sink_conf(no_break, file_format_type="csv", csv_string_quote_mode=mode))
    write(ctx, sink, {"t": with_kind(df.where("id <> 5").coalesce(1))})
    got = source(plan_of, spark, f'path = "{no_break}"\nfile_format_type = "csv"\n{SCHEMA}')["default"]
    assert rows(got, "id", "s") == sorted([(i, s or None) for i, s in VALUES if i != 5], key=repr)
    multi = spark.read.csv(str(only), multiLine=True, quote='"', escape='"', schema="id int, s string")
    assert rows(multi) == sorted([(i, s or None) for i, s in VALUES], key=repr)


def test_text_fields_are_written_raw(spark, plan_of, tmp_path):
    """text has no quoting (in SeaTunnel either): csv_string_quote_mode does not apply."""
    df = spark.createDataFrame([(1, 'a,"b"'), (2, "")], "id int, s string")
    out = tmp_path / "text"
    ctx, sink = sink_ctx(plan_of, spark, sink_conf(out, file_format_type="text", csv_string_quote_mode="ALL"))
    write(ctx, sink, {"t": with_kind(df.coalesce(1))})
    (only,) = data_files(out)
    assert only.read_text() == '1\x01a,"b"\n2\x01'


# ------------------------------------------------------------------------------------------------
# no row delimiter after the last row
# ------------------------------------------------------------------------------------------------

def _decompressed(spark, path, codec: str) -> bytes:
    """A file's content, decompressed by Python's codecs or (lz4, snappy: Hadoop's block formats) Hadoop's."""
    data = path.read_bytes()
    python = {"none": lambda b: b, "gzip": gzip.decompress, "bzip2": bz2.decompress, "deflate": zlib.decompress}
    if codec in python:
        return python[codec](data)
    jvm, conf = spark._jvm, spark._jsc.hadoopConfiguration()
    hadoop_path = jvm.org.apache.hadoop.fs.Path("file://" + str(path))
    found = jvm.org.apache.hadoop.io.compress.CompressionCodecFactory(conf).getCodec(hadoop_path)
    stream = found.createInputStream(hadoop_path.getFileSystem(conf).open(hadoop_path))
    try:
        return bytes(jvm.org.apache.commons.io.IOUtils.toByteArray(stream))
    finally:
        stream.close()


@pytest.mark.parametrize("codec", ["none", "gzip", "bzip2", "deflate", "lz4", "snappy"])
def test_csv_files_end_without_a_row_delimiter(codec, spark, plan_of, tmp_path):
    """Header, batch_size roll-over and partition directories; the decompressed content of every file."""
    df = spark.createDataFrame([(i, "eu" if i < 3 else "us", f"v{i}") for i in range(5)], "id int, region string, s string")
    out = tmp_path / codec
    ctx, sink = sink_ctx(plan_of, spark, sink_conf(out, file_format_type="csv", compress_codec=codec, batch_size=2,
                                                   enable_header_write=True, partition_by=["region"],
                                                   row_delimiter="\r\n"))
    write(ctx, sink, {"t": with_kind(df.coalesce(1))})
    files = data_files(out)
    contents = sorted(_decompressed(spark, f, codec).decode() for f in files)
    assert contents == ["id,s\r\n0,v0\r\n1,v1", "id,s\r\n2,v2", "id,s\r\n3,v3\r\n4,v4"]
    got = source(plan_of, spark, f'''path = "{out}"
file_format_type = "csv"
compress_codec = "{codec}"
row_delimiter = "\\r\\n"
skip_header_row_number = 1
schema = {{ fields {{ id = int, s = string }} }}''')["default"]
    assert rows(got, "id", "s", "region") == [(i, f"v{i}", "eu" if i < 3 else "us") for i in range(5)]


@pytest.mark.parametrize(("fmt", "codec"), [("text", "none"), ("text", "gzip"), ("json", "none"), ("json", "gzip")])
def test_text_and_json_files_end_without_a_row_delimiter(fmt, codec, spark, plan_of, tmp_path):
    df = spark.createDataFrame([(i, f"v{i}") for i in range(3)], "id int, s string")
    out = tmp_path / fmt
    ctx, sink = sink_ctx(plan_of, spark, sink_conf(out, file_format_type=fmt, compress_codec=codec, batch_size=2,
                                                   field_delimiter=","))
    write(ctx, sink, {"t": with_kind(df.coalesce(1))})
    contents = sorted(_decompressed(spark, f, codec).decode() for f in data_files(out))
    expected = {"text": ["0,v0\n1,v1", "2,v2"], "json": ['{"id":0,"s":"v0"}\n{"id":1,"s":"v1"}', '{"id":2,"s":"v2"}']}
    assert contents == expected[fmt]
    block = f'path = "{out}"\nfile_format_type = "{fmt}"\ncompress_codec = "{codec}"\n{SCHEMA}'
    got = source(plan_of, spark, block + ('\nfield_delimiter = ","' if fmt == "text" else ""))["default"]
    assert rows(got, "id", "s") == [(i, f"v{i}") for i in range(3)]


def test_files_on_other_file_systems_are_found_and_trimmed_by_hadoop_path(spark, tmp_path):
    """The route of S3, SFTP and HDFS staging (Hadoop's listing, then a rewrite), here on Hadoop's local file
    system: escaped partition values (``%3A``) stay one path, hidden and ``_temporary`` files are left."""
    part = tmp_path / "__st_part_0=x%3Ay"
    part.mkdir()
    (part / "part-0.csv").write_bytes(b"a\nb\n")
    for other in ("_temporary/0/part-9.csv", ".hidden/part-8.csv", "_SUCCESS"):
        (tmp_path / other).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / other).write_bytes(b"z\n")
    root = spark._jvm.org.apache.hadoop.fs.Path(spark._jvm.java.io.File(str(tmp_path)).toURI())
    (found,) = hadoop_data_files(spark, root)
    assert trim_file(spark, found, b"\n") is True
    assert (part / "part-0.csv").read_bytes() == b"a\nb"
    assert trim_file(spark, found, b"\n") is False  # nothing more to drop
    assert trim_file(spark, found, b"", b"\n") is True  # xml's ending: a newline added
    assert (part / "part-0.csv").read_bytes() == b"a\nb\n"
    assert all((tmp_path / other).read_bytes() == b"z\n" for other in ("_temporary/0/part-9.csv", ".hidden/part-8.csv"))
    assert [p.name for p in tmp_path.rglob("*") if p.name.startswith(".trim-")] == []


# ------------------------------------------------------------------------------------------------
# what else the target folder holds
# ------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("fmt", ["parquet", "csv"])
def test_readers_skip_the_commit_log_beside_the_data(fmt, spark, plan_of, tmp_path):
    """``.seatunnel-commits/`` stays in the target (restores read it there); it is hidden, and Spark, pyarrow
    datasets and the project's source read the data files only."""
    import pyarrow.csv as pacsv
    import pyarrow.dataset as ds

    df = spark.createDataFrame([(1, "a"), (2, "b")], "id int, s string")
    out = tmp_path / fmt
    ctx, sink = sink_ctx(plan_of, spark, sink_conf(out, file_format_type=fmt))
    write(ctx, sink, {"t": with_kind(df.repartition(2))})
    assert any(p.is_file() for p in (out / ".seatunnel-commits").rglob("*"))
    arrow_format = ds.CsvFileFormat(read_options=pacsv.ReadOptions(column_names=["id", "s"])) if fmt == "csv" else fmt
    assert sorted(ds.dataset(str(out), format=arrow_format).to_table().column("id").to_pylist()) == [1, 2]
    assert spark.read.format(fmt).schema("id int, s string").load(str(out)).count() == 2
    got = source(plan_of, spark, f'path = "{out}"\nfile_format_type = "{fmt}"' + ("\n" + SCHEMA if fmt == "csv" else ""))
    assert rows(got["default"], "id", "s") == [(1, "a"), (2, "b")]
