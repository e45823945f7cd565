"""LocalFile source and sink on real Spark: formats, options, save modes and the two-phase commit."""

from __future__ import annotations

import dataclasses
import datetime as dt
import gzip
import json
import os
import re
import shutil
import tempfile
from decimal import Decimal
from pathlib import Path

import pytest

from airflow_provider_seatunnel.connectors import localfile as lf
from airflow_provider_seatunnel.connectors.files import placeholders
from airflow_provider_seatunnel.connectors.files.optionspec import FILE_SPEC
from airflow_provider_seatunnel.runtime import twophase
from airflow_provider_seatunnel.runtime.executor import RunContext
from airflow_provider_seatunnel.spi.errors import RuntimeConfigError
from airflow_provider_seatunnel.spi.optionspec import OptionSpec
from airflow_provider_seatunnel.spi.rows import ROW_KIND, with_kind
from airflow_provider_seatunnel.spi.twophase import Prepared

FIELDS = "id = int, name = string, amount = \"decimal(10, 2)\", day = date, at = timestamp, ok = boolean"


# ------------------------------------------------------------------------------------------------
# helpers
# ------------------------------------------------------------------------------------------------

def sink_conf(path: Path | str, **options) -> str:
    opts = "\n".join(f"    {k} = {json.dumps(v)}" for k, v in options.items())
    return f"""
source {{ LocalFile {{ plugin_output = "t", path = "/nowhere", file_format_type = "parquet" }} }}
sink {{
  LocalFile {{
    path = "{path}"
{opts}
  }}
}}
"""

LF_2PC = twophase.driver(lf.CONNECTOR)  # the engine's two phases over LocalFile's storage verbs


def sink_ctx(plan_of, spark, conf: str, run_id: str = "run-1", attempt: int = 1, pipeline: int = 0):
    plan = plan_of(conf)
    p = plan.pipelines[pipeline]
    return RunContext(spark, plan, p, run_id, attempt=attempt), p.sinks[0]


def write(ctx, sink, data: dict) -> Prepared:
    info = LF_2PC.prepare(ctx, sink, data)
    LF_2PC.commit(ctx, sink, info)
    return info


def source(plan_of, spark, block: str) -> dict:
    """Read with the LocalFile source configured by ``block`` (the inside of LocalFile { })."""
    plan = plan_of(f"source {{ LocalFile {{\n{block}\n}} }}\nsink {{ Console {{ }} }}")
    p = plan.pipelines[0]
    return lf.read(RunContext(spark, plan, p, "run-r"), p.sources[0])


def rows(df, *columns) -> list[tuple]:
    cols = list(columns) or [c for c in df.columns if c != ROW_KIND]
    return sorted((tuple(r) for r in df.select(*cols).collect()), key=repr)


def data_files(root: Path) -> list[Path]:
    """Files a reader of ``root`` sees (no hidden or underscore paths)."""
    return sorted(p for p in root.rglob("*") if p.is_file()
                  and not any(part.startswith((".", "_")) for part in p.relative_to(root).parts))


def sample(spark):
    data = [(1, "ann", Decimal("1.50"), dt.date(2024, 1, 2), dt.datetime(2024, 1, 2, 3, 4, 5), True),
            (2, None, None, None, None, False),
            (3, "bob, jr", Decimal("-2.25"), dt.date(1999, 12, 31), dt.datetime(1999, 12, 31, 23, 59, 59), None)]
    schema = "id int, name string, amount decimal(10,2), day date, at timestamp_ntz, ok boolean"
    return spark.createDataFrame(data, schema), data


# ------------------------------------------------------------------------------------------------
# round trips
# ------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("fmt", ["text", "csv", "json", "parquet", "orc"])
def test_round_trip_each_format(fmt, spark, plan_of, tmp_path):
    df, data = sample(spark)
    out = tmp_path / fmt
    ctx, sink = sink_ctx(plan_of, spark, sink_conf(out, file_format_type=fmt))
    info = write(ctx, sink, {"t": with_kind(df.repartition(2))})
    assert not info.tables[0].committed  # staged, then published
    files = data_files(out)
    assert files and all(f.parent == out for f in files)
    assert all(re.fullmatch(rf"T_\w+_run-1_0_1_\d+{lf.FORMAT_SUFFIX[fmt]}", f.name) for f in files), files
    assert not (out / lf.STAGING_DIR).exists()
    assert (out / lf.COMMITS_DIR).is_dir()

    schema = "" if fmt in ("parquet", "orc") else f"schema = {{ fields {{ {FIELDS} }} }}"
    got = source(plan_of, spark, f'path = "{out}"\nfile_format_type = "{fmt.upper()}"\nplugin_output = "t"\n{schema}')
    assert list(got) == ["t"]
    assert rows(got["t"], *got["t"].columns) == sorted([(*r, 0) for r in data], key=repr)  # ROW_KIND: INSERT

    # plain Spark reads the target and never sees staging or bookkeeping
    if fmt in ("parquet", "orc"):
        assert rows(spark.read.format(fmt).load(str(out))) == sorted(data, key=repr)
    elif fmt == "json":
        plain = spark.read.json(str(out))
        assert rows(plain, "id", "name") == [(1, "ann"), (2, None), (3, "bob, jr")]
    elif fmt == "csv":
        plain = spark.read.csv(str(out), quote='"', escape='"')
        assert rows(plain) == [("1", "ann", "1.50", "2024-01-02", "2024-01-02 03:04:05", "true"),
                               ("2", None, None, None, None, "false"),
                               ("3", "bob, jr", "-2.25", "1999-12-31", "1999-12-31 23:59:59", None)]
    else:
        assert sorted(r[0] for r in spark.read.text(str(out)).collect()) == [
            "1\x01ann\x011.50\x012024-01-02\x012024-01-02 03:04:05\x01true",
            "2\x01\x01\x01\x01\x01false",
            "3\x01bob, jr\x01-2.25\x011999-12-31\x011999-12-31 23:59:59\x01"]


