"""The built-in transforms on real Spark data: every option, edge cases, row kinds, Sql's tables,
split pipelines and SeaTunnel functions, and the compile-time schema checks."""

from __future__ import annotations

import datetime as dt
import json
from decimal import Decimal
from functools import reduce

import pytest
from pyspark.errors import PySparkException

from airflow_provider_seatunnel.connectors.json_path import parse_path, spark_path
from airflow_provider_seatunnel.connectors.replace import java_quote, quote_replacement, replace_first_regex
from airflow_provider_seatunnel.connectors.sql import analyze_query
from airflow_provider_seatunnel.connectors.sql.apply import View, prepare_query
from airflow_provider_seatunnel.plan.model import PlanVertex
from airflow_provider_seatunnel.runtime.executor import RunContext
from airflow_provider_seatunnel.spi import get_connector
from airflow_provider_seatunnel.spi.errors import RuntimeConfigError
from airflow_provider_seatunnel.spi.rows import ROW_KIND

INSERT, UPDATE_BEFORE, UPDATE_AFTER, DELETE = range(4)


def run(spark, plugin, frames, *, plan=None, vertex_id="transform[0]", inputs=None, **config):
    """Apply one transform: ``frames`` is a DataFrame (the input 'in') or {dataset name: DataFrame}."""
    if not isinstance(frames, dict):
        frames = {"in": frames}
    v = PlanVertex(id=vertex_id, ref=vertex_id, kind="transform", plugin=plugin, parallelism=1,
                   inputs=tuple(inputs or frames), config=config)
    out = get_connector(plugin).apply(RunContext(spark, plan, None, "test"), v,
                                      {name: {"tbl": df} for name, df in frames.items()})
    assert list(out) == ["tbl"]
    return out["tbl"]


def rows(df) -> list[dict]:
    return [r.asDict() for r in df.collect()]


def kinds(df) -> list[int]:
    return [r[ROW_KIND] for r in df.collect()]


@pytest.fixture(scope="module")
def people(spark):
    return spark.createDataFrame(
        [(1, "Joy Ding", 20, None, INSERT), (2, "May Ding", 22, "may@x.org", UPDATE_BEFORE),
         (3, None, 21, "kin@x.org", UPDATE_AFTER), (4, "a.b$c", None, None, DELETE)],
        "id int, name string, age int, email string, __st_row_kind tinyint")


@pytest.fixture(scope="module")
def jvm(spark):
    return spark.sparkContext._jvm


# ---------------------------------------------------------------- FieldMapper, Filter, Copy

def test_field_mapper_keeps_only_mapped_fields_renamed_in_config_order(spark, people):
    out = run(spark, "FieldMapper", people, field_mapper={"name": "full_name", "id": "id"})
    assert out.columns == ["full_name", "id", ROW_KIND]
    assert dict(out.dtypes) == {"full_name": "string", "id": "int", ROW_KIND: "tinyint"}
    assert rows(out) == [{"full_name": "Joy Ding", "id": 1, ROW_KIND: 0},
                         {"full_name": "May Ding", "id": 2, ROW_KIND: 1},
                         {"full_name": None, "id": 3, ROW_KIND: 2}, {"full_name": "a.b$c", "id": 4, ROW_KIND: 3}]
    with pytest.raises(RuntimeConfigError, match="The input field 'Name' of 'FieldMapper' transform not found"):
        run(spark, "FieldMapper", people, field_mapper={"Name": "n"})  # field names are case-sensitive


def test_filter_include_fields_fallback_and_exclude(spark, people):
    assert run(spark, "Filter", people, include_fields=["email", "id"]).columns == ["email", "id", ROW_KIND]
    out = run(spark, "Filter", people, fields="age, name")  # the fallback key; a comma-separated string
    assert out.columns == ["age", "name", ROW_KIND]
    assert kinds(out) == [0, 1, 2, 3]
    assert run(spark, "Filter", people, exclude_fields=["name", "email"]).columns == ["id", "age", ROW_KIND]
    with pytest.raises(RuntimeConfigError, match="The input fields 'x,y' of 'Filter' transform not found"):
        run(spark, "Filter", people, exclude_fields=["x", "id", "y"])


def test_copy_overwrites_in_place_appends_in_order_and_keeps_the_source_type(spark, people):
    out = run(spark, "Copy", people, fields={"id_1": "id", "name": "age", "email2": "email", "age": "name"})
    assert out.columns == ["id", "name", "age", "email", "id_1", "email2", ROW_KIND]
    assert dict(out.dtypes)["name"] == "int" and dict(out.dtypes)["age"] == "string"  # copies read the input row
    first = rows(out)[1]
    assert first == {"id": 2, "name": 22, "age": "May Ding", "email": "may@x.org", "id_1": 2, "email2": "may@x.org",
                     ROW_KIND: UPDATE_BEFORE}
    legacy = run(spark, "Copy", people, src_field="name", dest_field="name1")
    assert legacy.columns == ["id", "name", "age", "email", "name1", ROW_KIND]
    assert [r["name1"] for r in rows(legacy)] == ["Joy Ding", "May Ding", None, "a.b$c"]
    assert run(spark, "Copy", people).columns == people.columns  # nothing to copy: rows pass unchanged
    with pytest.raises(RuntimeConfigError, match="The input field 'nope' of 'Copy'"):
        run(spark, "Copy", people, fields={"x": "nope"})


def test_single_input_transforms_apply_to_every_table_of_their_input(spark, people):
    other = people.where("id > 2").select("id", "name", "age", "email", ROW_KIND)
    for plugin, config in [("Filter", {"fields": ["id"]}), ("Sql", {"query": "select id * 2 as id from t"})]:
        vertex = PlanVertex(id="transform[0]", ref="transform[0]", kind="transform", plugin=plugin, parallelism=1,
                            inputs=("in",), config=config)
        out = get_connector(plugin).apply(RunContext(spark, None, None, "t"), vertex,
                                          {"in": {"db.t1": people, "db.t2": other}})
        assert list(out) == ["db.t1", "db.t2"]
        factor = 2 if plugin == "Sql" else 1
        assert [r["id"] for r in rows(out["db.t2"])] == [3 * factor, 4 * factor]
        assert kinds(out["db.t1"]) == [0, 1, 2, 3]


# ---------------------------------------------------------------- Replace

