"""LocalFile's excel format on real Spark: workbooks written by the sink (checked with openpyxl, then
read back by the source), workbooks made by openpyxl itself, and what is refused."""

from __future__ import annotations

import datetime as dt
import io
import re
import zipfile
from decimal import Decimal

import openpyxl
import pytest

from airflow_provider_seatunnel.spi.rows import with_kind
from tests.runtime.test_localfile import data_files, rows, sink_conf, sink_ctx, source, write

FIELDS = ('id = bigint, name = string, amount = "decimal(10, 2)", day = date, at = timestamp, ok = boolean, '
          'score = double')


def sample(spark):
    data = [(1, "ann", Decimal("1.50"), dt.date(2024, 1, 2), dt.datetime(2024, 1, 2, 3, 4, 5, 678000), True, 0.1),
            (2, None, None, None, None, None, None),
            (3, "ctl\x01 _x0041_ é", Decimal("-2.25"), dt.date(1999, 12, 31), dt.datetime(1999, 12, 31, 23, 59, 59),
             False, 12345678.5),
            # text cells, neither a formula nor an error cell
            (4, "=1+1", None, None, None, None, None), (5, "#N/A", None, None, None, None, None)]
    schema = "id bigint, name string, amount decimal(10,2), day date, at timestamp_ntz, ok boolean, score double"
    return spark.createDataFrame(data, schema), data


def sheet_values(path, sheet=None) -> list[tuple]:
    book = openpyxl.load_workbook(path, read_only=True)
    ws = book[sheet] if sheet else book.worksheets[0]
    return [tuple(r) for r in ws.iter_rows(values_only=True)]


def test_round_trip_with_header(spark, plan_of, tmp_path):
    df, data = sample(spark)
    out = tmp_path / "x"
    ctx, sink = sink_ctx(plan_of, spark, sink_conf(out, file_format_type="excel", compress_codec="none"))
    write(ctx, sink, {"t": with_kind(df.repartition(2, "id"))})
    files = data_files(out)
    assert len(files) == 2 and all(re.fullmatch(r"T_\w+_run-1_0_1_\d\.xlsx", f.name) for f in files), files
    raw = files[0].read_bytes()  # Spark's text writer ended it with a newline: the zip's one-byte comment
    assert raw.endswith(b"\n") and zipfile.ZipFile(io.BytesIO(raw)).comment == b"\n"
    (ws,) = openpyxl.load_workbook(files[0]).worksheets
    assert re.fullmatch(r"Sheet-?\d+", ws.title)  # SeaTunnel's default: Sheet<random int>
    found = {r[0]: r for f in files for r in sheet_values(f)}
    assert found["id"] == ("id", "name", "amount", "day", "at", "ok", "score")  # every file starts with the header
    assert found[2] == (2, None, None, None, None, None, None)  # nulls are empty cells: a row of nulls is a row
    assert [type(v) for v in found[1][:3]] == [float, str, float]  # numbers as doubles, as SeaTunnel (1.0)
    (first,) = [r for f in files for r in openpyxl.load_workbook(f).worksheets[0].iter_rows() if r[0].value == 1]
    assert first[3].is_date and first[3].number_format == "yyyy-MM-dd"  # date_format's pattern, as SeaTunnel
    assert first[4].number_format == "yyyy-MM-dd HH:mm:ss" and first[2].data_type == "n"

    got = source(plan_of, spark, f'path = "{out}"\nfile_format_type = "excel"\nskip_header_row_number = 1\n'
                                 f'schema = {{ fields {{ {FIELDS} }} }}')["default"]
    assert rows(got) == sorted(data, key=repr)