def test_nested_and_time_types_round_trip(spark, plan_of, tmp_path):
    df = spark.sql("""select 1 as id, array(1, 2, cast(null as int)) as arr, map('a', 1, 'b', 2) as m,
                      named_struct('x', 7, 'y', 'q') as r, cast('12:34:56' as time(6)) as t, X'6869' as b
                      union all select 2, array(), map(), named_struct('x', cast(null as int), 'y', ''),
                      cast(null as time(6)), cast(null as binary)""")
    fields = "id = int, arr = \"array<int>\", m = \"map<string, int>\", r = { x = int, y = string }, " \
             "t = time, b = bytes"
    expected = {"text": [(1, [1, 2, None], {"a": 1, "b": 2}, (7, "q"), dt.time(12, 34, 56), b"hi"),
                         (2, None, None, (None, None), None, None)],
                "json": [(1, [1, 2, None], {"a": 1, "b": 2}, (7, "q"), dt.time(12, 34, 56), b"hi"),
                         (2, [], {}, (None, ""), None, None)]}
    for fmt in ("text", "json", "parquet"):
        out = tmp_path / fmt
        ctx, sink = sink_ctx(plan_of, spark, sink_conf(out, file_format_type=fmt))
        write(ctx, sink, {"t": with_kind(df)})
        schema = "" if fmt == "parquet" else f"schema = {{ fields {{ {fields} }} }}"
        got = source(plan_of, spark, f'path = "{out}"\nfile_format_type = "{fmt}"\n{schema}')["default"]
        values = [(r.id, r.arr, r.m, tuple(r.r), r.t, None if r.b is None else bytes(r.b))
                  for r in got.orderBy("id").collect()]
        assert values == expected.get(fmt, expected["json"]), fmt
    text = data_files(tmp_path / "text")[0].read_text()
    assert "1\x011\x022\x02\x01a\x031\x02b\x032\x017\x02q\x0112:34:56\x01hi" in text
    assert not text.endswith("\n")  # the row delimiter goes between rows, not after the last


# ------------------------------------------------------------------------------------------------
# sink options
# ------------------------------------------------------------------------------------------------

def test_text_delimiters_formats_and_source_regex_delimiter(spark, plan_of, tmp_path):
    df = spark.createDataFrame([(1, dt.date(2024, 3, 9), dt.datetime(2024, 3, 9, 8, 7, 6, 500000), "a|b")],
                               "id int, day date, at timestamp_ntz, s string")
    out = tmp_path / "out"
    ctx, sink = sink_ctx(plan_of, spark, sink_conf(out, file_format_type="text", field_delimiter="|",
                                                   row_delimiter="\r\n", date_format="yyyy/MM/dd",
                                                   datetime_format="yyyy-MM-dd'T'HH:mm:ss.SSS",
                                                   enable_header_write=True, batch_size=10))
    write(ctx, sink, {"t": with_kind(df.coalesce(1))})
    (only,) = data_files(out)
    assert only.read_bytes() == b"id|day|at|s\r\n1|2024/03/09|2024-03-09T08:07:06.500|a|b"
    # the source splits with a regex: '|' must be escaped; the default datetime format drops fractions
    got = source(plan_of, spark, f'''path = "{out}"
file_format_type = "text"
field_delimiter = "\\\\|"
row_delimiter = "\\r\\n"
skip_header_row_number = 1
datetime_format = "yyyy-MM-dd'T'HH:mm:ss.SSS"
schema = {{ fields {{ id = int, day = date, at = timestamp, s = string, extra = string }} }}''')["default"]
    assert rows(got) == [(1, dt.date(2024, 3, 9), dt.datetime(2024, 3, 9, 8, 7, 6, 500000), "a", "b")]


def test_csv_header_sink_columns_order_quoting_and_time_format(spark, plan_of, tmp_path):
    df = spark.createDataFrame([(1, "x,\"y\"", dt.time(1, 2, 3)), (2, "", None)], "id int, Name string, t time(6)")
    out = tmp_path / "out"
    ctx, sink = sink_ctx(plan_of, spark, sink_conf(out, file_format_type="csv", enable_header_write=True,
                                                   sink_columns=["T", "name", "ID"], time_format="HH:mm",
                                                   field_delimiter="|"))
    write(ctx, sink, {"t": with_kind(df.coalesce(1))})
    (only,) = data_files(out)
    assert only.read_text() == 't,Name,id\n01:02,"x,""y""",1\n,,2'
    got = source(plan_of, spark, f'''path = "{out}"
file_format_type = "csv"
skip_header_row_number = 1
read_columns = ["id", "Name"]
schema = {{ fields {{ t = time, Name = string, id = bigint }} }}''')["default"]
    assert got.columns == ["id", "Name", ROW_KIND]
    assert rows(got) == [(1, 'x,"y"'), (2, None)]
    # names checked at run time too (the input schema is not always known when compiling)
    for options, message in (({"sink_columns": ["id", "nmae"]}, "sink_columns names 'nmae', which is not an input "
                                                                 "field; did you mean 'Name'"),
                             ({"sink_columns": ["id"], "partition_by": ["name"]},
                              "partition fields must in sink columns")):
        ctx, sink = sink_ctx(plan_of, spark, sink_conf(tmp_path / "x", file_format_type="csv", **options))
        with pytest.raises(RuntimeConfigError, match=re.escape(message)):
            LF_2PC.prepare(ctx, sink, {"t": with_kind(df)})


def test_json_row_delimiter_encoding_and_nulls(spark, plan_of, tmp_path):
    df = spark.createDataFrame([(1, "é"), (2, None)], "id int, s string")
    out = tmp_path / "out"
    ctx, sink = sink_ctx(plan_of, spark, sink_conf(out, file_format_type="json", row_delimiter="\r\n",
                                                   encoding="UTF-16LE"))
    write(ctx, sink, {"t": with_kind(df.coalesce(1))})
    (only,) = data_files(out)
    assert only.read_bytes().decode("utf-16-le") == '{"id":1,"s":"é"}\r\n{"id":2,"s":null}'
    got = source(plan_of, spark, f'''path = "{out}"
file_format_type = "json"
encoding = "UTF-16LE"
row_delimiter = "\\r\\n"
schema = {{ fields {{ id = string, s = string }} }}''')["default"]
    assert rows(got) == [("1", "é"), ("2", None)]