REGEX_CASES = [  # (text, pattern, replacement)
    ("aaa", "a", "b"), ("hello world", "(o)", "[$1]"), ("abcabc", "(b)(c)", "$2$1$0"), ("x", "", "-"), ("", "", "-"),
    ("a.b.c", "\\.", "\\$"), ("line1\nline2", "^line", "L"), ("line1\nline2", "(?m)^line2", "L"),
    ("aXbXc", "(?i)x", "_"), ("abab", "(a)(b)\\1", "<$1>"), ("foo123", "(\\d)(\\d)", "$21"),
    ("abcdefghijk", "(a)(b)(c)(d)(e)(f)(g)(h)(i)(j)(k)", "$11-$10-$1"), ("aab", "(?<x>a)\\k<x>", "${x}!"),
    ("price $5 $6", "\\$(\\d)", "USD$1"), ("ab", "a|b", "X"), ("zab", "(?<=a)b", "X"), ("a\nb", ".", "X"),
    ("a]b", "[]b]", "X"), ("xyzxyz", "\\Qz\\E", "Q"), ("aaa", "a*", "X"), ("baaa", "a+$", "X"),
    ("aba", "((a))", "$2$2"),
]


def test_replace_first_and_all_match_java(spark, jvm):
    """Spark's regexp_replace with the replace-first rewrite gives Java's replaceFirst, case by case."""
    data, want = [], []
    for text, pattern, replacement in REGEX_CASES:
        want.append((jvm.java.util.regex.Pattern.compile(pattern).matcher(text).replaceFirst(replacement),
                     jvm.java.util.regex.Pattern.compile(pattern).matcher(text).replaceAll(replacement)))
        data.append((text, *replace_first_regex(pattern, replacement), pattern, replacement))
    df = spark.createDataFrame(data, "text string, first_re string, first_rep string, re string, rep string")
    got = df.selectExpr("regexp_replace(text, first_re, first_rep)", "regexp_replace(text, re, rep)").collect()
    assert [tuple(r) for r in got] == want


def test_replace_literal_quoting_matches_java_string_replace(spark):
    cases = [("a.b.c", ".", "$1"), ("x\\Ey\\E", "\\E", "\\"), ("abc", "", "-"), ("(a)(a)", "(a)", "$0")]
    df = spark.createDataFrame([(t, java_quote(p), quote_replacement(r)) for t, p, r in cases],
                               "t string, p string, r string")
    got = [r[0] for r in df.selectExpr("regexp_replace(t, p, r)").collect()]
    assert got == [t.replace(p, r) for t, p, r in cases]  # Python's str.replace is Java's String.replace


def test_replace_options_on_real_rows(spark, people):
    literal = run(spark, "Replace", people, replace_field="name", pattern=".", replacement="$1")
    assert [r["name"] for r in rows(literal)] == ["Joy Ding", "May Ding", None, "a$1b$c"]  # null stays null
    assert kinds(literal) == [0, 1, 2, 3] and literal.columns == people.columns
    every = run(spark, "Replace", people, replace_field="name", pattern="(\\w)(\\w+)", replacement="$2$1",
                is_regex=True, replace_first=False)
    assert [r["name"] for r in rows(every)] == ["oyJ ingD", "ayM ingD", None, "a.b$c"]
    first = run(spark, "Replace", people, replace_field="name", pattern="(\\w)(\\w+)", replacement="$2$1",
                is_regex="true", replace_first="true")
    assert [r["name"] for r in rows(first)] == ["oyJ Ding", "ayM Ding", None, "a.b$c"]


def test_replace_on_a_non_string_field_keeps_its_type(spark, people):
    out = run(spark, "Replace", people, replace_field="age", pattern="2", replacement="3")
    assert dict(out.dtypes)["age"] == "int"
    assert [r["age"] for r in rows(out)] == [30, 33, 31, None]
    bad = run(spark, "Replace", people, replace_field="age", pattern="2", replacement="x")
    with pytest.raises(PySparkException, match="is not a valid int for the field 'age'"):
        bad.collect()


def test_replace_bad_options_fail_before_any_data(spark, people):
    with pytest.raises(RuntimeConfigError, match="the option 'replace_first' is required when is_regex = true"):
        run(spark, "Replace", people, replace_field="name", pattern="a", replacement="b", is_regex=True)
    with pytest.raises(RuntimeConfigError, match="not a valid Java regex"):
        run(spark, "Replace", people, replace_field="name", pattern="(a", replacement="b", is_regex=True,
            replace_first=False)
    with pytest.raises(RuntimeConfigError, match="no group 2 in the pattern"):
        run(spark, "Replace", people, replace_field="name", pattern="(a)", replacement="$2", is_regex=True,
            replace_first=True)


# ---------------------------------------------------------------- Split

SPLIT_TEXTS = ["a,b,c,d", "a,,b,", ",a", "", None, "  x  y z", "a1b1c", "abc", "a|b"]


@pytest.mark.parametrize(("separator", "outputs"), [(",", 3), ("\\s+", 2), ("", 2), ("|", 2), ("\\|", 2)])
def test_split_matches_java_split_with_limit(spark, jvm, separator, outputs):
    df = spark.createDataFrame([(i, t, 0) for i, t in enumerate(SPLIT_TEXTS)],
                               "i int, text string, __st_row_kind tinyint")
    names = [f"f{k}" for k in range(outputs)]
    out = run(spark, "Split", df, separator=separator, split_field="text", output_fields=names)
    assert out.columns == ["i", "text", *names, ROW_KIND] and {t for c, t in out.dtypes if c in names} == {"string"}
    pattern = jvm.java.util.regex.Pattern.compile(separator)
    for row in rows(out):
        text = row["text"]
        parts = [] if text is None else list(pattern.split(text, outputs))
        assert [row[n] for n in names] == parts + [None] * (outputs - len(parts)), text


def test_split_overwrites_same_named_fields_and_converts_the_value(spark, people):
    out = run(spark, "Split", people, separator=" ", split_field="name", output_fields=["name", "last"])
    assert out.columns == ["id", "name", "age", "email", "last", ROW_KIND]
    assert [(r["name"], r["last"]) for r in rows(out)] == [("Joy", "Ding"), ("May", "Ding"), (None, None),
                                                           ("a.b$c", None)]
    assert kinds(out) == [0, 1, 2, 3]
    ages = run(spark, "Split", people, separator="1", split_field="age", output_fields=["f1", "f2"])
    assert [(r["f1"], r["f2"]) for r in rows(ages)] == [("20", None), ("22", None), ("2", ""), (None, None)]
    with pytest.raises(RuntimeConfigError, match="not a valid Java regex"):
        run(spark, "Split", people, separator="[", split_field="name", output_fields=["a"])


