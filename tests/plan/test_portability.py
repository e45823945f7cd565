"""Portability warnings: what a Sql transform's query uses that SeaTunnel 2.3.8's own engine refuses.

The facts are SeaTunnel's engine's answers: each query below ran once on Zeta 2.3.8 (FakeSource ->
Sql -> Console, configs kept outside the repo, listed in docs/parity.md); the refused ones exited 1
with the cause quoted beside them, the portable ones exited 0.
"""

from __future__ import annotations

import json

import pytest

from airflow_provider_seatunnel.cli import main
from airflow_provider_seatunnel.config.errors import ConfigError
from airflow_provider_seatunnel.connectors.sql.functions import REWRITERS
from airflow_provider_seatunnel.connectors.sql.portability import LATER, SEATUNNEL_NAMES, ZETA_FUNCTIONS, findings
from airflow_provider_seatunnel.plan.compiler import validate_job

from ..conftest import ROOT

#: queries Zeta 2.3.8 refused (exit 1), or ran with other rows (DISTINCT, WITH): the word the warning names and (part of)
#: its hint; SeaTunnel's cause
REFUSED = [
    ("select id, DAYOFMONTH(ts) as dom from t", "DAYOFMONTH", "use DAY_OF_MONTH"),  # Unsupported function
    ("select id, date_format(ts, 'yyyy') as y from t", "DATE_FORMAT", "use FORMATDATETIME"),
    ("select id, DAYOFWEEK(ts) as m from t", "DAYOFWEEK", "use DAY_OF_WEEK"),
    ("select id, NVL(name, 'x') as m from t", "NVL", "use IFNULL"),
    ("select id, UUID() as u from t", "UUID", "SeaTunnel's functions"),  # added after 2.3.8
    ("select id, MULTI_IF(id = 1, 'a', 'b') as m from t", "MULTI_IF", "CASE WHEN"),
    ("select id, IF(id = 1, 'a', 'b') as m from t", "IF", "CASE WHEN"),
    ("select count(*) as c from t", "COUNT", "SeaTunnel's functions"),
    ("select id, EXTRACT(DOW FROM ts) as w from t", "DOW", "DAYOFWEEK"),  # Unsupported dateTimeField
    ("select id, ROW_NUMBER() OVER (ORDER BY id) as r from t", "ROW_NUMBER", "SeaTunnel's functions"),
    ("select id from t where name rlike 'a.*'", "RLIKE", "SeaTunnel's functions"),
    ("select name, id from t group by name, id", "GROUP BY", "each row"),  # SQL validate failed
    ("select id from t order by id", "ORDER BY", "each row"),
    ("select id from t limit 1", "LIMIT", "each row"),
    ("select a.id from t a", "a", "without the alias"),
    ("select id from t union all select id from t", "UNION", "each row"),
    ("select t.id from t join t as u on t.id = u.id", "JOIN", "each row"),
    ("select id from (select id from t)", "FROM", "each row"),  # Unsupported sub table syntax
    ("select id from s.t", "s", "write FROM t"),  # Unsupported schema syntax
    ("select id from t where id in (select id from t)", "SELECT", "each row"),  # a NullPointerException there
    ("select id from t where id between 1 and 2", "BETWEEN", ">= low"),  # Unsupported SQL Expression
    ("select id from t where not (id = 1)", "NOT", "opposite comparison"),
    ("select id from t where flag", "flag", "comparison"),
    ("select id, cast(id as boolean) as b from t", "boolean", "cast to one of"),  # Unsupported CAST AS type
    ("select id, cast(id as smallint) as b from t", "smallint", "cast to one of"),
    ("select id, cast(id as tinyint) as b from t", "tinyint", "BYTES"),
    ("select id, cast(id as byte) as b from t", "byte", "cast to one of"),  # SQL parse failed: its parser refuses BYTE
    ("select distinct id * 0 as z from t", "DISTINCT", "deduplicate in the sink"),  # ran, kept 2 rows of 2
    ("with u as (select id from t where id > 1) select id from u", "WITH", "without WITH"),  # ran: `select id` on t
    ("select id from t where flag = 'true'", "flag", "no boolean literal"),  # ran, kept no row: never equal there
    ("select id from t where flag = true", "true", "no boolean literal"),  # can't find field [true]: SeaTunnel's bug
    ("select id, false as f from t", "false", "no boolean literal"),
    ("select id, n > 0 as pos from t", ">", "CASE WHEN n > 0 THEN 1"),  # Unsupported SQL Expression
    ("select id, name is null as b from t", "IS", "CASE WHEN"),
    ("select id, (id = 1 or x <> 2) as b from t", "OR", "CASE WHEN"),
]