def test_text_and_csv_in_another_encoding(spark, plan_of, tmp_path):
    df = spark.createDataFrame([(1, "café"), (2, "")], "id int, s string")
    out = tmp_path / "out"
    ctx, sink = sink_ctx(plan_of, spark, sink_conf(out, file_format_type="text", encoding="ISO-8859-1",
                                                   field_delimiter=";", enable_header_write=True))
    write(ctx, sink, {"t": with_kind(df.coalesce(1))})
    (only,) = data_files(out)
    assert only.read_bytes() == "id;s\n1;café\n2;".encode("latin-1")
    got = source(plan_of, spark, f'''path = "{out}"
file_format_type = "text"
encoding = "ISO-8859-1"
field_delimiter = ";"
skip_header_row_number = 1
schema = {{ fields {{ id = int, s = string }} }}''')["default"]
    assert rows(got) == [(1, "café"), (2, None)]

    csv_out = tmp_path / "csv"
    ctx, sink = sink_ctx(plan_of, spark, sink_conf(csv_out, file_format_type="csv", encoding="ISO-8859-1"))
    write(ctx, sink, {"t": with_kind(df.coalesce(1))})
    (only,) = data_files(csv_out)
    assert only.read_bytes() == "1,café\n2,".encode("latin-1")
    (csv_out / "extra.csv").write_bytes('title\nid,s\n3,"ü, x"\n'.encode("latin-1"))
    (only.parent / "first.csv").write_bytes(b"a\nb\n")  # two header lines per file: whole-file reading
    only.write_bytes(b"a\nb\n" + only.read_bytes())
    got = source(plan_of, spark, f'''path = "{csv_out}"
file_format_type = "csv"
encoding = "ISO-8859-1"
skip_header_row_number = 2
schema = {{ fields {{ id = int, s = string }} }}''')["default"]
    assert rows(got) == [(1, "café"), (2, None), (3, "ü, x")]


def test_partitioned_writes(spark, plan_of, tmp_path):
    df = spark.createDataFrame([(1, "eu", "a b", 10), (2, "eu", "a b", 20), (3, "us", None, 30), (4, "us", "", 40),
                                (5, "us", "x:y", 50)], "id int, region string, city string, n int")
    default = tmp_path / "default"
    ctx, sink = sink_ctx(plan_of, spark, sink_conf(default, file_format_type="parquet",
                                                   partition_by=["Region", "city"]))
    write(ctx, sink, {"t": with_kind(df)})
    dirs = {str(f.parent.relative_to(default)) for f in data_files(default)}
    assert dirs == {"Region=eu/city=a b", "Region=us/city=__HIVE_DEFAULT_PARTITION__", "Region=us/city=x%3Ay"}
    # partition fields are not in the files; the source brings them back from the path
    assert spark.read.parquet(str(data_files(default)[0])).columns == ["id", "n"]
    got = source(plan_of, spark, f'path = "{default}"\nfile_format_type = "parquet"')["default"]
    assert got.columns == ["id", "n", "Region", "city", ROW_KIND]
    assert rows(got) == [(1, 10, "eu", "a b"), (2, 20, "eu", "a b"), (3, 30, "us", "__HIVE_DEFAULT_PARTITION__"),
                         (4, 40, "us", "__HIVE_DEFAULT_PARTITION__"), (5, 50, "us", "x:y")]
    plain = spark.read.parquet(str(default / "Region=us"))  # Spark's own partition discovery agrees
    assert rows(plain) == [(3, 30, None), (4, 40, None), (5, 50, "x:y")]

    custom = tmp_path / "custom"
    ctx, sink = sink_ctx(plan_of, spark, sink_conf(custom, file_format_type="text", field_delimiter=",",
                                                   partition_by=["region"], is_partition_field_write_in_file=True,
                                                   partition_dir_expression="${k0}/x_${v0}", sink_columns=["region",
                                                                                                           "id"],
                                                   enable_header_write=True, batch_size=1))
    write(ctx, sink, {"t": with_kind(df.repartition(3))})
    files = data_files(custom)
    assert sorted(str(f.parent.relative_to(custom)) for f in files) == ["region/x_eu"] * 2 + ["region/x_us"] * 3
    assert sorted(f.read_text() for f in files) == ["region,id\neu,1", "region,id\neu,2", "region,id\nus,3",
                                                    "region,id\nus,4", "region,id\nus,5"]
    without_partitions = source(plan_of, spark, f'''path = "{custom}"
file_format_type = "text"
field_delimiter = ","
parse_partition_from_path = false
skip_header_row_number = 1
schema = {{ fields {{ region = string, id = int }} }}''')["default"]
    assert without_partitions.columns == ["region", "id", ROW_KIND]
    assert rows(without_partitions) == [("eu", 1), ("eu", 2), ("us", 3), ("us", 4), ("us", 5)]

    bad = tmp_path / "bad"
    ctx, sink = sink_ctx(plan_of, spark, sink_conf(bad, file_format_type="text", partition_by=["city"],
                                                   partition_dir_expression="../${v0}"))
    with pytest.raises(RuntimeConfigError, match="outside the sink path"):
        LF_2PC.prepare(ctx, sink, {"t": with_kind(df)})
    assert not (tmp_path / "a b").exists() and not (bad / lf.STAGING_DIR).exists()


def test_file_names_expression_batches_and_compression(spark, plan_of, tmp_path):
    df = spark.range(5).selectExpr("cast(id as int) id")
    out = tmp_path / "out"
    ctx, sink = sink_ctx(plan_of, spark, sink_conf(out, file_format_type="text", compress_codec="gzip",
                                                   batch_size=2, enable_header_write=True,
                                                   file_name_expression="${transactionId}-${now}-${uuid}",
                                                   filename_time_format="yyyy-MM-dd",
                                                   custom_filename=True, have_partition=False))
    write(ctx, sink, {"t": with_kind(df.coalesce(1))})
    files = data_files(out)
    today = dt.date.today().isoformat()
    names = [re.fullmatch(rf"(T_\w+_run-1_0_1)-{today}-([0-9a-f-]{{36}})_(\d)\.txt\.gz", f.name) for f in files]
    assert all(names), [f.name for f in files]
    assert sorted(int(m.group(3)) for m in names) == [0, 1, 2]
    assert len({m.group(2) for m in names}) == 1
    contents = sorted(gzip.decompress(f.read_bytes()).decode() for f in files)
    assert contents == ["id\n0\n1", "id\n2\n3", "id\n4"]
    got = source(plan_of, spark, f'path = "{out}"\nfile_format_type = "text"\nschema = {{ fields {{ id = string }} }}')
    assert rows(got["default"]) == [("0",), ("1",), ("2",), ("3",), ("4",), ("id",), ("id",), ("id",)]

    pq = tmp_path / "pq"
    ctx, sink = sink_ctx(plan_of, spark, sink_conf(pq, file_format_type="parquet", compress_codec="snappy"))
    write(ctx, sink, {"t": with_kind(df.coalesce(1))})
    (only,) = data_files(pq)
    assert only.name.endswith("_0.snappy.parquet")
    assert spark.read.parquet(str(pq)).count() == 5