# ---------------------------------------------------------------- row kinds

def test_filter_row_kind_include_and_exclude_case_insensitively(spark, people):
    assert [r["id"] for r in rows(run(spark, "FilterRowKind", people, include_kinds=["insert", "Delete"]))] == [1, 4]
    out = run(spark, "FilterRowKind", people, exclude_kinds=["DELETE", "update_before"])
    assert [(r["id"], r[ROW_KIND]) for r in rows(out)] == [(1, 0), (3, 2)]
    with pytest.raises(RuntimeConfigError, match="unknown row kind 'UPSERT'"):
        run(spark, "FilterRowKind", people, include_kinds=["UPSERT"])


def test_row_kind_extractor_short_full_and_every_row_becomes_insert(spark, people):
    short = run(spark, "RowKindExtractor", people)
    assert short.columns == ["id", "name", "age", "email", "row_kind", ROW_KIND]
    assert [(r["row_kind"], r[ROW_KIND]) for r in rows(short)] == [("+I", 0), ("-U", 0), ("+U", 0), ("-D", 0)]
    full = run(spark, "RowKindExtractor", people, custom_field_name="op", transform_type="full")
    assert [r["op"] for r in rows(full)] == ["INSERT", "UPDATE_BEFORE", "UPDATE_AFTER", "DELETE"]
    with pytest.raises(RuntimeConfigError, match="field name email already exists"):
        run(spark, "RowKindExtractor", people, custom_field_name="email")


# ---------------------------------------------------------------- JsonPath

DOC = ('{"data": {"c_string": "this is a string", "c_boolean": true, "c_integer": 42, "c_float": 3.14, '
       '"c_decimal": 10.55, "c_date": "2023-10-29", "c_ts": "2023-10-29 16:12:43.459", "c_array": ["item1", "item2"], '
       '"c_map": {"a": 1, "b": 2}, "c_row": {"x": 7, "y": "z"}, "c_bytes": "aGk=", "c_null": null, "odd key": "ok"}}')


@pytest.fixture(scope="module")
def docs(spark):
    return spark.createDataFrame(
        [(1, DOC, INSERT), (2, '{"data": {"c_integer": "oops"}}', DELETE), (3, None, UPDATE_AFTER)],
        "id int, js string, __st_row_kind tinyint")


def test_json_path_converts_to_every_dest_type(spark, docs):
    cols = [("$.data.c_string", "string"), ("$.data.c_boolean", "boolean"), ("$.data.c_integer", "int"),
            ("$.data.c_integer", "bigint"), ("$.data.c_float", "float"), ("$.data.c_float", "double"),
            ("$.data.c_decimal", "decimal(10, 2)"), ("$.data.c_date", "date"), ("$.data.c_ts", "timestamp"),
            ("$.data.c_array", "array<string>"), ("$.data.c_map", "map<string, int>"), ("$.data.c_row", "{x = int}"),
            ("$.data.c_bytes", "bytes"), ("$['data']['odd key']", "string"), ("$.data.c_array[1]", "string"),
            ("$.data.c_row", "string"), ("$.data.c_null", "int")]
    columns = [{"src_field": "js", "path": p, "dest_field": f"c{i}", "dest_type": t} for i, (p, t) in enumerate(cols)]
    out = run(spark, "JsonPath", docs.where("id = 1"), columns=columns)
    assert out.columns == ["id", "js", *[f"c{i}" for i in range(len(cols))], ROW_KIND]
    row = rows(out)[0]
    assert [row[f"c{i}"] for i in range(len(cols))] == [
        "this is a string", True, 42, 42, pytest.approx(3.14), 3.14, Decimal("10.55"), dt.date(2023, 10, 29),
        dt.datetime(2023, 10, 29, 16, 12, 43, 459000), ["item1", "item2"], {"a": 1, "b": 2}, (7,), b"hi", "ok", "item2",
        '{"x":7,"y":"z"}', None]
    assert dict(out.dtypes)["c6"] == "decimal(10,2)" and dict(out.dtypes)["c8"] == "timestamp_ntz"


def test_json_path_reads_bytes_arrays_maps_and_rows(spark):
    df = spark.createDataFrame([(b'{"k": "v"}', [5, 6], {"k": "m"}, (1, "two"), 0)],
                               "b binary, a array<int>, m map<string,string>, r struct<n:int,s:string>, "
                               "__st_row_kind tinyint")
    out = run(spark, "JsonPath", df, columns=[
        {"src_field": "b", "path": "$.k", "dest_field": "from_bytes"},
        {"src_field": "a", "path": "$[1]", "dest_field": "from_array", "dest_type": "int"},
        {"src_field": "m", "path": "$.k", "dest_field": "from_map"},
        {"src_field": "r", "path": "$[1]", "dest_field": "from_row"},  # a row is the JSON array of its values
        {"src_field": "r", "path": "$[0]", "dest_field": "a", "dest_type": "bigint"}])  # overwrites a in place
    assert out.columns == ["b", "a", "m", "r", "from_bytes", "from_array", "from_map", "from_row", ROW_KIND]
    assert rows(out)[0] | {"b": None, "m": None, "r": None} == {
        "b": None, "a": 1, "m": None, "r": None, "from_bytes": "v", "from_array": 6, "from_map": "m",
        "from_row": "two", ROW_KIND: 0}