def test_no_header_sheet_name_batches_and_read_columns(spark, plan_of, tmp_path):
    # two partitions, the first one empty: Spark's text writer leaves an empty file for it, never published
    df = spark.range(0, 10, numPartitions=2).where("id >= 5").selectExpr(
        "cast(id - 5 as int) as id", "concat('n', id - 5) as name", "id % 2 = 1 as even")
    out = tmp_path / "x"
    ctx, sink = sink_ctx(plan_of, spark, sink_conf(out, file_format_type="excel", sheet_name="data",
                                                   enable_header_write=False, batch_size=2))
    write(ctx, sink, {"t": with_kind(df)})
    files = data_files(out)
    assert [len(sheet_values(f, "data")) for f in files] == [2, 2, 1]  # batch_size rows per file, no header
    assert sheet_values(files[0], "data")[0] == (0, "n0", True)
    got = source(plan_of, spark, f'path = "{out}"\nfile_format_type = "excel"\nsheet_name = "data"\n'
                                 'read_columns = [even, id]\n'
                                 'schema = { fields { id = int, name = string, even = boolean } }')["default"]
    assert got.columns[:2] == ["even", "id"]
    assert rows(got, "even", "id") == sorted([(i % 2 == 0, i) for i in range(5)], key=repr)


def test_cells_as_seatunnels_sheet(spark, plan_of, tmp_path):
    """Every number a double written with all its digits (openpyxl's own text keeps 16), an empty string an
    empty text cell (read back as ""), a row of nulls a row of empty cells: what SeaTunnel's sheet holds;
    an integer beyond 2^53 keeps its digits (SeaTunnel rounds it to a double)."""
    df = spark.createDataFrame([(1, "", 0.10000000149011612, 9007199254740993), (None, None, None, None)],
                               "id int, s string, d double, b bigint")
    out = tmp_path / "x"
    ctx, sink = sink_ctx(plan_of, spark, sink_conf(out, file_format_type="excel", enable_header_write=False))
    write(ctx, sink, {"t": with_kind(df.coalesce(1))})
    (only,) = data_files(out)
    sheet = zipfile.ZipFile(only).read("xl/worksheets/sheet1.xml").decode()
    assert "<v>1.0</v>" in sheet and "<v>0.10000000149011612</v>" in sheet and "<v>9007199254740993</v>" in sheet
    assert sheet_values(only) == [(1.0, "", 0.10000000149011612, 9007199254740993), (None, None, None, None)]
    got = source(plan_of, spark, f'path = "{out}"\nfile_format_type = "excel"\n'
                                 'schema = { fields { id = int, s = string, d = double, b = bigint } }')["default"]
    assert rows(got) == [(1, "", 0.10000000149011612, 9007199254740993)]  # the null row has no value: skipped


def test_partitioned_write(spark, plan_of, tmp_path):
    df = spark.createDataFrame([(1, "a", "x"), (2, "b", "y"), (3, "c", "x"), (4, "d", None)], "id int, s string, k string")
    out = tmp_path / "x"
    ctx, sink = sink_ctx(plan_of, spark, sink_conf(out, file_format_type="excel", partition_by=["k"]))
    write(ctx, sink, {"t": with_kind(df.repartition(2, "id"))})
    files = data_files(out)
    assert {f.parent.name for f in files} == {"k=x", "k=y", "k=__HIVE_DEFAULT_PARTITION__"}
    assert len(files) <= 4 and all(sheet_values(f)[0] == ("id", "s") for f in files)  # k is not written
    got = source(plan_of, spark, f'path = "{out}"\nfile_format_type = "excel"\nskip_header_row_number = 1\n'
                                 'schema = { fields { id = int, s = string } }')["default"]
    assert rows(got) == [(1, "a", "x"), (2, "b", "y"), (3, "c", "x"), (4, "d", "__HIVE_DEFAULT_PARTITION__")]