def test_java_time_patterns():
    moment = dt.datetime(2024, 3, 9, 14, 5, 7, 123456)
    assert placeholders.format_java_datetime("yyyy.MM.dd", moment) == "2024.03.09"
    assert placeholders.format_java_datetime("yyMMdd'T'HHmmss.SSS h a", moment) == "240309T140507.123 2 PM"
    assert placeholders.format_java_datetime("d/M/y EEE MMM", moment) == "9/3/2024 Sat Mar"
    assert placeholders.java_pattern_problem("yyyy-QQ") == "unsupported pattern letter 'Q' in 'yyyy-QQ'"


def test_table_placeholders_in_path_per_table(spark, plan_of, tmp_path):
    df = spark.createDataFrame([(1,)], "id int")
    conf = sink_conf(str(tmp_path) + "/${database_name}/${table_name}_${schema_name:none}", file_format_type="json")
    ctx, sink = sink_ctx(plan_of, spark, conf)
    info = write(ctx, sink, {"db.orders": with_kind(df), "users": with_kind(df)})
    assert [e.committed for e in info.tables] == [False, False]
    assert len(data_files(tmp_path / "db" / "orders_none")) == 1
    (users,) = data_files(tmp_path / "users_none")
    assert "_users_" in users.name  # several tables: the table keeps transaction ids apart
    assert placeholders.expand_table_placeholders("${table_full_name}|${schema_full_name}|${field_names}", "a.b.c",
                                        ["x", "y"]) == "a.b.c|a.b|x,y"


# ------------------------------------------------------------------------------------------------
# save modes
# ------------------------------------------------------------------------------------------------

def test_schema_save_modes(tmp_path):
    target = tmp_path / "t"
    config = {"path": str(target), "file_format_type": "text"}
    with pytest.raises(RuntimeConfigError, match="The sink table not exist"):
        lf.handle_save_mode({**config, "schema_save_mode": "error_when_schema_not_exist"}, "t")
    assert lf.handle_save_mode({**config, "schema_save_mode": "IGNORE"}, "t") == [] and not target.exists()
    assert lf.handle_save_mode(config, "t") == [f"created {target}"] and target.is_dir()
    (target / "old.txt").write_text("x")
    (target / lf.COMMITS_DIR).mkdir()
    assert lf.handle_save_mode(config, "t") == []
    assert lf.handle_save_mode({**config, "schema_save_mode": "ERROR_WHEN_SCHEMA_NOT_EXIST"}, "t") == []
    assert (target / "old.txt").exists()
    done = lf.handle_save_mode({**config, "schema_save_mode": "RECREATE_SCHEMA"}, "t")
    assert done == [f"drop at commit: {target}"]  # the content goes when the new data is committed
    assert sorted(p.name for p in target.iterdir()) == [lf.COMMITS_DIR, "old.txt"]


def test_data_save_modes(tmp_path):
    target = tmp_path / "db_t"
    config = {"path": str(tmp_path / "${database_name}_${table_name}"), "file_format_type": "text"}
    (target / "k=1").mkdir(parents=True)
    (target / "k=1" / "a.txt").write_text("x")
    # only a partition directory: no file directly under the path, so no data
    assert lf.handle_save_mode({**config, "data_save_mode": "ERROR_WHEN_DATA_EXISTS"}, "db.t") == []
    (target / "b.txt").write_text("y")
    with pytest.raises(RuntimeConfigError, match="already has data"):
        lf.handle_save_mode({**config, "data_save_mode": "ERROR_WHEN_DATA_EXISTS"}, "db.t")
    assert lf.handle_save_mode({**config, "data_save_mode": "APPEND_DATA"}, "db.t") == []
    assert (target / "b.txt").exists()
    (target / lf.STAGING_DIR).mkdir()
    assert lf.handle_save_mode({**config, "data_save_mode": "drop_data"}, "db.t") == [f"drop at commit: {target}"]
    assert sorted(p.name for p in target.iterdir()) == [lf.STAGING_DIR, "b.txt", "k=1"]  # nothing dropped yet
    with pytest.raises(RuntimeConfigError, match="CUSTOM_PROCESSING"):
        lf.handle_save_mode({**config, "data_save_mode": "CUSTOM_PROCESSING"}, "db.t")


def test_save_modes_run_once_per_run_in_prepare(spark, plan_of, tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "old.json").write_text('{"id": 0}\n')
    conf = sink_conf(out, file_format_type="json", data_save_mode="DROP_DATA")
    df = spark.createDataFrame([(1,)], "id int")
    ctx, sink = sink_ctx(plan_of, spark, conf)
    write(ctx, sink, {"t": with_kind(df)})
    assert not (out / "old.json").exists() and len(data_files(out)) == 1
    # another pipeline of the same run (a split clone) must not drop what the first committed
    other = RunContext(spark, ctx.plan, dataclasses.replace(ctx.pipeline, task_id="clone_x"), "run-1")
    write(other, sink, {"t": with_kind(df)})
    assert len(data_files(out)) == 2
    # a new run drops again
    write(RunContext(spark, ctx.plan, ctx.pipeline, "run-2"), sink, {"t": with_kind(df)})
    assert [f.name.split("_run-")[1] for f in data_files(out)] == ["2_0_1_0.json"]

    strict = sink_conf(out, file_format_type="json", data_save_mode="ERROR_WHEN_DATA_EXISTS")
    ctx, sink = sink_ctx(plan_of, spark, strict, run_id="run-3")
    with pytest.raises(RuntimeConfigError, match="already has data"):
        LF_2PC.prepare(ctx, sink, {"t": with_kind(df)})


# ------------------------------------------------------------------------------------------------
# two-phase commit
# ------------------------------------------------------------------------------------------------

def test_tmp_path_staging_on_another_file_system(spark, plan_of, tmp_path):
    other = tempfile.mkdtemp(dir="/dev/shm" if os.access("/dev/shm", os.W_OK) else str(tmp_path))
    try:
        out = tmp_path / "out"
        ctx, sink = sink_ctx(plan_of, spark, sink_conf(out, file_format_type="json", tmp_path=other))
        info = LF_2PC.prepare(ctx, sink, {"t": with_kind(spark.createDataFrame([(1,), (2,)], "id int"))})
        staged = info.tables[0].detail["moves"]
        assert staged and all(src.startswith(other + "/seatunnel-staging/") for src, _ in staged)
        assert not (out / lf.STAGING_DIR).exists()
        if os.stat(other).st_dev != os.stat(tmp_path).st_dev:  # published by copy, then an atomic rename
            with pytest.raises(OSError) as crossing:
                os.rename(staged[0][0], str(tmp_path / "probe"))
            assert crossing.value.errno == 18
        LF_2PC.commit(ctx, sink, info)
        assert rows(spark.read.json(str(out))) == [(1,), (2,)]
        assert os.listdir(other) == [] and not list(out.rglob(".*.copying"))
    finally:
        shutil.rmtree(other, ignore_errors=True)