def test_json_path_error_handling(spark, docs):
    missing = {"src_field": "js", "path": "$.data.nope", "dest_field": "nope"}
    bad_int = {"src_field": "js", "path": "$.data.c_integer", "dest_field": "n", "dest_type": "int"}
    with pytest.raises(PySparkException, match=r"the path \$.data.nope does not exist in the field 'js'"):
        run(spark, "JsonPath", docs, columns=[missing]).collect()
    with pytest.raises(PySparkException, match="JsonPath data conversion failure, src_field=js, dest_field=n"):
        run(spark, "JsonPath", docs, columns=[bad_int]).collect()
    skip = run(spark, "JsonPath", docs, columns=[missing | {"column_error_handle_way": "SKIP"},
                                                 bad_int | {"column_error_handle_way": "skip"}])
    assert [(r["id"], r["nope"], r["n"], r[ROW_KIND]) for r in rows(skip)] == [
        (1, None, 42, 0), (2, None, None, 3), (3, None, None, 2)]  # a null source is no error
    dropped = run(spark, "JsonPath", docs, columns=[bad_int | {"column_error_handle_way": "SKIP_ROW"}])
    assert [r["id"] for r in rows(dropped)] == [1, 3]
    row_skip = run(spark, "JsonPath", docs, row_error_handle_way="SKIP", columns=[bad_int])
    assert [r["id"] for r in rows(row_skip)] == [1, 3]
    # the first column (in config order) whose error fails or drops the row decides
    drop_first = run(spark, "JsonPath", docs, columns=[bad_int | {"column_error_handle_way": "SKIP_ROW"},
                                                       missing | {"column_error_handle_way": "FAIL"}])
    with pytest.raises(PySparkException, match="does not exist"):
        drop_first.collect()  # row 1 has no c_integer error but fails on the missing path
    fail_first = run(spark, "JsonPath", docs.where("id = 2"), columns=[
        missing | {"column_error_handle_way": "SKIP_ROW"}, bad_int])
    assert rows(fail_first) == []  # the SKIP_ROW column comes first: the row is dropped, not failed


def test_json_path_paths():
    assert spark_path(parse_path("$.a.b[0]")) == "$.a.b[0]"
    assert spark_path(parse_path("$['a b'][\"c\"].d")) == "$['a b'].c.d"
    assert parse_path("$") == []
    for path, message in [("$..a", "deep scan"), ("$.a[*]", "wildcards"), ("$.a[?(@.x)]", "filters"),
                          ("$.a[0:2]", "slices"), ("$.a[0,1]", "unions"), ("$.a[-1]", "negative"),
                          ("$.a.length()", "functions"), ("a.b", "starts with \\$")]:
        with pytest.raises(ValueError, match=message):
            parse_path(path)


# ---------------------------------------------------------------- Sql: SeaTunnel's conformance queries

def test_sql_binary_expressions(spark):
    df = spark.createDataFrame([(1, "Joy Ding", 134.22, 0)], "id int, name string, price double, __st_row_kind tinyint")
    out = run(spark, "Sql", {"fake": df}, plugin_input="fake", query=(
        "select id+1 as id, id*4 as id2, price/3 as price, price-34.22 as price2, price%23.12 as price3, "
        "name||'_'||id as name from fake"))
    assert rows(out) == [{"id": 2, "id2": 4, "price": 44.74, "price2": 100.0, "price3": 18.619999999999994,
                          "name": "Joy Ding_1", ROW_KIND: 0}]
    assert dict(out.dtypes) == {"id": "int", "id2": "int", "price": "double", "price2": "double", "price3": "double",
                                "name": "string", ROW_KIND: "tinyint"}


def test_sql_case_when(spark):
    df = spark.createDataFrame(
        [("c_string", True, 117, 15987, 56387395, 7084913402530365000, 1.23, 1.23,
          Decimal("2924137191386439303744.39292216"), dt.date(2023, 4, 22), 0)],
        "c_string string, c_boolean boolean, c_tinyint tinyint, c_smallint smallint, c_int int, c_bigint bigint, "
        "c_float float, c_double double, c_decimal decimal(30,8), c_date date, __st_row_kind tinyint")
    out = run(spark, "Sql", {"fake": df}, plugin_input="fake", query="""
      select case when c_string in ('c_string') then 1 else 0 end     as c_string_1,
       case when c_string not in ('c_string') then 1 else 0 end as c_string_0,
       case when c_tinyint = 117 and TO_CHAR(c_boolean)='true' then 1 else 0 end as c_tinyint_boolean_1,
       case when c_tinyint != 117 and TO_CHAR(c_boolean)='true' then 1 else 0 end as c_tinyint_boolean_0,
       case when c_tinyint != 117 or TO_CHAR(c_boolean)='true' then 1 else 0 end as c_tinyint_boolean_or_1,
       case when c_int > 1 and c_bigint >1 and c_float >1 and c_double > 1 and c_decimal > 1 then 1 else 0 end
         as c_number_1,
       case when c_tinyint <> 117 then 1 else 0 end as c_number_0
       from fake""")
    assert rows(out) == [{"c_string_1": 1, "c_string_0": 0, "c_tinyint_boolean_1": 1, "c_tinyint_boolean_0": 0,
                          "c_tinyint_boolean_or_1": 1, "c_number_1": 1, "c_number_0": 0, ROW_KIND: 0}]


def test_sql_criteria_filter(spark):
    data = [(1, "Joy Ding", 20, None), (2, "May Ding", 22, "may_ding@apache.com"),
            (3, "Kin Dom", 21, "kin_dom@apache.com"), (4, "LeBron Ding", 38, None), (8, "Wang DingCC", 34, None),
            (9, "Zu DingDD", 33, None), (10, "Zhang DingEE", 40, None), (11, "Lin Qiang", 40, None),
            (12, "Yu Liang", 40, None)]
    df = spark.createDataFrame([(*r, UPDATE_AFTER) for r in data],
                               "id int, name string, age int, email string, __st_row_kind tinyint")
    out = run(spark, "Sql", {"fake": df}, plugin_input="fake", query="""
      select id, name, age, email from fake
              where ( id = 1 or id = 4 or id in (8, 9, 10, 11, 12) )
                  and id != 0 and name <> 'Kin Dom'
                  and ( age >= 20 or age < 22 )
                  and regexp_like(name, '[A-Z ]*')
                  and id > 0 and id >= 1 and id in (1, 2, 3, 4, 8, 9, 10, 11, 12)
                  and id not in (5, 6, 7) and name is not null and email is null
                  and id < 500 and id <= 500
                  and ( name like '%Din_' or name like 'Wan_%' or name like '%Yu%' )
                  and name not like '%LeBron%'
                  and name not like 'Wan_%'
                  and name not like '%Lian_'""")
    assert rows(out) == [{"id": 1, "name": "Joy Ding", "age": 20, "email": None, ROW_KIND: UPDATE_AFTER}]


