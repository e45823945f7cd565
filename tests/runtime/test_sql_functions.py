"""SeaTunnel's SQL functions on Spark: values, null behaviour and result types, per function.

Every case is one expression of SeaTunnel's function reference, checked on a row of values and
on a row of nulls, and its result type both in the compiled schema (no Spark) and in the Spark
DataFrame the Sql transform returns. All cases of a group run in one query; the module shares
the session's one SparkSession. Expected values are SeaTunnel's (its e2e configs' and its
functions' documented behaviour); where the JVM can say (java.util.Random, javax.crypto's DES),
the test asks it.
"""

from __future__ import annotations

import base64
import datetime as dt
import math
import textwrap
from decimal import Decimal

import pytest
from pyspark.errors import PySparkException

from airflow_provider_seatunnel.config.errors import ConfigError
from airflow_provider_seatunnel.plan import compile_job
from airflow_provider_seatunnel.plan.model import PlanVertex
from airflow_provider_seatunnel.runtime.executor import RunContext
from airflow_provider_seatunnel.spi import get_connector
from airflow_provider_seatunnel.spi.errors import RuntimeConfigError

#: the input: name, SeaTunnel type, Spark type, value on the first row (the second row is all nulls)
COLUMNS = [
    ("i", "int", "int", 13),
    ("b", "bigint", "bigint", 1687747869032),
    ("x", "double", "double", 13.2),
    ("n", "double", "double", -120.72),
    ("dec", "decimal(10, 4)", "decimal(10,4)", Decimal("120.7212")),
    ("s", "string", "string", "Joy Ding"),
    ("t", "string", "string", "*Joy_Ding@s.com*"),
    ("num", "string", "string", "12.4"),
    ("d", "date", "date", dt.date(2021, 4, 8)),
    ("ts", "timestamp", "timestamp_ntz", dt.datetime(2021, 4, 8, 13, 34, 45, 235000)),
    ("ts2", "timestamp", "timestamp_ntz", dt.datetime(2022, 1, 23, 12, 34, 56)),
    ("ymd", "int", "int", 20230625),
    ("hms", "int", "int", 235109),
    ("bin", "bytes", "binary", b"hi"),
]

#: SeaTunnel type names as the DataFrame shows them
SPARK_TYPES = {"string": "string", "int": "int", "bigint": "bigint", "double": "double", "boolean": "boolean",
               "date": "date", "timestamp": "timestamp_ntz", "time": "time(6)", "bytes": "binary",
               "tinyint": "tinyint", "float": "float"}


def spark_type(seatunnel: str) -> str:
    return SPARK_TYPES.get(seatunnel, seatunnel.replace(" ", ""))


