"""LocalFile's encodings, xml and binary formats and header rows on real Spark (written, then read back)."""

from __future__ import annotations

import os

import pytest

from airflow_provider_seatunnel.spi.rows import with_kind
from tests.runtime.test_localfile import data_files, rows, sink_conf, sink_ctx, source, write

TEXT = "中文, ok"  # GBK has it; ISO-8859-1 gets the Latin text below
LATIN = "café, ü"


@pytest.mark.parametrize(("encoding", "value"), [("GBK", TEXT), ("ISO-8859-1", LATIN)])
@pytest.mark.parametrize("fmt", ["text", "csv", "json"])
def test_encodings_written_and_read_back(fmt, encoding, value, spark, plan_of, tmp_path):
    df = spark.createDataFrame([(1, value), (2, None)], "id int, s string")
    out = tmp_path / fmt
    ctx, sink = sink_ctx(plan_of, spark, sink_conf(out, file_format_type=fmt, encoding=encoding,
                                                   field_delimiter="|", enable_header_write=True))
    write(ctx, sink, {"t": with_kind(df.coalesce(1))})
    (only,) = data_files(out)
    expected = {"text": f"id|s\n1|{value}\n2|", "csv": f'id,s\n1,"{value}"\n2,',
                "json": f'{{"id":1,"s":"{value}"}}\n{{"id":2,"s":null}}'}[fmt]
    assert only.read_bytes() == expected.encode(encoding)
    block = f'path = "{out}"\nfile_format_type = "{fmt}"\nencoding = "{encoding}"\n' \
            f'schema = {{ fields {{ id = int, s = string }} }}\n'
    block += {"text": 'field_delimiter = "\\\\|"\nskip_header_row_number = 1', "csv": "skip_header_row_number = 1",
              "json": ""}[fmt]
    got = source(plan_of, spark, block)["default"]
    assert rows(got) == [(1, value), (2, None)]


def test_xml_layout_and_round_trip(spark, plan_of, tmp_path):
    df = spark.createDataFrame([(1, "a<b", [1, 2]), (2, None, None)], "id int, s string, xs array<int>")
    out = tmp_path / "xml"
    ctx, sink = sink_ctx(plan_of, spark, sink_conf(out, file_format_type="xml"))
    write(ctx, sink, {"t": with_kind(df.coalesce(1))})
    (only,) = data_files(out)
    assert only.name.endswith(".xml")
    text = only.read_text(encoding="utf-8")
    # SeaTunnel's layout: an empty line after the declaration
    assert text.startswith('<?xml version="1.0" encoding="UTF-8"?>\n\n<RECORDS>\n\t<RECORD>\n\t\t<id>1</id>\n'), text
    assert "<s>a&lt;b</s>" in text and "<xs>[1,2]</xs>" in text and text.endswith("\t</RECORD>\n</RECORDS>\n")
    got = source(plan_of, spark, f'''path = "{out}"
file_format_type = "xml"
xml_row_tag = "RECORD"
xml_use_attr_format = false
schema = {{ fields {{ id = bigint, s = string, xs = "array<int>" }} }}''')["default"]
    assert rows(got) == [(1, "a<b", [1, 2]), (2, None, None)]

    attrs = tmp_path / "attrs"
    ctx, sink = sink_ctx(plan_of, spark, sink_conf(attrs, file_format_type="xml", xml_root_tag="ROWS",
                                                   xml_row_tag="R", xml_use_attr_format=True, encoding="GBK"))
    write(ctx, sink, {"t": with_kind(spark.createDataFrame([(7, TEXT)], "id int, s string"))})
    (only,) = data_files(attrs)
    raw = only.read_bytes()
    # Spark's XML writer spells characters outside UTF-8/16 and ISO-8859-1 as references (options.DEVIATIONS)
    assert raw == b'<?xml version="1.0" encoding="GBK"?>\n<ROWS>\n\t<R id="7" s="&#x4e2d;&#x6587;, ok"/>\n</ROWS>\n'
    got = source(plan_of, spark, f'''path = "{attrs}"
file_format_type = "xml"
xml_row_tag = "R"
xml_use_attr_format = true
encoding = "GBK"
schema = {{ fields {{ s = string, id = int }} }}''')["default"]
    assert rows(got) == [(TEXT, 7)]


WHITESPACE = [(1, " pad "), (2, "two  spaces"), (3, "tab\tand\nline"), (4, "a<b & c>d \"q\""), (5, ""), (6, None)]