def test_sql_all_columns_and_complex_types(spark):
    df = spark.createDataFrame(
        [(1, "n", 30, dt.time(1, 2, 3), dt.datetime(2024, 1, 2, 3, 4, 5), dt.date(2024, 1, 2), {"k": "v"}, [1, 2],
          Decimal("1.50000000"), ((5,),), DELETE)],
        "id int, name string, age int, c_time time, c_timestamp timestamp_ntz, c_date date, "
        "c_map map<string,string>, c_array array<int>, c_decimal decimal(30,8), c_row struct<c_row:struct<c_int:int>>, "
        "__st_row_kind tinyint")
    star = run(spark, "Sql", {"fake": df}, plugin_input="fake", query="select *, id as id_ from fake")
    assert star.columns == [*df.columns[:-1], "id_", ROW_KIND]
    assert rows(star)[0]["id_"] == 1 and kinds(star) == [DELETE]
    out = run(spark, "Sql", {"fake": df}, plugin_input="fake", query=(
        "select id, regexp_replace(name, '.+', 'b') as name, age+1 as age, pi() as pi, c_time, c_timestamp, c_date, "
        "c_map, c_array, c_decimal, c_row, c_row.c_row.c_int as deep from fake"))
    row = rows(out)[0]
    assert (row["name"], row["age"], row["pi"], row["c_time"], row["deep"], row[ROW_KIND]) == (
        "b", 31, pytest.approx(3.141592653589793), dt.time(1, 2, 3), 5, DELETE)
    assert dict(out.dtypes)["c_timestamp"] == "timestamp_ntz" and dict(out.dtypes)["c_decimal"] == "decimal(30,8)"


# ---------------------------------------------------------------- Sql: row kinds and hidden columns

def test_sql_row_kinds_follow_rows_and_combined_rows_are_inserts(spark, people):
    from pyspark.sql import functions as F

    def q(query):
        return run(spark, "Sql", {"people": people}, plugin_input="people", query=query)

    kept = {  # row-wise queries: each output row keeps its input row's kind
        "select id, upper(name) as n from people where id > 1": [1, 2, 3],
        "select * from this": [0, 1, 2, 3],
        "select p.* from people p": [0, 1, 2, 3],
        "select * from (select id, name from people) t where id < 3": [0, 1],
        "with w as (select * from people) select id from w": [0, 1, 2, 3],
        "select id, row_number() over (order by id) as rn from people": [0, 1, 2, 3],
        "select id, e from people lateral view explode(array(1, 2)) x as e where id = 4": [3, 3],
        "select id from people where id = 1 union all select id from people where id = 4": [0, 3],
        "select id, 0 as c from people where id = 4 union all select 9, count(*) from people": [0, 3],
    }
    combined = {  # rows a query combines are INSERT
        "select count(*) as c from people": [{"c": 4}],
        "select distinct age is null as x from people": [{"x": False}, {"x": True}],
        "select a.id from people a join people b on a.id = b.id and b.id = 2": [{"id": 2}],
        "select age, count(*) as c from people group by age having count(*) > 0 and age = 20": [{"age": 20, "c": 1}],
    }
    outputs = [q(query) for query in [*kept, *combined]]
    for query, out in zip(kept, outputs, strict=False):
        assert out.columns[-1] == ROW_KIND and out.columns.count(ROW_KIND) == 1, query
    as_json = [out.select(F.lit(i).alias("q"), F.to_json(F.struct(*[F.col(c) for c in out.columns])).alias("row"))
               for i, out in enumerate(outputs)]
    got: dict[int, list[dict]] = {}
    for r in reduce(lambda x, y: x.unionByName(y), as_json).collect():  # one Spark job for every query
        got.setdefault(r["q"], []).append(json.loads(r["row"]))
    for i, (query, expected) in enumerate(kept.items()):
        assert sorted(r[ROW_KIND] for r in got[i]) == expected, query
    for i, (query, expected) in enumerate(combined.items(), start=len(kept)):
        assert sorted(got[i], key=str) == sorted([r | {ROW_KIND: INSERT} for r in expected], key=str), query
    assert q("select * from people").columns == people.columns  # the star hides the kind, which stays hidden
    assert q("select * except (email) from people").columns == ["id", "name", "age", ROW_KIND]


def test_sql_tables_this_and_any_name_for_one_input(spark, people):
    for query in ("select id from this", "select id from dual", "select d.id from whatever d"):
        assert [r["id"] for r in rows(run(spark, "Sql", {"people": people}, plugin_input="people", query=query))] == \
            [1, 2, 3, 4], query
    cte = run(spark, "Sql", {"people": people}, plugin_input="people",
              query="with people as (select 42 as id) select id from people")
    assert [r["id"] for r in rows(cte)] == [42]  # a CTE named like the input shadows it, as in SQL
    with pytest.raises(RuntimeConfigError, match=r"`nope` cannot be resolved. Did you mean .*`email`") as info:
        run(spark, "Sql", {"people": people}, plugin_input="people", query="select nope from people")
    assert "__st_" not in str(info.value)  # neither the view names nor the hidden row-kind column show


def test_two_sql_vertices_in_one_session_keep_their_own_tables(spark, people):
    other = people.selectExpr("id * 10 as id", "name", "age", "email", ROW_KIND)
    a = run(spark, "Sql", {"fake": people}, plugin_input="fake", query="select id from fake")
    b = run(spark, "Sql", {"fake": other}, plugin_input="fake", query="select id from fake")  # same vertex id
    assert sorted(r["id"] for r in rows(a.unionByName(b))) == [1, 2, 3, 4, 10, 20, 30, 40]
    assert not [t for t in spark.catalog.listTables() if t.name.startswith("__st_")]  # views are dropped


MULTI = """
env { job.mode = "BATCH" }
source {
  FakeSource { plugin_output = "a", schema = { fields { id = int, name = string } }
               rows = [{ kind = INSERT, fields = [1, "a1"] }, { kind = DELETE, fields = [2, "a2"] }] }
  FakeSource { plugin_output = "b", schema = { fields { id = int, name = string } }
               rows = [{ kind = UPDATE_AFTER, fields = [3, "b3"] }] }
}
transform {
  Sql { plugin_input = ["a", "b"], plugin_output = "t",
        query = "select id, upper(name) as name from a union all select id, upper(name) as name from b" }
}
sink { Console { plugin_input = "t" } }
"""