#: (expression, value on the first row, value on the null row, SeaTunnel's result type)
STRING_CASES = [
    ("ASCII(s)", 74, None, "int"),
    ("BIT_LENGTH(t)", 128, None, "bigint"),
    ("CHAR_LENGTH(s)", 8, None, "bigint"),
    ("LENGTH(s)", 8, None, "bigint"),
    ("OCTET_LENGTH('é')", 2, 2, "bigint"),
    ("CHAR(98)", "b", "b", "string"),
    ("CHR(321)", "\u0141", "\u0141", "string"),
    ("CONCAT(s, i, '!')", "Joy Ding13!", "!", "string"),
    ("CONCAT(s, ts)", "Joy Ding2021-04-08T13:34:45.235", "", "string"),
    ("s || ' ' || ts2", "Joy Ding 2022-01-23T12:34:56", " ", "string"),
    ("CONCAT_WS(',', s, NULL, 'x')", "Joy Ding,x", "x", "string"),
    ("CONCAT_WS(NULL, 'a', 'b')", "ab", "ab", "string"),
    ("HEXTORAW('0037')", "7", "7", "string"),
    ("RAWTOHEX('7')", "0037", "0037", "string"),
    ("RAWTOHEX(bin)", "6869", None, "string"),
    ("INSERT(s, 2, 2, '**')", "J** Ding", "**", "string"),
    ("INSERT(s, 20, 1, '*')", "Joy Ding", "*", "string"),
    ("LOWER(s)", "joy ding", None, "string"),
    ("LCASE(s)", "joy ding", None, "string"),
    ("UPPER(s)", "JOY DING", None, "string"),
    ("UCASE(s)", "JOY DING", None, "string"),
    ("LEFT(s, 3)", "Joy", None, "string"),
    ("RIGHT(s, 4)", "Ding", None, "string"),
    ("LOCATE('i', s)", 6, 0, "int"),
    ("LOCATE('o', 'foo boo', 4)", 6, 6, "int"),
    ("LOCATE('o', 'foo boo', -1)", 7, 7, "int"),
    ("LOCATE('o', 'foo boo', -2)", 6, 6, "int"),
    ("INSTR(s, 'D')", 5, 0, "int"),
    ("POSITION('D', s)", 5, 0, "int"),
    ("LPAD(s, 10, '*+')", "**Joy Ding", None, "string"),
    ("RPAD(s, 10, '*')", "Joy Ding**", None, "string"),
    ("LPAD(s, 3)", "Joy", None, "string"),
    ("RPAD(s, 10, '')", "Joy Ding  ", None, "string"),
    ("LTRIM(t, '*')", "Joy_Ding@s.com*", None, "string"),
    ("RTRIM(t, '*')", "*Joy_Ding@s.com", None, "string"),
    ("TRIM(t, '*J')", "Joy_Ding@s.com", None, "string"),
    ("TRIM('  Hi  ')", "Hi", "Hi", "string"),
    ("REGEXP_REPLACE('Joy_WWWDing', 'w+', 'W', 'i')", "Joy_WDing", "Joy_WDing", "string"),
    ("REGEXP_REPLACE(s, 'o', '0')", "J0y Ding", None, "string"),
    ("REGEXP_LIKE(s, '[A-Z ]*', 'i')", True, None, "boolean"),
    ("REGEXP_LIKE(s, '^j')", False, None, "boolean"),
    ("REGEXP_SUBSTR('2020-10-01', '\\d{4}')", "2020", "2020", "string"),
    ("REGEXP_SUBSTR('2020-10-01', '(\\d{4})-(\\d{2})-(\\d{2})', 1, 1, NULL, 2)", "10", "10", "string"),
    ("REGEXP_SUBSTR('a1b22c333', '[0-9]+', 1, 3, NULL, 0)", "333", "333", "string"),
    ("REGEXP_SUBSTR('a1b22', '[0-9]+', 1)", None, None, "string"),  # SeaTunnel: 3 to 5 arguments give NULL
    ("REPEAT(s || ' ', 3)", "Joy Ding Joy Ding Joy Ding ", " " * 3, "string"),
    ("REPLACE(s, ' ', '_')", "Joy_Ding", None, "string"),
    ("REPLACE(s, ' ')", "JoyDing", None, "string"),
    ("REPLACE(s, ' ', NULL)", "JoyDing", None, "string"),
    ("SOUNDEX(s)", "J352", None, "string"),
    ("SOUNDEX('Robert')", "R163", "R163", "string"),
    ("SOUNDEX('Tymczak')", "T522", "T522", "string"),
    ("SOUNDEX('12 Ab')", "A100", "A100", "string"),
    ("SOUNDEX('')", "0000", "0000", "string"),
    ("s || SPACE(3)", "Joy Ding   ", "   ", "string"),
    ("SUBSTRING(s, 1, 3)", "Joy", None, "string"),
    ("SUBSTR(s, -4)", "Ding", None, "string"),
    ("SUBSTRING(s, 0, 2)", "Jo", None, "string"),
    ("SUBSTRING(s, 20)", None, None, "string"),
    ("SUBSTRING(s, 3, 0)", None, None, "string"),
    ("TO_CHAR(i)", "13", None, "string"),
    ("TO_CHAR(ts, 'yyyy-MM-dd')", "2021-04-08", None, "string"),
    ("TRANSLATE(s, 'ing', 'ING')", "Joy DING", None, "string"),
    ("TRANSLATE(s, 'ing', NULL)", "Joy D", None, "string"),
]