@pytest.mark.parametrize("attr", [False, True])
def test_xml_whitespace_is_kept_or_normalized_as_seatunnel(attr, spark, plan_of, tmp_path):
    """KEEP (default) writes values as they are and reads them back whole; NORMALIZE writes SeaTunnel
    2.3.8's bytes (its element text trimmed and collapsed: data it loses), both with its escapes."""
    df = spark.createDataFrame(WHITESPACE, "id int, s string").coalesce(1)
    texts = {}
    for mode in ("KEEP", "NORMALIZE"):
        out = tmp_path / mode
        ctx, sink = sink_ctx(plan_of, spark, sink_conf(out, file_format_type="xml", xml_use_attr_format=attr,
                                                       xml_whitespace=mode))
        write(ctx, sink, {"t": with_kind(df)})
        (only,) = data_files(out)
        texts[mode] = only.read_text(encoding="utf-8")
    start = '<?xml version="1.0" encoding="UTF-8"?>\n\n<RECORDS>\n'
    if attr:
        kept = [' pad ', 'two  spaces', 'tab&#x9;and&#xa;line', 'a&lt;b &amp; c&gt;d &quot;q&quot;', '', '']
        normalized = [' pad ', 'two  spaces', 'tab\tand\nline', 'a&lt;b &amp; c&gt;d &quot;q&quot;', '', '']
        body = [f'\t<RECORD id="{i}" s="{v}"/>' for i, v in enumerate(kept, 1)]
        st_body = [f'\t<RECORD id="{i}" s="{v}"/>' for i, v in enumerate(normalized, 1)]
    else:
        kept = [' pad ', 'two  spaces', 'tab\tand\nline', 'a&lt;b &amp; c&gt;d "q"', '', '']
        normalized = ['pad', 'two spaces', 'tab and line', 'a&lt;b &amp; c&gt;d "q"', '', '']
        body = [f'\t<RECORD>\n\t\t<id>{i}</id>\n\t\t<s>{v}</s>\n\t</RECORD>' for i, v in enumerate(kept, 1)]
        st_body = [f'\t<RECORD>\n\t\t<id>{i}</id>\n\t\t<s>{v}</s>\n\t</RECORD>' for i, v in enumerate(normalized, 1)]
    assert texts["KEEP"] == start + "\n".join(body) + "\n</RECORDS>\n"
    assert texts["NORMALIZE"] == start + "\n".join(st_body) + "\n</RECORDS>\n"
    got = source(plan_of, spark, f'''path = "{tmp_path / 'KEEP'}"
file_format_type = "xml"
xml_row_tag = "RECORD"
xml_use_attr_format = {str(attr).lower()}
schema = {{ fields {{ id = int, s = string }} }}''')["default"]
    # "" and null both read back as null (options.DEVIATIONS); every other value whole
    assert rows(got) == [(i, v or None) for i, v in WHITESPACE]


def test_binary_copy_is_byte_identical(spark, plan_of, tmp_path):
    src = tmp_path / "src"
    (src / "sub").mkdir(parents=True)
    blobs = {"a.bin": os.urandom(2500), "sub/b.bin": bytes(range(256)) * 4, "c.txt": b"\xff\xfe\n\x00x"}
    for name, blob in blobs.items():
        (src / name).write_bytes(blob)
    got = source(plan_of, spark, f'path = "{src}"\nfile_format_type = "binary"\nplugin_output = "t"')["t"]
    chunks = rows(got, "relativePath", "partIndex")
    assert chunks == [("a.bin", 0), ("a.bin", 1), ("a.bin", 2), ("c.txt", 0), ("sub/b.bin", 0)]
    sizes = {(r[0], r[1]): len(r[2]) for r in got.select("relativePath", "partIndex", "data").collect()}
    assert sizes[("a.bin", 2)] == 2500 - 2048 and sizes[("sub/b.bin", 0)] == 1024

    out = tmp_path / "out"
    ctx, sink = sink_ctx(plan_of, spark, sink_conf(out, file_format_type="binary"))
    write(ctx, sink, {"t": got.repartition(3)})
    assert {str(p.relative_to(out)): p.read_bytes() for p in data_files(out)} == blobs

    shuffled = got.where("partIndex != 1")  # a missing part fails the job
    ctx, sink = sink_ctx(plan_of, spark, sink_conf(tmp_path / "bad", file_format_type="binary"))
    with pytest.raises(Exception, match="out of order"):
        write(ctx, sink, {"t": shuffled})


@pytest.mark.parametrize("fmt", ["text", "csv"])
def test_header_only_when_enabled(fmt, spark, plan_of, tmp_path):
    df = spark.createDataFrame([(1, "x")], "id int, s string")
    for header in (False, True):
        out = tmp_path / f"{fmt}-{header}"
        ctx, sink = sink_ctx(plan_of, spark, sink_conf(out, file_format_type=fmt, field_delimiter=",",
                                                       enable_header_write=header))
        write(ctx, sink, {"t": with_kind(df.coalesce(1))})
        (only,) = data_files(out)
        assert only.read_text() == ("id,s\n" if header else "") + "1,x"


LZOP_MAGIC = b"\x89LZO\x00\r\n\x1a\n"


@pytest.mark.parametrize("fmt", ["text", "csv", "json"])
def test_lzo_files_are_lzop_and_read_back(fmt, spark, plan_of, tmp_path):
    """compress_codec = "lzo" writes lzop files (.lzo) that the source reads back."""
    df = spark.createDataFrame([(1, "x"), (2, "y")], "id int, s string")
    out = tmp_path / fmt
    ctx, sink = sink_ctx(plan_of, spark, sink_conf(out, file_format_type=fmt, compress_codec="lzo",
                                                   field_delimiter=","))
    write(ctx, sink, {"t": with_kind(df.coalesce(1))})
    (only,) = data_files(out)
    assert only.name.endswith(".lzo") and only.read_bytes().startswith(LZOP_MAGIC)
    block = f'path = "{out}"\nfile_format_type = "{fmt}"\ncompress_codec = "lzo"\n' \
            'schema = { fields { id = int, s = string } }\n' + ('field_delimiter = ","' if fmt == "text" else "")
    got = source(plan_of, spark, block)["default"]
    assert sorted(rows(got)) == [(1, "x"), (2, "y")]