def test_multi_input_sql_in_a_split_pipeline_yields_its_own_share(spark, plan_of):
    plan = plan_of(MULTI)
    assert len(plan.pipelines) == 2
    a = spark.createDataFrame([(1, "a1", INSERT), (2, "a2", DELETE)], "id int, name string, __st_row_kind tinyint")
    b = spark.createDataFrame([(3, "b3", UPDATE_AFTER)], "id int, name string, __st_row_kind tinyint")
    shares = []
    for pipeline, frames in zip(plan.pipelines, ({"a": a}, {"b": b}), strict=True):
        sql = next(v for v in pipeline.vertices if v.plugin == "Sql")
        assert sql.inputs == tuple(frames)  # the pipeline sees one of the two inputs
        out = get_connector("Sql").apply(RunContext(spark, plan, pipeline, "t"), sql,
                                         {n: {"tbl": df} for n, df in frames.items()})["tbl"]
        shares.append(sorted((r["id"], r["name"], r[ROW_KIND]) for r in rows(out)))
    assert shares == [[(1, "A1", INSERT), (2, "A2", DELETE)], [(3, "B3", UPDATE_AFTER)]]
    # a one-table row-wise query runs every input's rows (SeaTunnel ignores the FROM name): b's pipeline reads b
    plan = plan_of(MULTI.replace("select id, upper(name) as name from a union all select id, upper(name) as name "
                                 "from b", "select id * 10 as id from a"))
    pipeline = plan.pipelines[1]
    sql = next(v for v in pipeline.vertices if v.plugin == "Sql")
    out = get_connector("Sql").apply(RunContext(spark, plan, pipeline, "t"), sql, {"b": {"tbl": b}})["tbl"]
    assert rows(out) == [{"id": 30, ROW_KIND: UPDATE_AFTER}]


def test_multi_input_sql_end_to_end(run_job):
    job = MULTI.replace("sink { Console { plugin_input = \"t\" } }", """
sink { Assert { plugin_input = "t", rules {
  row_rules = [{ rule_type = MIN_ROW, rule_value = 1 }, { rule_type = MAX_ROW, rule_value = 2 }]
  field_rules = [{ field_name = name, field_type = string, field_value = [{ rule_type = NOT_NULL },
                   { rule_type = MAX_LENGTH, rule_value = 2 }] }] } } }""")
    metrics = run_job(job)
    assert sorted(m["write_count"] for m in metrics) == [1, 2]


def test_joining_sql_reads_every_input_in_one_pipeline(spark, plan_of):
    plan = plan_of(MULTI.replace("select id, upper(name) as name from a union all select id, upper(name) as name "
                                 "from b", "select a.id, b.name from a join b on a.id + 2 = b.id"))
    assert len(plan.pipelines) == 1
    sql = next(v for v in plan.pipelines[0].vertices if v.plugin == "Sql")
    a = spark.createDataFrame([(1, "a1", DELETE)], "id int, name string, __st_row_kind tinyint")
    b = spark.createDataFrame([(3, "b3", DELETE)], "id int, name string, __st_row_kind tinyint")
    out = get_connector("Sql").apply(RunContext(spark, plan, plan.pipelines[0], "t"), sql,
                                     {"a": {"tbl": a}, "b": {"tbl": b}})["tbl"]
    assert rows(out) == [{"id": 1, "name": "b3", ROW_KIND: INSERT}]
    with pytest.raises(RuntimeConfigError, match="the query reads the table 'c', which is not an input"):
        run(spark, "Sql", {"a": a, "b": b}, plugin_input=["a", "b"],
            query="select id from a union all select id from c")


# ---------------------------------------------------------------- Sql: SeaTunnel functions