NUMERIC_CASES = [
    ("ABS(-10.3)", 10.3, 10.3, "double"),
    ("ABS(n)", 120.72, None, "double"),
    ("ABS(i)", 13, None, "int"),
    ("ABS(dec)", Decimal("120.7212"), None, "decimal(10, 4)"),
    ("ACOS(1)", 0.0, 0.0, "double"),
    ("ASIN(0)", 0.0, 0.0, "double"),
    ("ATAN(0)", 0.0, 0.0, "double"),
    ("ATAN2(1, 1)", math.atan2(1, 1), math.atan2(1, 1), "double"),
    ("COS(0)", 1.0, 1.0, "double"),
    ("COSH(0)", 1.0, 1.0, "double"),
    ("COT(1)", 1 / math.tan(1), 1 / math.tan(1), "double"),
    ("SIN(0)", 0.0, 0.0, "double"),
    ("SINH(0)", 0.0, 0.0, "double"),
    ("TAN(3.1415926 / 4)", 0.9999999732051038, 0.9999999732051038, "double"),
    ("TANH(0)", 0.0, 0.0, "double"),
    ("MOD(i, 5)", 3, None, "int"),
    ("MOD(i, 5.4)", 2.2, None, "double"),
    ("MOD(-7, 3)", -1, -1, "int"),
    ("MOD(b, 1000)", 32, None, "int"),
    ("CEIL(x)", 14, None, "int"),
    ("CEILING(n)", -120, None, "int"),
    ("CEIL(dec)", 121, None, "int"),
    ("FLOOR(x)", 13, None, "int"),
    ("FLOOR(n)", -121, None, "int"),
    ("EXP(2)", 7.38905609893065, 7.38905609893065, "double"),
    ("LN(x)", 2.580216829592325, None, "double"),
    ("LOG(10, x)", 1.1205739312058498, None, "double"),
    ("LOG(2, 8)", 3.0, 3.0, "double"),
    ("LOG10(1324.252)", 3.1219706375172507, 3.1219706375172507, "double"),
    ("RADIANS(180)", math.pi, math.pi, "double"),
    ("SQRT(10.24)", 3.2, 3.2, "double"),
    ("PI()", math.pi, math.pi, "double"),
    ("POWER(x, 2)", 174.23999999999998, None, "double"),
    ("ROUND(120.72124, 2)", 120.72, 120.72, "double"),
    ("ROUND(dec, 2)", Decimal("120.7200"), None, "decimal(10, 4)"),
    ("ROUND(2.5)", 3.0, 3.0, "double"),
    ("ROUND(i, -1)", 10, None, "int"),
    ("SIGN(n)", -1, 0, "int"),
    ("SIGN(x)", 1, 0, "int"),
    ("SIGN(0)", 0, 0, "int"),
    ("TRUNC(120.72124, 2)", 120.72, 120.72, "double"),
    ("TRUNCATE(n, 1)", -120.7, None, "double"),
    ("TRUNC(i)", 13.0, None, "double"),
]