def test_staging_is_invisible_until_commit(spark, plan_of, tmp_path):
    out = tmp_path / "out"
    df, _ = sample(spark)
    ctx, sink = sink_ctx(plan_of, spark, sink_conf(out, file_format_type="parquet"))
    write(ctx, sink, {"t": with_kind(df.limit(1))})
    ctx2 = RunContext(spark, ctx.plan, ctx.pipeline, "run-2")
    info = LF_2PC.prepare(ctx2, sink, {"t": with_kind(df)})
    staged = info.tables[0].detail["moves"]
    assert staged and all(os.path.exists(src) and not os.path.exists(dst) for src, dst in staged)
    assert all(f"/{lf.STAGING_DIR}/" in src for src, _ in staged)
    assert spark.read.parquet(str(out)).count() == 1
    assert source(plan_of, spark, f'path = "{out}"\nfile_format_type = "parquet"')["default"].count() == 1
    LF_2PC.commit(ctx2, sink, info)
    assert spark.read.parquet(str(out)).count() == 4
    marker_path = out / lf.COMMITS_DIR / "run-2" / ctx.pipeline_key / "sink-0" / "t.committed"
    marker = json.loads(marker_path.read_text())["body"]  # sealed (records.py)
    assert marker["files"] == [dst for _, dst in staged]


def test_crash_after_prepare_then_rerun(spark, plan_of, tmp_path):
    out = tmp_path / "out"
    df, _ = sample(spark)
    ctx, sink = sink_ctx(plan_of, spark, sink_conf(out, file_format_type="csv"))
    crashed = LF_2PC.prepare(ctx, sink, {"t": with_kind(df)})  # no commit: the process died
    assert os.path.isdir(crashed.tables[0].detail["staging"])
    retry = RunContext(spark, ctx.plan, ctx.pipeline, "run-1", attempt=2)
    write(retry, sink, {"t": with_kind(df)})
    assert not os.path.exists(crashed.tables[0].detail["staging"]) and not (out / lf.STAGING_DIR).exists()
    assert spark.read.csv(str(out)).count() == 3
    assert all(re.search(r"_run-1_0_2_\d\.csv$", f.name) for f in data_files(out))


def test_crash_mid_commit_is_finished_by_the_rerun(spark, plan_of, tmp_path, monkeypatch):
    out = tmp_path / "out"
    df = spark.range(30).selectExpr("cast(id as int) id")
    ctx, sink = sink_ctx(plan_of, spark, sink_conf(out, file_format_type="json", partition_by=["p"]))
    data = {"t": with_kind(df.selectExpr("id", "id % 3 as p").repartition(2))}
    info = LF_2PC.prepare(ctx, sink, data)
    assert len(info.tables[0].detail["moves"]) >= 3
    real_move, calls = lf.commits._move, []

    def dying_move(src, dst):
        if len(calls) == 2:
            raise OSError("disk gone")
        calls.append(dst)
        real_move(src, dst)

    monkeypatch.setattr(lf.commits, "_move", dying_move)
    with pytest.raises(OSError):
        LF_2PC.commit(ctx, sink, info)  # the process dies here: no abort
    monkeypatch.setattr(lf.commits, "_move", real_move)
    assert len(data_files(out)) == 2
    retry = RunContext(spark, ctx.plan, ctx.pipeline, "run-1", attempt=2)
    again = write(retry, sink, data)
    assert again.tables[0].committed  # the interrupted commit, finished by the retry's token
    assert json.loads(Path(info.tables[0].detail["marker"]).read_text())["body"]["recovered"] is True
    assert sorted(str(f) for f in data_files(out)) == sorted(dst for _, dst in info.tables[0].detail["moves"])
    got = spark.read.json(str(out))
    assert got.count() == 30 and got.select("id").distinct().count() == 30
    assert not (out / lf.STAGING_DIR).exists()


def test_abort_rolls_back_a_partial_commit(spark, plan_of, tmp_path, monkeypatch):
    out = tmp_path / "out"
    df = spark.range(6).selectExpr("cast(id as int) id").repartition(3)
    ctx, sink = sink_ctx(plan_of, spark, sink_conf(out, file_format_type="parquet"))
    info = LF_2PC.prepare(ctx, sink, {"t": with_kind(df)})
    real_move = lf.commits._move
    calls = []

    def failing(src, dst):
        if calls:
            raise OSError("no space")
        calls.append(dst)
        real_move(src, dst)

    monkeypatch.setattr(lf.commits, "_move", failing)
    with pytest.raises(OSError):
        LF_2PC.commit(ctx, sink, info)
    LF_2PC.abort(ctx, sink, info)
    assert data_files(out) == [] and not (out / lf.STAGING_DIR).exists()
    monkeypatch.setattr(lf.commits, "_move", real_move)
    write(RunContext(spark, ctx.plan, ctx.pipeline, "run-1", attempt=2), sink, {"t": with_kind(df)})
    assert spark.read.parquet(str(out)).count() == 6


def test_failed_write_leaves_no_staging(spark, plan_of, tmp_path):
    out = tmp_path / "out"
    df = spark.createDataFrame([("x",)], "s string").selectExpr("cast(s as int) as n")  # fails at run time
    ctx, sink = sink_ctx(plan_of, spark, sink_conf(out, file_format_type="parquet"))
    with pytest.raises(Exception, match="CAST_INVALID_INPUT"):
        LF_2PC.prepare(ctx, sink, {"t": with_kind(df)})
    assert not (out / lf.STAGING_DIR).exists()


SPLIT_JOB = """
env {{ parallelism = 1 }}
source {{
  LocalFile {{ plugin_output = "a", path = "{a}", file_format_type = "text", schema = {{ fields {{ id = int }} }} }}
  LocalFile {{ plugin_output = "b", path = "{b}", file_format_type = "text", schema = {{ fields {{ id = int }} }} }}
}}
sink {{
  LocalFile {{ plugin_input = ["a", "b"], path = "{out}", file_format_type = "text", data_save_mode = "DROP_DATA" }}
}}
"""