def test_reads_a_workbook_openpyxl_made(spark, plan_of, tmp_path):
    """Cells of each type into fields of each type, as SeaTunnel converts them; blank rows skipped."""
    book = openpyxl.Workbook()
    book.active.title = "first"
    book.active.append(["not this sheet"])
    ws = book.create_sheet("orders")
    ws.append(["Orders of 2024"])
    ws.append(["n", "text", "d", "ts", "ok", "amount", "tags", "pair", "bin"])
    ws.append([3.7, 12, dt.datetime(2024, 1, 2), dt.datetime(2024, 1, 2, 3, 4, 5), True, 1.25,
               "[1, 2]", "7;x", "hi"])
    ws.append([])
    ws.append(["-12", 12345678.0, "02/01/2024", "2024/01/02 03:04:05", "TRUE", "10.005", None, None, None])
    ws.append([None, "#N/A", dt.date(2024, 5, 6), None, "yes", 7, None, None, None])
    ws["B6"].data_type = "e"  # an error cell
    ws["J3"] = "beyond the schema"
    (tmp_path / "in").mkdir()
    book.save(tmp_path / "in" / "book.xlsx")
    got = source(plan_of, spark, f'''path = "{tmp_path / 'in'}"
file_format_type = "excel"
sheet_name = "orders"
skip_header_row_number = 2
date_format = "dd/MM/yyyy"
field_delimiter = ";"
schema = {{ fields {{ n = int, text = string, d = date, ts = timestamp, ok = boolean, amount = "decimal(10, 3)",
                     tags = "array<int>", pair = {{ a = int, b = string }}, bin = bytes }} }}''')["default"]
    assert rows(got) == [
        (-12, "1.2345678E7", dt.date(2024, 1, 2), dt.datetime(2024, 1, 2, 3, 4, 5), True, Decimal("10.005"),
         None, None, None),
        (3, "12.0", dt.date(2024, 1, 2), dt.datetime(2024, 1, 2, 3, 4, 5), True, Decimal("1.250"), [1, 2],
         (7, "x"), b"hi"),
        (None, None, dt.date(2024, 5, 6), None, False, Decimal("7.000"), None, None, None)]


def test_what_is_refused(spark, plan_of, config_error, tmp_path):
    folder = tmp_path / "in"
    folder.mkdir()
    book = openpyxl.Workbook()
    book.active.append(["abc"])
    book.save(folder / "a.xlsx")
    block = f'path = "{folder}"\nfile_format_type = "excel"\nschema = {{ fields {{ n = int }} }}'
    with pytest.raises(Exception, match=r"a\.xlsx sheet 'Sheet' cell A1: cannot read a number from 'abc' \(field n\)"):
        source(plan_of, spark, block)["default"].collect()
    with pytest.raises(Exception, match=r"has no sheet named 'nope' \(sheets: Sheet\)"):
        source(plan_of, spark, block + '\nsheet_name = "nope"')["default"].collect()
    (folder / "a.xlsx").unlink()
    (folder / "old.xls").write_bytes(b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + bytes(504))
    with pytest.raises(Exception, match=r"old\.xls is an \.xls \(Excel 97-2003\) workbook"):
        source(plan_of, spark, block)["default"].collect()

    plan = plan_of(f"""
source {{ LocalFile {{ plugin_output = "t", path = "{folder}/old.xls", file_format_type = "excel",
                      schema = {{ fields {{ a = int }} }} }} }}
sink {{ LocalFile {{ path = "/o", file_format_type = "excel", compress_codec = "gzip" }} }}""")
    notes = {(w["plugin"], w["key"], w.get("code")): w["message"] for w in plan.warnings}
    assert notes[("source[0] LocalFile", "path", "not-runnable")].startswith("reading .xls (Excel 97-2003) files")
    assert "does not apply to excel" in notes[("sink[0] LocalFile", "compress_codec", None)]
    error = config_error("""
source { LocalFile { plugin_output = "t", path = "/in", file_format_type = "excel" } }
sink { LocalFile { path = "/o", file_format_type = "excel", sheet_name = "a/b", max_rows_in_memory = "many" } }""")
    assert sorted(p.message for p in error.problems) == [
        "max_rows_in_memory must be an integer, found 'many'", "sheet_name: a sheet name cannot hold /; found 'a/b'",
        "the option 'schema' is required to read excel files"]