DATETIME_CASES = [
    ("DATEADD(ts2, 1)", dt.datetime(2022, 1, 24, 12, 34, 56), None, "timestamp"),
    ("DATEADD(ts2, 40, 'DAY')", dt.datetime(2022, 3, 4, 12, 34, 56), None, "timestamp"),
    ("DATEADD(ts2, 2, 'YEAR')", dt.datetime(2024, 1, 23, 12, 34, 56), None, "timestamp"),
    ("DATEADD(ts2, 13, 'HOUR')", dt.datetime(2022, 1, 24, 1, 34, 56), None, "timestamp"),
    ("TIMESTAMPADD(ts2, 1500, 'MILLISECOND')", dt.datetime(2022, 1, 23, 12, 34, 57, 500000), None, "timestamp"),
    ("DATEADD(d, 1, 'MONTH')", dt.date(2021, 5, 8), None, "date"),
    ("DATEADD(d, 1.9, 'DAY')", dt.date(2021, 4, 9), None, "date"),
    ("DATEADD(d, 30, 'HOUR')", dt.date(2021, 4, 8), None, "date"),  # a clock unit leaves a DATE as it is
    ("DATEDIFF(ts, ts2)", 290, None, "bigint"),
    ("DATEDIFF(ts, ts2, 'DAY')", 290, None, "bigint"),
    ("DATEDIFF(ts, ts2, 'YEAR')", 0, None, "bigint"),
    ("DATEDIFF(ts, ts2, 'MONTH')", 9, None, "bigint"),
    ("DATEDIFF(DATE '2020-01-01', DATE '2021-03-01', 'MONTH')", 2, 2, "bigint"),  # the months of the period
    ("DATEDIFF(ts, ts2, 'HOUR')", 6959, None, "bigint"),
    ("DATEDIFF(ts, ts2, 'MINUTE')", 417540, None, "bigint"),
    ("DATEDIFF(ts, ts2, 'SECOND')", 25052410, None, "bigint"),
    ("DATEDIFF(ts2, ts, 'WEEK')", -41, None, "bigint"),
    ("DATE_TRUNC(ts, 'MONTH')", dt.datetime(2021, 4, 1), None, "timestamp"),
    ("DATE_TRUNC(ts, 'SECOND')", dt.datetime(2021, 4, 8, 13, 34, 45), None, "timestamp"),
    ("DAYNAME(ts)", "Thursday", None, "string"),
    ("MONTHNAME(d)", "April", None, "string"),
    ("DAY_OF_MONTH(ts)", 8, None, "int"),
    ("DAY_OF_WEEK(ts)", 4, None, "int"),
    ("DAY_OF_YEAR(ts)", 98, None, "int"),
    ("EXTRACT(YEAR FROM ts)", 2021, None, "int"),
    ("EXTRACT(SECOND FROM ts)", 45, None, "int"),
    ("EXTRACT(MILLISECOND FROM ts)", 235, None, "int"),
    ("EXTRACT(DAYOFWEEK FROM ts)", 4, None, "int"),
    ("EXTRACT(DAYOFYEAR FROM ts)", 98, None, "int"),
    ("FORMATDATETIME(ts, 'yyyy-MM-dd HH:mm:ss.S')", "2021-04-08 13:34:45.2", None, "string"),
    ("HOUR(ts)", 13, None, "int"),
    ("MINUTE(ts)", 34, None, "int"),
    ("SECOND(ts)", 45, None, "int"),
    ("MONTH(ts)", 4, None, "int"),
    ("YEAR(d)", 2021, None, "int"),
    ("QUARTER(ts)", 2, None, "int"),
    ("WEEK(ts)", 15, None, "int"),
    ("WEEK(DATE '2021-01-01')", 1, 1, "int"),
    ("IS_DATE('2021-04-08 13:34:45', 'yyyy-MM-dd HH:mm:ss')", True, True, "boolean"),
    ("IS_DATE('2021-13-08', 'yyyy-MM-dd')", False, False, "boolean"),
    ("IS_DATE(num, 'yyyy-MM-dd')", False, True, "boolean"),  # SeaTunnel: NULL is a date
    ("PARSEDATETIME('2021-04-08 13:34:45.235', 'yyyy-MM-dd HH:mm:ss.SSS')",
     dt.datetime(2021, 4, 8, 13, 34, 45, 235000), dt.datetime(2021, 4, 8, 13, 34, 45, 235000), "timestamp"),
    ("TO_DATE('2021-04-08', 'yyyy-MM-dd')", dt.date(2021, 4, 8), dt.date(2021, 4, 8), "date"),
    ("TO_DATE('13:34', 'HH:mm')", dt.time(13, 34), dt.time(13, 34), "time"),
    ("FROM_UNIXTIME(1672502400, 'yyyy-MM-dd HH:mm:ss', 'UTC+8')", "2023-01-01 00:00:00", "2023-01-01 00:00:00",
     "string"),
    ("FROM_UNIXTIME(b DIV 1000, 'yyyy-MM-dd')", "2023-06-26", None, "string"),
]