def test_split_job_pipelines_share_a_target(run_job, tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "1.txt").write_text("1\n2\n")
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "1.txt").write_text("3\n")
    out = tmp_path / "out"
    job = SPLIT_JOB.format(a=tmp_path / "a", b=tmp_path / "b", out=out)
    metrics = run_job(job, run_id="r1")
    assert len(metrics) == 2 and sorted(m["write_count"] for m in metrics) == [1, 2]
    files = data_files(out)
    assert len(files) == 2 and len({f.name for f in files}) == 2
    assert sorted(line for f in files for line in f.read_text().splitlines()) == ["1", "2", "3"]
    run_job(job, run_id="r1")  # a cleared-and-rerun run: both pipelines find their commit markers
    assert data_files(out) == files
    run_job(job, run_id="r2")  # a new run: DROP_DATA once, then both pipelines write
    assert sorted(line for f in data_files(out) for line in f.read_text().splitlines()) == ["1", "2", "3"]


def test_fakesource_split_job_writes_deletes_as_plain_rows(run_job, tmp_path):
    out = tmp_path / "out"
    events: list[str] = []
    metrics = run_job(f"""
source {{
  FakeSource {{ plugin_output = "a", schema = {{ fields {{ id = int, s = string }} }},
               rows = [{{ kind = INSERT, fields = [1, "x"] }}, {{ kind = DELETE, fields = [2, "y"] }}] }}
  FakeSource {{ plugin_output = "b", schema = {{ fields {{ id = int, s = string }} }},
               rows = [{{ kind = UPDATE_AFTER, fields = [3, "z"] }}] }}
}}
sink {{ LocalFile {{ plugin_input = ["a", "b"], path = "{out}", file_format_type = "csv" }} }}""", events=events)
    assert [m["write_count"] for m in metrics] == [2, 1]
    assert sorted(line for f in data_files(out) for line in f.read_text().splitlines()) == ["1,x", "2,y", "3,z"]
    assert any("1 DELETE/UPDATE_BEFORE rows were written as plain rows" in e for e in events)


# ------------------------------------------------------------------------------------------------
# source options
# ------------------------------------------------------------------------------------------------

def test_source_listing_filters_and_partitions(spark, plan_of, tmp_path):
    root = tmp_path / "in"
    layout = {"dt=2024-01-01/a.txt": "1|x\n", "dt=2024-01-01/h=3/b.txt": "2|y\n", "dt=2024-01-02/c.log": "3|z\n",
              "dt=2024-01-02/empty.txt": "", "dt=2024-01-02/.hidden.txt": "9|h\n", "dt=2024-01-02/_SUCCESS": "",
              ".staging/d.txt": "9|s\n", "dt=2024-01-03/e.txt": "4\n"}
    for rel, text in layout.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    base = f'path = "{root}"\nfile_format_type = "text"\nfield_delimiter = "\\\\|"\n' \
           'schema = { fields { id = int, s = string } }'
    got = source(plan_of, spark, base)["default"]
    assert got.columns == ["id", "s", "dt", ROW_KIND]
    assert rows(got, "id", "s", "dt") == [(1, "x", "2024-01-01"), (2, "y", "2024-01-01"), (3, "z", "2024-01-02"),
                                          (4, None, "2024-01-03")]
    filtered = source(plan_of, spark, base + '\nfile_filter_pattern = "[a-c]\\\\.txt"\n'
                                             'parse_partition_from_path = false')
    assert rows(filtered["default"]) == [(1, "x"), (2, "y")]
    chosen = source(plan_of, spark, base + '\nread_partitions = ["dt=2024-01-02", "h=3"]')["default"]
    assert rows(chosen, "id") == [(2,), (3,)]
    single = source(plan_of, spark, f'path = "{root}/dt=2024-01-01/h=3/b.txt"\nfile_format_type = "text"\n'
                                    'field_delimiter = "\\\\|"\nschema = { fields { id = int, s = string } }')
    assert rows(single["default"]) == [(2, "y", "2024-01-01", "3")]


def test_source_text_parsing_rules(spark, plan_of, tmp_path):
    root = tmp_path / "in"
    root.mkdir()
    (root / "a.txt").write_text("h1\nh2\n1,  ,true,2024/01/02,20240102 03:04:05\n2,b\n")
    (root / "b.txt").write_text("h1\nh2\n3,c,TRUE,20240103,2024-01-03T10:11:12.5\n\n")
    got = source(plan_of, spark, f'''path = "{root}"
file_format_type = "text"
field_delimiter = ","
skip_header_row_number = 2
schema = {{ fields {{ id = bigint, s = string, ok = boolean, d = date, ts = timestamp }} }}''')["default"]
    assert rows(got) == [(1, None, True, dt.date(2024, 1, 2), dt.datetime(2024, 1, 2, 3, 4, 5)),
                         (2, "b", None, None, None),
                         (3, "c", True, dt.date(2024, 1, 3), dt.datetime(2024, 1, 3, 10, 11, 12, 500000)),
                         (None, None, None, None, None)]
    (root / "c.txt").write_text("4,d,false,not a date,\n")
    bad = source(plan_of, spark, f'''path = "{root}/c.txt"
file_format_type = "text"
field_delimiter = ","
schema = {{ fields {{ id = int, s = string, ok = boolean, d = date }} }}''')["default"]
    with pytest.raises(Exception, match="cannot parse a date from 'not a date'"):
        bad.collect()


def test_source_csv_json_compressed_and_identity(spark, plan_of, tmp_path):
    root = tmp_path / "csv"
    root.mkdir()
    (root / "a.csv").write_text('id,name\n1,"x, y"\n2,\n')
    with gzip.open(root / "b.csv.gz", "wt") as fh:
        fh.write('id,name\n3,"z"\n')
    got = source(plan_of, spark, f'''path = "{root}"
file_format_type = "csv"
skip_header_row_number = 1
compress_codec = "none"
schema = {{ table = "db.people", fields {{ id = int, name = string }} }}''')
    assert list(got) == ["db.people"]
    assert rows(got["db.people"]) == [(1, "x, y"), (2, None), (3, "z")]

    (tmp_path / "j.json").write_text('{"id": "5", "flag": true, "raw": "aGk=", "tags": ["a"]}\n{"id": 6}\n')
    js = source(plan_of, spark, f'''path = "{tmp_path / 'j.json'}"
file_format_type = "json"
plugin_output = "events"
schema = {{ fields {{ id = int, flag = boolean, raw = bytes, tags = "array<string>" }} }}''')
    assert list(js) == ["events"]
    assert [(r.id, r.flag, r.raw and bytes(r.raw), r.tags) for r in js["events"].orderBy("id").collect()] == \
           [(5, True, b"hi", ["a"]), (6, None, None, None)]


