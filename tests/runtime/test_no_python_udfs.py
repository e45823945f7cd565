"""Every built-in transform compiles to native Spark: no Python node in any physical plan.

Each case builds the transform on real data with the options that take its different code
paths (literal and regex Replace, each JsonPath source and destination type and error
way, Sql's rewrites of SeaTunnel functions, unions, joins and split inputs) and looks for
Python execution nodes in the executed plan.
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pytest

from airflow_provider_seatunnel.plan.model import PlanVertex
from airflow_provider_seatunnel.runtime.executor import RunContext
from airflow_provider_seatunnel.spi import get_connector

PYTHON_NODES = ("BatchEvalPython", "ArrowEvalPython", "MapInPandas", "FlatMapGroupsInPandas", "PythonUDF",
                "MapInArrow", "PythonMapInArrow", "AggregateInPandas", "WindowInPandas", "FlatMapCoGroupsInPandas",
                "PythonUDTF", "EvalPython")

DOC = '{"a": {"b": [1, 2], "s": "x", "d": "2024-01-02", "m": {"k": 1}, "r": {"x": 1}, "z": "aGk="}}'


def plan_text(df) -> str:
    """The physical plan Spark would execute (planning only: nothing runs)."""
    return df._jdf.queryExecution().executedPlan().toString()


def python_nodes(df) -> list[str]:
    text = plan_text(df)
    return [node for node in PYTHON_NODES if node in text]


@pytest.fixture(scope="module")
def data(spark):
    return spark.createDataFrame(
        [(1, "Joy Ding", 20, 1.5, DOC, DOC.encode(), [1, 2], {"k": "v"}, (7, "s"), dt.date(2024, 1, 2),
          dt.datetime(2024, 1, 2, 3, 4, 5), Decimal("1.25"), 2)],
        "id int, name string, age int, price double, js string, jb binary, arr array<int>, m map<string,string>, "
        "r struct<x:int,y:string>, d date, ts timestamp_ntz, dec decimal(10,2), __st_row_kind tinyint")


JSON_COLUMNS = [
    {"src_field": "js", "path": "$.a.s", "dest_field": "s"},
    {"src_field": "js", "path": "$.a.b[1]", "dest_field": "i", "dest_type": "int", "column_error_handle_way": "SKIP"},
    {"src_field": "js", "path": "$['a'].d", "dest_field": "dd", "dest_type": "date", "column_error_handle_way": "FAIL"},
    {"src_field": "js", "path": "$.a.b", "dest_field": "ab", "dest_type": "array<int>",
     "column_error_handle_way": "SKIP_ROW"},
    {"src_field": "js", "path": "$.a.m", "dest_field": "am", "dest_type": "map<string, int>"},
    {"src_field": "js", "path": "$.a.r", "dest_field": "ar", "dest_type": "{x = int}"},
    {"src_field": "js", "path": "$.a.z", "dest_field": "az", "dest_type": "bytes"},
    {"src_field": "js", "path": "$.a.s", "dest_field": "flag", "dest_type": "boolean"},
    {"src_field": "jb", "path": "$.a.s", "dest_field": "from_bytes"},
    {"src_field": "arr", "path": "$[0]", "dest_field": "from_array", "dest_type": "bigint"},
    {"src_field": "m", "path": "$.k", "dest_field": "from_map"},
    {"src_field": "r", "path": "$[1]", "dest_field": "from_row"},
]

SQL_QUERIES = [
    "select id+1 as id, id*4 as id2, price/3 as price, price%1.2 as p3, name||'_'||id as name from t",
    "select case when id in (1) and TO_CHAR(id) = '1' then 1 else 0 end as c from t where regexp_like(name, '[A-Z]*') "
    "and name like '%Din_' and name not like 'x%'",
    "select *, id as id_ from t",
    "select DATEADD(d, 1, 'MONTH') a, DATEADD(ts, 2, 'HOUR') b, DATEDIFF(d, ts, 'DAY') c, DATEDIFF(d, ts, 'YEAR') e, "
    "DATE_TRUNC(ts, 'DAY') f, FORMATDATETIME(ts, 'yyyy') g, PARSEDATETIME('2024-01-01', 'yyyy-MM-dd') h, "
    "IS_DATE(name, 'yyyy') i, DAYNAME(d) j, MONTHNAME(d) k, DAY_OF_WEEK(d) l, WEEK(d) m, EXTRACT(DOW FROM d) n, "
    "EXTRACT(MILLISECOND FROM ts) o, EXTRACT(EPOCH FROM ts) p, FROM_UNIXTIME(id, 'yyyy', 'UTC+8') q from t",
    "select CONCAT(name, NULL, id) a, REGEXP_REPLACE(name, 'j', 'J', 'i') b, REGEXP_SUBSTR(name, '(D)(i)', 1, 1, "
    "NULL, 2) c, LTRIM(name, 'J') d, INSTR(name, 'D') e, INSERT(name, 1, 1, 'x') f, HEXTORAW('0053') g, "
    "RAWTOHEX(name) h, TRUNC(price, 1) i, MULTI_IF(id > 1, 'a', 'b') j, CAST(name AS BYTES) k from t",
    "select count(*) as c, max(age) as m from t group by name",
    "select id from t union all select count(*) from t",
    "select a.id, b.name from t a join t b on a.id = b.id",
    "with w as (select * from t) select id, row_number() over (order by id) as rn from w",
]

CASES = [
    ("FieldMapper", {"field_mapper": {"name": "n", "id": "id"}}),
    ("Filter", {"include_fields": ["name", "id"]}),
    ("Filter", {"exclude_fields": ["js"]}),
    ("Copy", {"fields": {"name": "id", "id2": "id"}}),
    ("Copy", {"src_field": "name", "dest_field": "name1"}),
    ("Replace", {"replace_field": "name", "pattern": ".", "replacement": "$"}),
    ("Replace", {"replace_field": "name", "pattern": "(\\w)", "replacement": "<$1>", "is_regex": True,
                 "replace_first": False}),
    ("Replace", {"replace_field": "name", "pattern": "(\\w)", "replacement": "<$1>", "is_regex": True,
                 "replace_first": True}),
    ("Replace", {"replace_field": "age", "pattern": "2", "replacement": "3"}),
    ("Split", {"separator": " ", "split_field": "name", "output_fields": ["name", "last"]}),
    ("Split", {"separator": "\\d", "split_field": "age", "output_fields": ["a1", "a2", "a3"]}),
    ("FilterRowKind", {"include_kinds": ["INSERT", "UPDATE_AFTER"]}),
    ("FilterRowKind", {"exclude_kinds": ["DELETE"]}),
    ("RowKindExtractor", {}),
    ("RowKindExtractor", {"custom_field_name": "op", "transform_type": "FULL"}),
    ("JsonPath", {"columns": JSON_COLUMNS}),
    ("JsonPath", {"columns": JSON_COLUMNS[:2], "row_error_handle_way": "SKIP"}),
    *[("Sql", {"plugin_input": "t", "query": q}) for q in SQL_QUERIES],
]


@pytest.mark.parametrize(("plugin", "config"), CASES, ids=[f"{p}-{i}" for i, (p, _) in enumerate(CASES)])
def test_transform_plans_have_no_python_nodes(spark, data, plugin, config):
    name = "t" if plugin == "Sql" else "in"
    vertex = PlanVertex(id="transform[0]", ref="transform[0]", kind="transform", plugin=plugin, parallelism=1,
                        inputs=(name,), config=config)
    out = get_connector(plugin).apply(RunContext(spark, None, None, "t"), vertex, {name: {"tbl": data}})["tbl"]
    assert python_nodes(out) == [], plan_text(out)


def test_split_pipeline_sql_has_no_python_nodes(spark, data, plan_of):
    plan = plan_of("""
env { job.mode = "BATCH" }
source {
  FakeSource { plugin_output = "a", schema = { fields { id = int, name = string } } }
  FakeSource { plugin_output = "b", schema = { fields { id = int, name = string } } }
}
transform {
  Sql { plugin_input = [a, b], plugin_output = t
        query = "select id, upper(name) as n from a union all select id, lower(name) as n from b" }
}
sink { Console { plugin_input = t } }
""")
    pipeline = plan.pipelines[0]
    sql = next(v for v in pipeline.vertices if v.plugin == "Sql")
    out = get_connector("Sql").apply(RunContext(spark, plan, pipeline, "t"), sql,
                                     {"a": {"tbl": data.select("id", "name", "__st_row_kind")}})["tbl"]
    assert python_nodes(out) == [], plan_text(out)


def test_the_check_finds_a_python_udf(spark, data):
    """The check itself works: a Python UDF shows in the plan (planned, never run)."""
    from pyspark.sql import functions as F

    udf = F.udf(lambda value: value, "string")
    assert "EvalPython" in python_nodes(data.select(udf("name")))  # BatchEvalPython, or ArrowEvalPython