SYSTEM_CASES = [
    ("CAST(i AS STRING)", "13", None, "string"),
    ("CAST(ts AS VARCHAR)", "2021-04-08T13:34:45.235", None, "string"),
    ("CAST(b AS INT)", None, None, "int"),  # replaced below: b is too large; see test_cast_errors
    ("CAST(i AS BIGINT)", 13, None, "bigint"),
    ("CAST(i AS LONG)", 13, None, "bigint"),
    ("CAST(i AS BYTE)", 13, None, "tinyint"),
    ("CAST(i AS DOUBLE)", 13.0, None, "double"),
    ("CAST(num AS DOUBLE)", 12.4, None, "double"),
    ("CAST(num AS DECIMAL(10, 2))", Decimal("12.40"), None, "decimal(10, 2)"),
    ("CAST(x AS DECIMAL(10, 0))", Decimal("14"), None, "decimal(10, 0)"),  # rounds up
    ("CAST(n AS DECIMAL(10, 1))", Decimal("-120.7"), None, "decimal(10, 1)"),
    ("CAST(b AS DECIMAL(17, 4))", Decimal("1687747869032.0000"), None, "decimal(17, 4)"),
    ("CAST(b AS TIMESTAMP)", dt.datetime(2023, 6, 26, 2, 51, 9, 32000), None, "timestamp"),
    ("CAST(b AS DATETIME)", dt.datetime(2023, 6, 26, 2, 51, 9, 32000), None, "timestamp"),
    ("CAST(ts AS DATE)", dt.date(2021, 4, 8), None, "date"),
    ("CAST(ymd AS DATE)", dt.date(2023, 6, 25), None, "date"),
    ("CAST(hms AS TIME)", dt.time(23, 51, 9), None, "time"),
    ("CAST(ts AS TIME)", dt.time(13, 34, 45, 235000), None, "time"),
    ("CAST(d AS TIME)", dt.time(0, 0), None, "time"),
    ("CAST(s AS BYTES)", b"Joy Ding", None, "bytes"),
    ("CAST(i AS BYTES)", b"13", None, "bytes"),
    ("COALESCE(s, 'Unknown')", "Joy Ding", "Unknown", "string"),
    ("COALESCE(i, 2.5)", 13, 2, "int"),  # the first argument's type
    ("IFNULL(s, 'Unknown')", "Joy Ding", "Unknown", "string"),
    ("IFNULL(NULLIF(s, 'Joy Ding'), 'NULL')", "NULL", "NULL", "string"),
    ("NULLIF(s, 'Joy Ding_')", "Joy Ding", None, "string"),
    ("CASE WHEN s IN ('Joy Ding') THEN 1 ELSE 0 END", 1, 0, "int"),
    ("MULTI_IF(x > 20, 'a', x > 10, 'b', 'c')", "b", "c", "string"),
]
SYSTEM_CASES = [c for c in SYSTEM_CASES if c[0] != "CAST(b AS INT)"]

GROUPS = {"string": STRING_CASES, "numeric": NUMERIC_CASES, "datetime": DATETIME_CASES, "system": SYSTEM_CASES}


def job(query: str) -> str:
    """A job whose FakeSource has :data:`COLUMNS` and whose Sql runs ``query``."""
    fields = ", ".join(f'{name} = "{st}"' for name, st, _, _ in COLUMNS)
    return textwrap.dedent(f"""
        env {{ job.mode = "BATCH" }}
        source {{ FakeSource {{ plugin_output = "fake", schema = {{ fields {{ {fields} }} }} }} }}
        transform {{ Sql {{ plugin_input = "fake", plugin_output = "out", query = \"\"\"{query}\"\"\" }} }}
        sink {{ Console {{ plugin_input = "out" }} }}
    """)


def compiled_schema(tmp_path, query: str):
    path = tmp_path / "job.conf"
    path.write_text(job(query))
    plan = compile_job(path, None, use_cache=False)
    return next(v.schema for p in plan.pipelines for v in p.vertices if v.kind == "transform")


def run_sql(spark, frame, query: str):
    vertex = PlanVertex(id="transform[0]", ref="transform[0]", kind="transform", plugin="Sql", parallelism=1,
                        inputs=("fake",), config={"plugin_input": "fake", "query": query})
    out = get_connector("Sql").apply(RunContext(spark, None, None, "test"), vertex, {"fake": {"tbl": frame}})
    return out["tbl"]


@pytest.fixture(scope="module")
def frame(spark):
    schema = ", ".join(f"{name} {sp}" for name, _, sp, _ in COLUMNS) + ", __st_row_kind tinyint"
    values = tuple(v for _, _, _, v in COLUMNS)
    return spark.createDataFrame([(*values, 0), (*[None] * len(COLUMNS), 0)], schema)