def test_sql_seatunnel_functions(spark, jvm):
    df = spark.createDataFrame(
        [(dt.date(2021, 1, 1), dt.datetime(2023, 4, 22, 23, 20, 58, 123000), 1.27, -1.27, "Hello", None, b"hi", 0)],
        "d date, ts timestamp_ntz, x double, y double, s string, n string, bin binary, __st_row_kind tinyint")
    exprs = {
        "DATEADD(d, 1, 'MONTH')": dt.date(2021, 2, 1),
        "DATEADD(d, 3, 'HOUR')": dt.date(2021, 1, 1),  # SeaTunnel leaves a DATE as it is
        "TIMESTAMPADD(ts, -2, 'week')": dt.datetime(2023, 4, 8, 23, 20, 58, 123000),
        "DATEADD(ts, 1500, 'MILLISECOND')": dt.datetime(2023, 4, 22, 23, 20, 59, 623000),
        "DATEADD(d, 2)": dt.date(2021, 1, 3),
        "DATEDIFF(d, ts, 'DAY')": 841,
        "DATEDIFF(d, ts, 'MONTH')": 3,  # the months part of the period (2 years 3 months)
        "DATEDIFF(ts, d, 'YEAR')": -2,
        "DATEDIFF(d, ts, 'HOUR')": 841 * 24 + 23,
        "DATEDIFF(ts, d)": -841,  # SeaTunnel: the second minus the first, in days
        "DATE_TRUNC(ts, 'HOUR')": dt.datetime(2023, 4, 22, 23, 0),
        "FORMATDATETIME(ts, 'yyyy/MM/dd HH:mm:ss.SSS')": "2023/04/22 23:20:58.123",
        "TO_CHAR(ts, 'yyyy-MM-dd')": "2023-04-22",
        "TO_CHAR(x)": "1.27",
        "TO_CHAR(12, 'yyyy')": "12",
        "PARSEDATETIME('2021-04-08 13:34:45', 'yyyy-MM-dd HH:mm:ss')": dt.datetime(2021, 4, 8, 13, 34, 45),
        "TO_DATE('2021-04-08', 'yyyy-MM-dd')": dt.date(2021, 4, 8),
        "IS_DATE('2021-04-08', 'yyyy-MM-dd')": True,
        "IS_DATE('2021-13-08', 'yyyy-MM-dd')": False,
        "IS_DATE(n, 'yyyy')": True,  # SeaTunnel: NULL parses
        "DAYNAME(d)": "Friday",
        "MONTHNAME(ts)": "April",
        "DAY_OF_WEEK(d)": 5,
        "DAY_OF_MONTH(ts)": 22,
        "DAY_OF_YEAR(ts)": 112,
        "WEEK(d)": 1,
        "WEEK(ts)": 17,
        "EXTRACT(DOW FROM d)": 5,
        "EXTRACT(ISODOW FROM d)": 5,
        "EXTRACT(WEEK FROM d)": 0,
        "EXTRACT(SECOND FROM ts)": 58,
        "EXTRACT(MILLISECOND FROM ts)": 123,
        "EXTRACT(EPOCH FROM d)": 1609459200,
        "EXTRACT(CENTURY FROM d)": 21,
        "EXTRACT(DECADE FROM d)": 202,
        "EXTRACT(ISOYEAR FROM d)": 2020,
        "EXTRACT(YEAR FROM ts)": 2023,
        "FROM_UNIXTIME(0, 'yyyy-MM-dd HH:mm', 'UTC+8')": "1970-01-01 08:00",
        "CONCAT(n, 'a', NULL, 1)": "a1",
        "CONCAT(n, NULL)": "",
        "s || n || '!'": "Hello!",
        "REGEXP_REPLACE('Hello WWWWorld', 'w+', 'W', 'i')": "Hello World",
        "REGEXP_REPLACE(s, 'l', 'L')": "HeLLo",
        "REGEXP_LIKE(s, '^h', 'i')": True,
        "REGEXP_LIKE(s, '^h')": False,
        "REGEXP_SUBSTR('2020-10-01', '\\d{4}')": "2020",
        "REGEXP_SUBSTR('2020-10-01', '(\\d{4})-(\\d{2})-(\\d{2})', 1, 1, NULL, 2)": "10",
        "REGEXP_SUBSTR('a1b22c333', '[0-9]+', 1, 3, NULL, 0)": "333",
        "LTRIM('xxHixx', 'x')": "Hixx",
        "RTRIM('xxHixx', 'x')": "xxHi",
        "TRIM('  Hi  ')": "Hi",
        "INSTR(s, 'l')": 3,
        "INSTR(n, 'l')": 0,
        "INSERT(s, 1, 1, 'J')": "Jello",
        "INSERT(s, 9, 1, 'J')": "Hello",
        "HEXTORAW('0053')": "S",
        "RAWTOHEX('S')": "0053",
        "RAWTOHEX(bin)": "6869",
        "TRUNC(x, 1)": 1.2,
        "TRUNCATE(y, 1)": -1.2,
        "MULTI_IF(x > 2, 'a', x > 1, 'b', 'c')": "b",
        "IFNULL(n, 'z')": "z",
        "UCASE(s)": "HELLO",
        "LCASE(s)": "hello",
        "NULLIF(s, 'Hello')": None,
        "LOCATE('l', s, 4)": 4,
        "LPAD(s, 7, '*')": "**Hello",
        "SUBSTRING(s, -3)": "llo",
        "CAST('2023-01-02 03:04:05' AS TIMESTAMP)": dt.datetime(2023, 1, 2, 3, 4, 5),
        "CAST('2023-01-02 03:04:05' AS DATETIME)": dt.datetime(2023, 1, 2, 3, 4, 5),
        "CAST('hi' AS BYTES)": b"hi",
        "CAST(x AS LONG)": 1,
        "ROUND(x, 1)": 1.3,
        "MOD(7, 3)": 1,
        "SOUNDEX('Robert')": "R163",
    }
    query = "select " + ", ".join(f"{e} as c{i}" for i, e in enumerate(exprs)) + " from t"
    out = run(spark, "Sql", {"t": df}, plugin_input="t", query=query)
    got = rows(out)[0]
    for i, (expr, want) in enumerate(exprs.items()):
        assert got[f"c{i}"] == (pytest.approx(want) if isinstance(want, float) else want), expr
    assert dict(out.dtypes)["c0"] == "date" and dict(out.dtypes)["c1"] == "date" and dict(out.dtypes)["c2"] == "timestamp_ntz"
    # WEEK is java.time's WeekFields.ISO.weekOfYear() (week 0 before the first 4-day week) plus one
    days = [dt.date(2020, 12, 31) + dt.timedelta(days=k) for k in range(0, 400, 3)]
    week = spark.createDataFrame([(d, 0) for d in days], "d date, __st_row_kind tinyint")
    weeks = rows(run(spark, "Sql", {"t": week}, plugin_input="t", query="select d, WEEK(d) as w from t"))
    iso = jvm.java.time.temporal.WeekFields.ISO.weekOfYear()
    assert [r["w"] for r in weeks] == [jvm.java.time.LocalDate.of(d.year, d.month, d.day).get(iso) + 1 for d in days]


def test_sql_function_misuse_is_a_config_error(spark, people):
    with pytest.raises(RuntimeConfigError, match="DATEADD: unsupported unit 'FORTNIGHT'"):
        run(spark, "Sql", {"p": people}, plugin_input="p", query="select DATEADD(age, 1, 'FORTNIGHT') from p")
    with pytest.raises(RuntimeConfigError, match="unknown regular expression flag 'g'"):
        run(spark, "Sql", {"p": people}, plugin_input="p", query="select REGEXP_LIKE(name, 'a', 'g') from p")


def test_prepare_query_rewrites_tables_and_keeps_ctes():
    views = {"a": View("__st_x_a"), "this": View("__st_x_this")}
    sql, carried = prepare_query("with c as (select * from a) select c.id from c join a on c.id = a.id", views, None)
    assert "FROM `__st_x_a` AS a" in sql and "FROM c JOIN" in sql and not carried
    assert analyze_query("select FORMATDATETIME(ts, 'yyyy'), DATEADD(ts, 1, 'DAY') from t").tables == ("t",)


# ---------------------------------------------------------------- compile time

SCHEMA_JOB = """
env { job.mode = "BATCH" }
source {
  FakeSource {
    plugin_output = "fake"
    schema = { fields { id = int, name = string, age = int, js = string, price = double, ts = timestamp,
                        r = { x = int } } }
  }
}
transform {
%s
}
sink { Console { plugin_input = [%s] } }
"""


def job_with(*transforms: str) -> str:
    blocks = [t.replace("{", f'{{ plugin_input = "fake", plugin_output = "t{i}",', 1) for i, t in enumerate(transforms)]
    return SCHEMA_JOB % ("\n".join(blocks), ", ".join(f'"t{i}"' for i in range(len(transforms))))