#: queries Zeta 2.3.8 ran (exit 0): every function of its table, each alias, its CAST types and WHERE forms (a bare
#: CURRENT_TIME too: the time of day, as CURRENT_TIME())
RAN = [
    "select id, ASCII(name) a1, BIT_LENGTH(name) a2, CHAR_LENGTH(name) a3, LENGTH(name) a4, OCTET_LENGTH(name) a5, "
    "CHAR(65) a6, CHR(66) a7, CONCAT(name, 'x') a8, CONCAT_WS('-', name, 'y') a9, LOWER(name) b1, LCASE(name) b2, "
    "UPPER(name) b3, UCASE(name) b4, LEFT(name, 2) b5, RIGHT(name, 2) b6, LOCATE('n', name) b7, INSTR(name, 'n') b8, "
    "POSITION('n', name) b9, LPAD(name, 5, '*') c1, RPAD(name, 5, '*') c2, LTRIM(name) c3, RTRIM(name) c4, "
    "TRIM(name) c5, REGEXP_REPLACE(name, 'n', 'm') c6, REGEXP_LIKE(name, 'a.*') c7, REGEXP_SUBSTR(name, 'n+') c8, "
    "REPEAT(name, 2) c9, REPLACE(name, 'a', 'b') d1, SOUNDEX(name) d2, SPACE(2) d3, SUBSTRING(name, 1, 2) d4, "
    "SUBSTR(name, 2) d5, TRANSLATE(name, 'a', 'b') d6, RAWTOHEX(name) d7, INSERT(name, 1, 1, 'z') d8, "
    "name || 'q' d9 from t",
    "select id, ABS(x) a1, ACOS(0.5) a2, ASIN(0.5) a3, ATAN(0.5) a4, COS(x) a5, COSH(x) a6, COT(x) a7, SIN(x) a8, "
    "SINH(x) a9, TAN(x) b1, TANH(x) b2, ATAN2(x, 1.0) b3, MOD(id, 2) b4, CEIL(x) b5, CEILING(x) b6, EXP(x) b7, "
    "FLOOR(x) b8, LN(2.0) b9, LOG(10, 100) c1, LOG10(100) c2, RADIANS(x) c3, SQRT(4.0) c4, PI() c5, POWER(x, 2) c6, "
    "RAND() c7, RANDOM() c8, ROUND(x, 1) c9, SIGN(x) d1, TRUNC(x) d2, TRUNCATE(x) d3 from t",
    "select id, NOW() a1, DATEADD(ts, 1, 'DAY') a2, TIMESTAMPADD(ts, 1, 'DAY') a3, DATEDIFF(ts, ts, 'DAY') a4, "
    "DATE_TRUNC(ts, 'DAY') a5, DAYNAME(ts) a6, DAY_OF_MONTH(ts) a7, DAY_OF_WEEK(ts) a8, DAY_OF_YEAR(ts) a9, "
    "EXTRACT(YEAR FROM ts) b1, FORMATDATETIME(ts, 'yyyy') b2, HOUR(ts) b3, MINUTE(ts) b4, MONTH(ts) b5, "
    "MONTHNAME(ts) b6, PARSEDATETIME('2021-01-01 00:00:00', 'yyyy-MM-dd HH:mm:ss') b7, "
    "TO_DATE('2021-01-01', 'yyyy-MM-dd') b8, IS_DATE('2021-01-01', 'yyyy-MM-dd') b9, QUARTER(ts) c1, SECOND(ts) c2, "
    "WEEK(ts) c3, YEAR(ts) c4, FROM_UNIXTIME(n, 'yyyy-MM-dd') c5, CURRENT_DATE c6, CURRENT_TIME c7, CURRENT_TIMESTAMP c8 from t",
    "select id, COALESCE(name, 'x') a1, IFNULL(name, 'x') a2, NULLIF(name, 'ann') a3, CAST(id AS BIGINT) a4, "
    "CAST(id AS STRING) a5, CAST(id AS VARCHAR) a6, CAST(id AS INT) a7, CAST(id AS INTEGER) a8, CAST(id AS LONG) a9, "
    "CAST(id AS DOUBLE) b1, CAST(id AS FLOAT) b2, CAST(x AS DECIMAL(10, 2)) b3, CAST(ts AS DATE) b4, "
    "CAST(ts AS TIMESTAMP) b5, CAST(ts AS DATETIME) b6, CAST(name AS BYTES) b7, "
    "CASE WHEN id = 1 THEN 'one' ELSE 'other' END b8, DES_ENCRYPT('12345678', name) b9 from t "
    "where id in (1, 2) and name like 'a%' or name is null or (id > 0 and id <> 3)",
    "select * from t where id >= 1",
    "select id from t where id not in (3, 4) and name not like 'z%' and name is not null",
]