def test_source_parallelism_and_tables_configs(spark, plan_of, tmp_path, monkeypatch):
    (tmp_path / "a.txt").write_text("\n".join(str(i) for i in range(10)) + "\n")
    (tmp_path / "b.parquet").mkdir()
    spark.range(3).write.parquet(str(tmp_path / "b.parquet" / "x"))
    natural = source(plan_of, spark, f'path = "{tmp_path}/a.txt"\nfile_format_type = "text"\n'
                                     'schema = { fields { n = int } }')["default"]
    assert natural.rdd.getNumPartitions() == 1
    plan = plan_of(f'''source {{ LocalFile {{
  parallelism = 3
  tables_configs = [
    {{ path = "{tmp_path}/a.txt", file_format_type = "text", schema = {{ table = "t1", fields {{ n = int }} }} }},
    {{ path = "{tmp_path}/b.parquet", file_format_type = "parquet", schema = {{ table = "t2" }},
       read_columns = ["ID"] }}
  ]
}} }}
sink {{ Console {{ }} }}''')
    p = plan.pipelines[0]
    parsed, parse = [], OptionSpec.run_time

    def counted(spec, options, section=None):
        if spec is FILE_SPEC and section == "source":
            parsed.append(options.get("path"))
        return parse(spec, options, section)

    monkeypatch.setattr(OptionSpec, "run_time", counted)
    got = lf.read(RunContext(spark, plan, p, "r"), p.sources[0])
    # each tables_configs item's options are parsed once, for its listing, reading and projection
    assert sorted(parsed) == [f"{tmp_path}/a.txt", f"{tmp_path}/b.parquet"]
    assert sorted(got) == ["t1", "t2"]
    assert got["t1"].rdd.getNumPartitions() == 3 and got["t1"].count() == 10
    assert rows(got["t2"]) == [(0,), (1,), (2,)]
    with pytest.raises(RuntimeConfigError, match="does not exist"):
        source(plan_of, spark, f'path = "{tmp_path}/missing"\nfile_format_type = "parquet"')


# ------------------------------------------------------------------------------------------------
# compile time
# ------------------------------------------------------------------------------------------------

def messages(error) -> list[str]:
    return [p.format() for p in error.problems]


def test_what_this_package_cannot_do_plans_as_not_runnable(plan_of):
    """A codec SeaTunnel has and Spark has not (or an .xls workbook) is a feature gap, not a bad config:
    the job plans (with a not-runnable warning each) and validate/run refuse it."""
    plan = plan_of("""
source { LocalFile { plugin_output = "t", path = "/in/a.xls", file_format_type = "excel", schema = { fields { a = int } } } }
sink {
  LocalFile { plugin_input = "t", path = "/o3", file_format_type = "parquet", compress_codec = "brotli" }
  LocalFile { plugin_input = "t", path = "/o4", file_format_type = "parquet", compress_codec = "lzo" }
  LocalFile { plugin_input = "t", path = "/o5", file_format_type = "text", compress_codec = "lzo" }
}""")
    gaps = {(w["plugin"], w["key"]): w["message"] for w in plan.warnings if w.get("code") == "not-runnable"}
    assert gaps == {
        ("source[0] LocalFile", "path"):
            "reading .xls (Excel 97-2003) files is not supported by this package: it plans, but validate fails",
        ("sink[0] LocalFile", "compress_codec"):
            "compress_codec 'brotli' is not available in Spark: it plans, but validate fails",
        ("sink[1] LocalFile", "compress_codec"): "compress_codec 'lzo' is not available in Spark: it plans, but "
                                                  "validate fails"}


def test_compile_time_option_problems(config_error):
    error = config_error("""
source { LocalFile { plugin_output = "t", path = "/in", file_format_type = "parquet" } }
sink {
  LocalFile { plugin_input = "t", path = "/o1" }
  LocalFile { plugin_input = "t", path = "/o2", file_format_type = "jsno", schema_save_mode = "RECREATE_SCHEMAS",
              data_save_mode = "CUSTOM_PROCESSING" }
  LocalFile { plugin_input = "t", path = "/o3", file_format_type = "parquet", file_name_expression = "${now}" }
  LocalFile { plugin_input = "t", path = "/o4", file_format_type = "text", filename_time_format = "yyyy-QQ",
              batch_size = 0 }
  LocalFile { plugin_input = "t", file_format_type = "text" }
}""")
    text = "\n".join(messages(error))
    assert "sink[0] LocalFile: option 'file_format_type': the option 'file_format_type' is required: " \
           "SeaTunnel's LocalFile sink fails without it" in text
    assert "unknown file_format_type 'jsno' (did you mean 'json'?)" in text
    assert "unknown schema_save_mode 'RECREATE_SCHEMAS' (did you mean 'RECREATE_SCHEMA'?)" in text
    assert "CUSTOM_PROCESSING is not supported by file sinks" in text
    assert "file_name_expression must contains transactionId" in text
    assert "unsupported pattern letter 'Q'" in text
    assert "batch_size must be an integer >= 1" in text
    assert "sink[4] LocalFile: option 'path': the option 'path' is required" in text
    assert all(p.file and p.line for p in error.problems)

    error = config_error("""
source {
  LocalFile { plugin_output = "a", path = "/in", file_format_type = "csv", skip_header_row_number = -1,
              file_filter_pattern = "(" }
}
sink { Console { plugin_input = "a" } }""")
    text = "\n".join(messages(error))
    assert "the option 'schema' is required to read csv files" in text
    assert "skip_header_row_number must be an integer >= 0" in text
    assert "file_filter_pattern is not a valid regex" in text