def _same(got, want) -> bool:
    if isinstance(want, float) and isinstance(got, float):
        return got == pytest.approx(want, rel=1e-15, abs=1e-15)
    return got == want and type(got) is type(want)


@pytest.mark.parametrize("group", list(GROUPS))
def test_values_nulls_and_types(spark, frame, tmp_path, group):
    cases = GROUPS[group]
    query = "select " + ", ".join(f"{expr} as c{i}" for i, (expr, *_) in enumerate(cases)) + " from fake"
    out = run_sql(spark, frame, query)
    first, nulls = (r.asDict() for r in out.collect())
    dtypes = dict(out.dtypes)
    problems = []
    for i, (expr, want, want_null, seatunnel) in enumerate(cases):
        column = f"c{i}"
        if not _same(first[column], want):
            problems.append(f"{expr}: {first[column]!r}, expected {want!r}")
        if not _same(nulls[column], want_null):
            problems.append(f"{expr} on nulls: {nulls[column]!r}, expected {want_null!r}")
        if dtypes[column] != spark_type(seatunnel):
            problems.append(f"{expr}: Spark type {dtypes[column]}, expected {spark_type(seatunnel)}")
        schema = compiled_schema(tmp_path, f"select {expr} as v from fake")
        compiled = str(schema["v"]).replace(" ", "") if schema is not None else None
        if compiled != seatunnel.replace(" ", ""):
            problems.append(f"{expr}: compiled type {compiled}, expected {seatunnel}")
    assert not problems, "\n".join(problems)


def test_des_matches_javax_crypto_and_random_matches_java(spark, frame):
    """DES_ENCRYPT is DES/CBC/PKCS5Padding with the password's first 8 bytes and the IV '12345678';
    DES_DECRYPT reads what javax.crypto wrote; RAND(seed) is java.util.Random(seed).nextDouble().
    (Each DES expression takes seconds to plan: one of each.)"""
    jvm = spark.sparkContext._jvm
    text = "übergrößenträger and more than two blocks"  # several blocks: padding and chaining
    key = jvm.javax.crypto.SecretKeyFactory.getInstance("DES").generateSecret(
        jvm.javax.crypto.spec.DESKeySpec(bytearray(b"pass word!")))
    cipher = jvm.javax.crypto.Cipher.getInstance("DES/CBC/PKCS5Padding")
    cipher.init(1, key, jvm.javax.crypto.spec.IvParameterSpec(bytearray(b"12345678")))
    expected = base64.b64encode(bytes(cipher.doFinal(bytearray(text.encode())))).decode()
    query = (f"select DES_ENCRYPT('pass word!', '{text}') as encrypted, DES_DECRYPT('pass word!', '{expected}') as "
             "decrypted, DES_ENCRYPT(NULL, s) as nul, DES_DECRYPT('12345678', 'not base64!') as not_base64, "
             "RAND(42) as r42, RANDOM(-7) as r7 from fake")
    got = run_sql(spark, frame, query).collect()[0].asDict()
    assert (got["encrypted"], got["decrypted"]) == (expected, text)
    assert (got["nul"], got["not_base64"]) == (None, "not base64!")
    assert got["r42"] == jvm.java.util.Random(42).nextDouble()
    assert got["r7"] == jvm.java.util.Random(-7).nextDouble()


def test_errors_where_seatunnel_throws(spark, frame, tmp_path):
    for expr in ("LN(n)", "LOG10(0)", "LOG(-2, x)", "COT(0)", "MOD(i, 0)", "HEXTORAW('123')",
                 "DES_ENCRYPT('short', s)", "LOCATE(NULL, s)"):
        with pytest.raises(PySparkException):
            run_sql(spark, frame, f"select {expr} as v from fake").collect()
    for expr, message in (("DATEADD(ts, 1, 'FORTNIGHT')", "unsupported unit"),
                          ("PARSEDATETIME(s, 'HH')", "neither a year"), ("IFNULL(s)", "IFNULL takes 2"),
                          ("REGEXP_LIKE(s, 'a', 'g')", "unknown regular expression flag")):
        with pytest.raises(RuntimeConfigError, match=message):
            run_sql(spark, frame, f"select {expr} as v from fake")
        with pytest.raises(ConfigError, match=message):
            compiled_schema(tmp_path, f"select {expr} as v from fake")