FIELDS = 'id = "int", name = "string", ts = "timestamp", d = "date", flag = "boolean", x = "double", n = "bigint"'


def job(query: str) -> str:
    return f"""env {{ job.mode = "BATCH" }}
source {{ FakeSource {{ plugin_output = "t", schema = {{ fields {{ {FIELDS} }} }} }} }}
transform {{
  Sql {{
    plugin_input = "t"
    plugin_output = "q"
    query = \"\"\"{query}\"\"\"
  }}
}}
sink {{ Console {{ plugin_input = "q" }} }}
"""


@pytest.fixture
def lenient(monkeypatch):
    monkeypatch.setenv("SEATUNNEL_STRICT", "false")


@pytest.fixture
def strict(monkeypatch):
    monkeypatch.setenv("SEATUNNEL_STRICT", "true")


@pytest.mark.parametrize(("query", "word", "hint"), REFUSED, ids=[w for _, w, _ in REFUSED])
def test_what_seatunnel_refused_is_a_located_warning_saying_what_to_write(lenient, plan_of, query, word, hint):
    plan = plan_of(job(query))
    (warning,) = [w for w in plan.warnings if w.get("code") == "not-portable"]
    assert warning["severity"] == "warning" and warning["plugin"] == "transform[0] Sql" and warning["key"] == "query"
    assert warning["file"].endswith("job.conf") and warning["line"] == 7  # the query's line
    assert query[warning["col"] - 1:].upper().startswith(word.upper())  # the column of the word as written
    assert word != "SELECT" or warning["col"] > 1  # a subquery's SELECT, not the query's own
    assert word.upper() in warning["message"].upper() and "not portable to SeaTunnel 2.3.8" in warning["message"]
    assert hint in warning["hint"]


@pytest.mark.parametrize("query", RAN)
def test_what_seatunnel_ran_gives_no_warning(lenient, plan_of, query):
    plan = plan_of(job(query))
    assert [w for w in plan.warnings if w.get("code") == "not-portable"] == []


def test_a_word_on_a_later_line_of_the_query_is_located_there(lenient, plan_of):
    plan = plan_of(job("select id,\n      DAYOFMONTH(ts) as d\n    from t where flag = true"))
    found = {w["message"].split()[0]: (w["line"], w["col"]) for w in plan.warnings if w.get("code") == "not-portable"}
    assert found == {"DAYOFMONTH": (8, 7), "SeaTunnel": (9, 25)}


def test_strict_makes_it_an_error_that_stops_the_compile(strict, plan_of):
    with pytest.raises(ConfigError) as info:
        plan_of(job("select id, DAYOFMONTH(ts) as dom from t"))
    (problem,) = info.value.problems
    assert problem.severity == "error" and problem.code == "not-portable" and "use DAY_OF_MONTH" in problem.format()


def test_strict_leaves_a_portable_query_alone(strict, write_conf):
    errors, warnings, plan = validate_job(write_conf(job(RAN[-1])))
    assert errors == [] and warnings == [] and plan is not None