def test_compile_time_field_problems(config_error, tmp_path):
    error = config_error(f"""
source {{
  LocalFile {{ plugin_output = "a", path = "{tmp_path}", file_format_type = "json", parse_partition_from_path = false,
               schema = {{ fields {{ id = int, name = string }} }}, read_columns = [id, nmae] }}
  LocalFile {{ plugin_output = "b", path = "{tmp_path}", file_format_type = "text", parse_partition_from_path = false,
               schema = {{ fields {{ id = int, name = string }} }} }}
}}
sink {{
  LocalFile {{ plugin_input = "b", path = "/o", file_format_type = "text", sink_columns = ["ID", "nmae"],
               partition_by = ["name"] }}
  Console {{ plugin_input = "a" }}
}}""")
    text = "\n".join(messages(error))
    assert "source[0] LocalFile: option 'read_columns': read_columns names 'nmae', which is not a field of the " \
           "schema (did you mean 'name'?)" in text
    assert "sink_columns names 'nmae', which is not among the input fields (did you mean 'name'?)" in text
    assert "partition_by names 'name', which is not among the sink_columns" in text


def test_compile_time_schemas_and_warnings(plan_of, tmp_path):
    plan = plan_of(f"""
source {{
  LocalFile {{ plugin_output = "a", path = "{tmp_path}", file_format_type = "text", read_columns = [b],
               parse_partition_from_path = false, schema = {{ fields {{ a = int, b = string }} }} }}
}}
sink {{ LocalFile {{ path = "{tmp_path}/o", file_format_type = "orc", save_mode = "error" }} }}""")
    vertices = {v.ref: v for v in plan.pipelines[0].vertices}
    assert vertices["source[0]"].schema == {"b": "string"}
    assert vertices["sink[0]"].schema is None
    assert any("save_mode is a legacy option" in w["message"] for w in plan.warnings)
    partitioned = plan_of(f"""
source {{ LocalFile {{ path = "{tmp_path}", file_format_type = "json", schema = {{ fields {{ a = int }} }} }} }}
sink {{ LocalFile {{ path = "{tmp_path}/o", file_format_type = "json", sink_columns = [anything] }} }}""")
    assert partitioned.pipelines[0].vertices[0].schema is None  # k=v directories may add columns


@pytest.mark.parametrize("fmt", ["csv", "text"])
def test_blank_strings_read_as_null_and_other_strings_as_they_are(spark, plan_of, tmp_path, fmt):
    """SeaTunnel reads an empty or whitespace-only text/csv field as null; a value with text (even
    around spaces, or starting with '!', a non-breaking space or a control character) stays as written."""
    values = ["", "   ", "\t", " a ", "a", "!x", "\u00a0", "\u0001z", "é"]
    root = tmp_path / "in"
    root.mkdir()
    sep = "," if fmt == "csv" else "|"
    (root / f"a.{fmt}").write_text("".join(f"{i}{sep}{v}\n" for i, v in enumerate(values)), encoding="utf-8")
    delimiter = "" if fmt == "csv" else 'field_delimiter = "\\\\|"\n'
    got = source(plan_of, spark, f'path = "{root}"\nfile_format_type = "{fmt}"\n{delimiter}'
                                 'schema = { fields { id = int, s = string } }')["default"]
    by_id = dict(rows(got))
    assert [by_id[i] for i in range(len(values))] == [None, None, None, " a ", "a", "!x", "\u00a0", "\u0001z", "é"]


def _projections(df) -> int:
    """The Project nodes of ``df``'s analyzed logical plan."""
    plan = df._jdf.queryExecution().analyzed()
    return sum(1 for line in plan.treeString().splitlines() if line.lstrip("+-: ").startswith("Project "))


def test_a_source_read_as_the_files_are_adds_no_projection_and_read_columns_one(spark, plan_of, tmp_path):
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "a.csv").write_text("1,x\n2,y\n")
    block = f'''path = "{tmp_path / 'in'}"
file_format_type = "csv"
schema = {{ fields {{ id = int, name = string }} }}'''
    as_is = next(iter(source(plan_of, spark, block).values()))
    chosen = next(iter(source(plan_of, spark, block + '\nread_columns = ["name", "id"]').values()))
    assert as_is.columns == ["id", "name", ROW_KIND]
    assert chosen.columns == ["name", "id", ROW_KIND]
    assert _projections(chosen) == _projections(as_is) + 1  # read_columns' own; no identity projection
    assert dict(as_is.dtypes)[ROW_KIND] == "tinyint"
    assert rows(as_is, "id", "name", ROW_KIND) == [(1, "x", 0), (2, "y", 0)]


def test_archives_plan(plan_of, config_error):
    """archive_compress_codec (files packed in zip/tar archives: tests/runtime/test_archives.py) plans in
    BATCH, an unknown one is an error."""
    plan = plan_of("""
source { LocalFile { plugin_output = "t", path = "/in", file_format_type = "json", archive_compress_codec = "zip",
                     schema = { fields { a = int } } } }
sink { Console { } }""")
    assert not [w for w in plan.warnings if w.get("code") == "not-runnable"]
    error = config_error("""
source { LocalFile { plugin_output = "t", path = "/in", file_format_type = "json", archive_compress_codec = "rar",
                     schema = { fields { a = int } } } }
sink { Console { } }""")
    assert "unknown archive_compress_codec 'rar'" in "\n".join(messages(error))


def test_key_placeholders_in_a_path_as_seatunnel_writes_them(run_job, tmp_path):
    """Zeta 2.3.8 ran this job (docs/parity.md): ``orders_id_email/`` for the table with a primary and a unique
    key, ``items_${primary_key}_${unique_key}/`` for the one without (the text stays as written)."""
    job = f"""
        env {{ parallelism = 1 }}
        source {{ FakeSource {{ plugin_output = "t", tables_configs = [
          {{ schema = {{ table = "db1.orders", fields {{ id = bigint, email = string }},
                       primaryKey {{ name = "pk", columnNames = [id] }},
                       constraintKeys = [{{ constraintName = "uk", constraintType = UNIQUE_KEY,
                                           constraintColumns = [{{ columnName = email, sortType = ASC }}] }}] }},
            row.num = 2 }},
          {{ schema = {{ table = "db1.items", fields {{ k = bigint }} }}, row.num = 3 }}] }} }}
        sink {{ LocalFile {{ plugin_input = "t", path = "{tmp_path}/out/${{table_name}}_${{primary_key}}_${{unique_key}}",
                            file_format_type = "json" }} }}
    """
    run_job(job, run_id="keys-1")
    run_job(job, run_id="keys-1")  # a retry of the committed run finds its commits under the same directories
    found = {f.parent.name: len(f.read_text().splitlines()) for f in (tmp_path / "out").rglob("*.json")}
    assert found == {"orders_id_email": 2, "items_${primary_key}_${unique_key}": 3}