def test_output_schemas_are_inferred(plan_of):
    plan = plan_of(job_with(
        'FieldMapper { field_mapper { age = years, id = id } }',
        'Filter { exclude_fields = [js, r] }',
        'Copy { fields { name = "id", id2 = "id" } }',
        'Replace { replace_field = name, pattern = "a", replacement = "b" }',
        'Split { separator = " ", split_field = name, output_fields = [first, age] }',
        'RowKindExtractor { transform_type = FULL }',
        'JsonPath { columns = [{ src_field = js, path = "$.a", dest_field = a, dest_type = "array<int>" }] }',
        'FilterRowKind { include_kinds = [INSERT] }',
        'Sql { query = "select id, upper(name) as n, age + 1 as a1, price / 2 as half, cast(id as string) as s, '
        'ts, r.x as rx, case when id > 1 then 1 else 0 end as c from fake" }',
        'Sql { query = "select *, id + 1 from fake" }',
        'Sql { query = "select ID, `Name`, R.X as x from fake" }',  # Spark resolves names case-insensitively
    ))
    schemas = {v.output: v.schema for v in plan.pipelines[0].vertices if v.kind == "transform"}
    schemas.update({v.output: v.schema for p in plan.pipelines for v in p.vertices if v.kind == "transform"})
    base = {"id": "int", "name": "string", "age": "int", "js": "string", "price": "double", "ts": "timestamp",
            "r": {"x": "int"}}
    assert schemas["t0"] == {"years": "int", "id": "int"}
    assert schemas["t1"] == {"id": "int", "name": "string", "age": "int", "price": "double", "ts": "timestamp"}
    assert schemas["t2"] == base | {"name": "int", "id2": "int"}
    assert schemas["t3"] == base
    assert schemas["t4"] == base | {"age": "string", "first": "string"}
    assert list(schemas["t4"]) == [*base, "first"]
    assert schemas["t5"] == base | {"row_kind": "string"}
    assert schemas["t6"] == base | {"a": "array<int>"}
    assert schemas["t7"] == base
    assert schemas["t8"] == {"id": "int", "n": "string", "a1": "int", "half": "double", "s": "string",
                             "ts": "timestamp", "rx": "int", "c": "int"}
    assert schemas["t9"] is None  # Spark names an unaliased expression by its text: not inferred
    assert schemas["t10"] == {"ID": "int", "Name": "string", "x": "int"}


def test_fields_that_do_not_exist_are_config_errors_with_their_line(config_error):
    error = config_error(job_with(
        'FieldMapper { field_mapper { nope = x } }',
        'Filter { fields = [name, nope, gone] }',
        'Copy { fields { a = "missing" } }',
        'Replace { replace_field = Name, pattern = "a", replacement = "b" }',
        'Split { separator = " ", split_field = nope, output_fields = [a] }',
        'RowKindExtractor { custom_field_name = name }',
        'JsonPath { columns = [{ src_field = nope, path = "$.a", dest_field = a }] }',
        'JsonPath { columns = [{ src_field = id, path = "$.a", dest_field = a }] }',
        'Sql { query = "select id, nme from fake" }',
        'Sql { query = "select id from fake where f.x = 1" }',
        'Sql { query = "select DATEADD(ts, 1, \'FORTNIGHT\') as x from fake" }',
    ))
    messages = {p.plugin: p for p in error.problems}
    assert messages["transform[0] FieldMapper"].message == \
        "The input field 'nope' of 'FieldMapper' transform not found in upstream schema"
    assert messages["transform[0] FieldMapper"].key == "field_mapper"
    assert messages["transform[1] Filter"].message == \
        "The input fields 'nope,gone' of 'Filter' transform not found in upstream schema"
    assert messages["transform[2] Copy"].message.startswith("The input field 'missing' of 'Copy'")
    assert "did you mean 'name'?" in messages["transform[3] Replace"].hint
    assert messages["transform[4] Split"].key == "split_field"
    assert messages["transform[5] RowKindExtractor"].message == "field name name already exists"
    assert messages["transform[6] JsonPath"].message.startswith("The input field 'nope' of 'JsonPath'")
    assert "JsonPath reads string, bytes, array, map, row" in messages["transform[7] JsonPath"].message
    sql = messages["transform[8] Sql"]
    assert sql.message == "the query references the column 'nme', which does not exist in its input"
    assert sql.key == "query" and sql.line == 19 and "name" in sql.hint
    assert "transform[9] Sql" in messages
    assert messages["transform[10] Sql"].message.startswith("DATEADD: unsupported unit 'FORTNIGHT'")
    assert all(p.line is not None for p in error.problems)


def test_option_checks(config_error):
    error = config_error(job_with(
        'Replace { replace_field = name, pattern = "(a)", replacement = "b", is_regex = true }',
        'Replace { replace_field = name, pattern = "(a)", replacement = "$2", is_regex = true, replace_first = false }',
        'FilterRowKind { include_kinds = [INSERT], exclude_kinds = [DELETE] }',
        'FilterRowKind { include_kinds = [UPSERT] }',
        'RowKindExtractor { transform_type = LONG }',
        'JsonPath { row_error_handle_way = SKIP_ROW, columns = [{ src_field = js, path = "$..a", dest_field = a, '
        'dest_type = "decimal", column_error_handle_way = IGNORE }, { path = "$.a" }] }',
        'Copy { src_field = name }',
        'FieldMapper { field_mapper = [a] }',
        'Split { separator = ",", split_field = name, output_fields = [a, a] }',
    ))
    text = "\n".join(p.format() for p in error.problems)
    for expected in ["the option 'replace_first' is required when is_regex = true", "no group 2 in the pattern",
                     "mutually exclusive", "unknown row kind 'UPSERT'", "unknown transform_type 'LONG'",
                     "row_error_handle_way must be FAIL or SKIP", "deep scan (..) is not supported",
                     "decimal type should assign precision and scale", "column_error_handle_way must be one of",
                     "columns[1].src_field must not be empty", "src_field and dest_field go together",
                     "field_mapper must be a map", "output_fields names a field twice"]:
        assert expected in text, expected


def test_seatunnel_sql_forms_pass_the_syntax_check(plan_of):
    plan = plan_of(job_with(
        'Sql { query = "select CAST(name AS BYTES) as b, FROM_UNIXTIME(id, \'yyyy\', \'UTC+8\') as u, '
        'TRIM(name, \'x\') as t, DATEDIFF(ts, ts, \'DAY\') as d, INSERT(name, 1, 1, \'x\') as i from fake" }'))
    sql = next(v for v in plan.pipelines[0].vertices if v.plugin == "Sql")
    assert sql.schema is not None and sql.schema["b"] == "bytes" and sql.schema["d"] == "bigint"