def test_validate_exits_0_with_the_warning_and_2_under_strict(monkeypatch, write_conf, capsys):
    path = write_conf(job("select id, DAYOFMONTH(ts) as dom from t"))
    monkeypatch.setenv("SEATUNNEL_STRICT", "false")
    assert main(["validate", str(path)]) == 0
    out = capsys.readouterr()
    assert f"{path}:7:12: warning: transform[0] Sql: option 'query': DAYOFMONTH" in out.err and "valid" in out.out
    assert main(["validate", str(path), "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["valid"] is True and [w["code"] for w in doc["warnings"]] == ["not-portable"]
    monkeypatch.setenv("SEATUNNEL_STRICT", "true")
    assert main(["validate", str(path)]) == 2  # the CLI's exit code for a config error
    assert f"error: {path}:7:12: transform[0] Sql: option 'query': DAYOFMONTH" in capsys.readouterr().err


def test_every_function_this_sql_knows_beyond_seatunnel_2_3_8_is_a_later_one():
    """A rewriter added for a SeaTunnel function must be placed: in 2.3.8's table, or a later one (warned)."""
    assert set(REWRITERS) - ZETA_FUNCTIONS == set(LATER)


def test_a_query_that_does_not_parse_has_no_findings():
    assert findings("select from where (") == ()


def test_the_docs_list_each_spark_function_with_its_seatunnel_name():
    """docs/sql-functions.md's table of Spark-only functions: every name the hint replaces, none SeaTunnel knows."""
    text = (ROOT / "docs" / "sql-functions.md").read_text()
    rows = {line.split("|")[1].strip(): line.split("|")[2].strip() for line in text.splitlines()
            if line.startswith("| ") and line.count("|") == 3}
    listed = {name.strip(): seatunnel for names, seatunnel in rows.items() for name in names.split(",")}
    for name, seatunnel in SEATUNNEL_NAMES.items():
        assert name not in ZETA_FUNCTIONS
        assert listed[name].split()[0] == seatunnel.split()[0], name


#: Zeta 2.3.8 runs of FakeSource -> LocalFile: (format, field type) -> whether SeaTunnel's writer wrote it (refused:
#: "Unsupported data type" on the first row)
WRITER_RUNS = {("parquet", "time"): False, ("parquet", "null"): False, ("orc", "null"): False, ("orc", "time"): True}


def sink_job(fmt: str, kind: str, sink: str = "LocalFile", extra: str = "") -> str:
    return f"""env {{ job.mode = "BATCH" }}
source {{ FakeSource {{ plugin_output = "t", schema = {{ fields {{ id = "int", v = "{kind}" }} }} }} }}
sink {{
  {sink} {{
    plugin_input = "t"
    path = "/tmp/portable-out"{extra}
    file_format_type = "{fmt}"
  }}
}}
"""


@pytest.mark.parametrize(("fmt", "kind"), list(WRITER_RUNS))
def test_a_type_seatunnels_writer_refuses_is_a_warning_at_the_format(lenient, plan_of, fmt, kind):
    plan = plan_of(sink_job(fmt, kind))
    found = [w for w in plan.warnings if w.get("code") == "not-portable"]
    if WRITER_RUNS[(fmt, kind)]:
        assert found == []
        return
    (warning,) = found
    assert (warning["plugin"], warning["key"], warning["line"]) == ("sink[0] LocalFile", "file_format_type", 7)
    assert f"field 'v' is a {kind.upper()}, which SeaTunnel's {fmt} writer refuses" in warning["message"]


@pytest.mark.parametrize("fmt", ["csv", "text", "json"])
def test_the_text_formats_write_every_type(lenient, plan_of, fmt):
    for kind in ("time", "null"):
        assert [w for w in plan_of(sink_job(fmt, kind)).warnings if w.get("code") == "not-portable"] == []


def test_every_file_sink_shares_the_writer_check_and_strict_refuses_it(strict, config_error):
    extra = '\n    bucket = "s3a://b"\n    fs.s3a.endpoint = "http://127.0.0.1:9"'
    error = config_error(sink_job("parquet", "time", "S3File", extra))
    assert [p.code for p in error.problems] == ["not-portable"] and error.problems[0].plugin == "sink[0] S3File"


def test_an_xml_sink_without_the_option_seatunnel_requires_is_not_portable(lenient, plan_of):
    # Zeta 2.3.8: an xml LocalFile sink without xml_use_attr_format fails the job; with it, it writes the file
    (warning,) = [w for w in plan_of(sink_job("xml", "int")).warnings if w.get("code") == "not-portable"]
    assert (warning["key"], warning["line"]) == ("file_format_type", 7)
    assert "requires 'xml_use_attr_format'" in warning["message"]
    given = sink_job("xml", "int", extra="\n    xml_use_attr_format = false")
    assert [w for w in plan_of(given).warnings if w.get("code") == "not-portable"] == []


def test_a_bare_current_time_is_the_time_of_day_as_on_seatunnel(lenient, plan_of):
    """Zeta 2.3.8 runs ``CURRENT_TIME`` without parentheses (the time of day, as CURRENT_TIME()); so does this
    compiler (it read a column and refused the config), and a field named so is still read with its quotes."""
    from sqlglot import exp

    from airflow_provider_seatunnel.connectors.sql.analysis import parse

    bare = parse("select CURRENT_TIME as t1, CURRENT_TIME() as t2, `CURRENT_TIME` as c from t")
    assert [type(e.this) for e in bare.expressions] == [exp.CurrentTime, exp.CurrentTime, exp.Column]
    plan = plan_of(job("select id, CURRENT_TIME as t1 from t where CURRENT_TIME is not null"))
    assert [w for w in plan.warnings if w.get("code") == "not-portable"] == []
