"""Tests for the SQL job format reader (SeaTunnel's SqlConfigBuilder behaviour)."""

from __future__ import annotations

from textwrap import dedent

import pytest

from airflow_provider_seatunnel.config.errors import ConfigError
from airflow_provider_seatunnel.config.hocon import ConfigList, ConfigObject, Pos, Subst, to_plain
from airflow_provider_seatunnel.config.sqlformat import parse_sql_job

FULL = """\
/* config
env {
  parallelism = 2
  job.mode = "BATCH"
}
*/
-- two sources
CREATE TABLE src WITH (
  'connector' = 'FakeSource',
  'type' = 'source',
  'row.num' = '5'
);
CREATE TABLE other WITH ('connector' = 'FakeSource', 'type' = 'source');
CREATE TABLE out WITH (
  'connector' = 'Console',
  'type' = 'sink',
  'source_table_name' = 'ignored'
);
CREATE TABLE unused WITH ('connector' = 'Assert', 'type' = 'sink');
CREATE TABLE picked AS SELECT id, name
  FROM other WHERE id > 1;
INSERT INTO out SELECT id FROM src;
INSERT INTO out
  SELECT name
  FROM src;
"""


def job(text: str) -> ConfigObject:
    return parse_sql_job(text, "job.sql")


def fails(text: str) -> ConfigError:
    with pytest.raises(ConfigError) as info:
        job(text)
    return info.value


SINK = "CREATE TABLE out WITH ('connector' = 'Console', 'type' = 'sink');\n"
SOURCE = "CREATE TABLE src WITH ('connector' = 'FakeSource', 'type' = 'source');\n"


def minimal(options: str) -> ConfigObject:
    return job(f"CREATE TABLE src WITH ('connector' = 'FakeSource', 'type' = 'source', {options});\n"
               + SINK + "INSERT INTO out SELECT src;\n")


# ---------------------------------------------------------------------------
# the full example


def test_full_example_shape():
    root = parse_sql_job(FULL, "job.sql")
    assert list(root) == ["env", "source", "transform", "sink"]
    assert to_plain(root) == {
        "env": {"parallelism": 2, "job.mode": "BATCH"},
        "source": [
            {"plugin_name": "FakeSource", "row.num": "5", "plugin_output": "src"},
            {"plugin_name": "FakeSource", "plugin_output": "other"},
        ],
        "transform": [
            {"plugin_name": "Sql", "plugin_input": "other", "plugin_output": "picked",
             "query": "SELECT id, name FROM other WHERE id > 1"},
            {"plugin_name": "Sql", "plugin_input": "src", "plugin_output": "src__temp1",
             "query": "SELECT id FROM src"},
            {"plugin_name": "Sql", "plugin_input": "src", "plugin_output": "src__temp2",
             "query": "SELECT name FROM src"},
        ],
        "sink": [
            {"plugin_name": "Console", "plugin_input": "src__temp1"},
            {"plugin_name": "Console", "plugin_input": "src__temp2"},
        ],
    }


def test_full_example_types_and_positions():
    root = parse_sql_job(FULL, "job.sql")
    env, sources, transforms, sinks = root["env"], root["source"], root["transform"], root["sink"]
    assert isinstance(env, ConfigObject)
    assert env.key_pos["parallelism"].line == 3
    assert env.key_pos["job.mode"].line == 4
    assert root.key_pos["env"].line == 2
    for section in (sources, transforms, sinks):
        assert isinstance(section, ConfigList)
        assert all(isinstance(b, ConfigObject) for b in section)
        assert section.item_pos == [b.pos for b in section]
    assert [b.pos for b in sources] == [Pos(8, 1), Pos(13, 1)]
    assert [b.pos.line for b in transforms] == [20, 22, 23]
    assert [b.pos.line for b in sinks] == [22, 23]
    assert sources.pos == Pos(8, 1)
    assert root.key_pos["source"].line == 8
    src = sources[0]
    assert src.key_pos["plugin_name"] == Pos(9, 3)  # the 'connector' option
    assert src.key_pos["row.num"] == Pos(11, 3)
    assert src.key_pos["plugin_output"] == Pos(8, 14)  # the table name
    assert src.line_of("row.num") == 11
    assert transforms[0].key_pos["plugin_input"] == Pos(21, 8)  # the FROM table
    assert transforms[2].key_pos["plugin_input"].line == 25
    assert transforms[2].key_pos["query"].line == 24
    # a sink copy keeps the option lines of its definition and points at its INSERT
    assert sinks[1].key_pos["plugin_name"].line == 15
    assert sinks[1].key_pos["plugin_input"].line == 23
    assert sinks[0] is not sinks[1]


def test_env_is_empty_without_a_config_block():
    root = job(SOURCE + SINK + "INSERT INTO out SELECT * FROM src;\n")
    assert root["env"] == {} and isinstance(root["env"], ConfigObject)
    assert len(root["sink"]) == 1 and len(root["transform"]) == 1


def test_env_substitutions_stay_unresolved():
    root = job(dedent("""\
        /* config
        env {
          parallelism = ${p}
        }
        */
        """) + SOURCE + SINK + "INSERT INTO out SELECT src;\n")
    value = root["env"]["parallelism"]
    assert isinstance(value, Subst) and value.path == "p" and value.pos.line == 3


def test_config_block_may_not_hold_plugins():
    err = fails(dedent("""\
        /* config
        env { parallelism = 1 }
        source { FakeSource { } }
        */
        """) + SOURCE + SINK + "INSERT INTO out SELECT src;\n")
    assert "'source' is not allowed" in str(err)
    assert err.first.line == 3 and err.first.hint


# ---------------------------------------------------------------------------
# INSERT forms


def test_insert_direct_form_reads_the_table_without_a_transform():
    root = job(SOURCE + SINK + "INSERT INTO out SELECT src;\n")
    assert root["transform"] == []
    assert to_plain(root["sink"]) == [{"plugin_name": "Console", "plugin_input": "src"}]


def test_temp_index_counts_only_inserts_that_make_a_transform():
    root = job(SOURCE + SINK + "INSERT INTO out SELECT src;\nINSERT INTO out SELECT a FROM src;\n")
    assert [b["plugin_output"] for b in root["transform"]] == ["src__temp1"]
    assert [b["plugin_input"] for b in root["sink"]] == ["src", "src__temp1"]


def test_create_with_statements_are_read_first_and_the_rest_in_file_order():
    root = job(dedent("""\
        CREATE TABLE t2 AS SELECT * FROM src;
        INSERT INTO out SELECT * FROM t2;
        CREATE TABLE out WITH ('connector' = 'Console', 'type' = 'sink');
        CREATE TABLE src WITH ('connector' = 'FakeSource', 'type' = 'source');
        """))
    assert [(b["plugin_input"], b["plugin_output"]) for b in root["transform"]] == \
        [("src", "t2"), ("t2", "t2__temp1")]
    assert root["source"][0].pos.line == 4 and root["sink"][0].pos.line == 2
    # an INSERT may not read a CREATE TABLE ... AS SELECT table defined after it
    check(fails(SOURCE + SINK + "INSERT INTO out SELECT * FROM t2;\nCREATE TABLE t2 AS SELECT * FROM src;\n"),
          "The source table[t2] is not found", 3)


def test_keywords_are_case_insensitive_and_names_keep_their_case():
    root = job(dedent("""\
        create table MySrc with ('connector' = 'fakesource', 'type' = 'SOURCE');
        Create Table MyOut With ('connector' = 'console', 'type' = 'Sink');
        insert into MyOut select x from MySrc where x > 0;
        """))
    assert root["source"][0]["plugin_output"] == "MySrc"
    assert root["source"][0]["plugin_name"] == "fakesource"
    assert root["transform"][0]["plugin_output"] == "MySrc__temp1"
    assert root["transform"][0]["query"] == "select x from MySrc where x > 0"
    assert root["sink"][0]["plugin_name"] == "console"


def test_from_inside_a_function_or_subexpression_is_not_the_table():
    root = job(SOURCE + SINK +
               "INSERT INTO out SELECT EXTRACT(YEAR FROM ts) AS y, 'from x' AS s FROM src;\n")
    assert root["transform"][0]["plugin_input"] == "src"


# ---------------------------------------------------------------------------
# option values


def test_doubled_quote_is_a_literal_quote_and_commas_inside_quotes_are_kept():
    src = minimal("'a' = 'it''s', 'b' = 'x, ''y'', z', 'c' = '''', 'd' = ''")["source"][0]
    assert src["a"] == "it's"
    assert src["b"] == "x, 'y', z"
    assert src["c"] == "'"
    assert src["d"] == ""


def test_raw_object_and_list_values_become_hocon():
    root = job(dedent("""\
        CREATE TABLE src WITH (
          'connector' = 'FakeSource',
          'type' = 'source',
          'schema' = '{
            fields {
              id = int
              name = string
            }
          }',
          'tables' = '[a, "b", 3]',
          'plain' = 'not {a list]',
          'sub' = '{ path = ${dir} }'
        );
        """) + SINK + "INSERT INTO out SELECT src;\n")
    src = root["source"][0]
    schema = src["schema"]
    assert isinstance(schema, ConfigObject)
    assert to_plain(schema) == {"fields": {"id": "int", "name": "string"}}
    assert schema["fields"].key_pos["id"].line == 6
    assert schema["fields"].key_pos["name"].line == 7
    assert isinstance(src["tables"], ConfigList) and list(src["tables"]) == ["a", "b", 3]
    assert src["tables"].pos.line == 10
    assert src["plain"] == "not {a list]"
    assert isinstance(src["sub"]["path"], Subst) and src["sub"]["path"].path == "dir"
    assert src.key_pos["schema"].line == 4 and src.key_pos["tables"].line == 10


def test_bad_raw_hocon_names_the_option_and_its_line():
    err = fails(dedent("""\
        CREATE TABLE src WITH (
          'connector' = 'FakeSource',
          'type' = 'source',
          'schema' = '{ fields { id = int }'
        );
        """) + SINK + "INSERT INTO out SELECT src;\n")
    assert err.first.key == "schema"
    assert err.first.line == 4 and err.first.file == "job.sql"


def test_naming_options_are_replaced():
    root = job(dedent("""\
        CREATE TABLE src WITH ('connector' = 'FakeSource', 'type' = 'source', 'result_table_name' = 'x');
        CREATE TABLE out WITH ('connector' = 'Console', 'type' = 'sink', 'plugin_input' = 'y',
                               'source_table_name' = 'z', 'path' = '/tmp');
        INSERT INTO out SELECT src;
        """))
    assert to_plain(root["source"][0]) == {"plugin_name": "FakeSource", "plugin_output": "src"}
    assert to_plain(root["sink"][0]) == {"plugin_name": "Console", "path": "/tmp", "plugin_input": "src"}


# ---------------------------------------------------------------------------
# comments and statement splitting


def test_comments_are_skipped_and_quoted_dashes_are_kept():
    root = job(dedent("""\
        -- a comment line
          -- an indented comment line
        /* a one-line block */
        /*
           a block; with CREATE TABLE nope WITH ('x' = 'y');
        */
        /* a block whose end
           shares its last line */
        CREATE TABLE src WITH ( -- trailing comment
          'connector' = 'FakeSource', -- another
          'type' = 'source',
          'note' = 'a -- b',
          'multi' = 'line one
        -- not a comment inside quotes
        line three',
          'dash' = 'x--y'
        ); -- after the end
        """) + SINK + "INSERT INTO out SELECT a--b\nFROM src; -- done\n")
    src = root["source"][0]
    assert src["note"] == "a -- b"
    assert src["multi"] == "line one\n-- not a comment inside quotes\nline three"
    assert src["dash"] == "x--y"
    assert src.key_pos["dash"].line == 16
    assert root["transform"][0]["query"] == "SELECT a--b FROM src"
    assert len(root["source"]) == 1


def test_crlf_line_endings():
    root = parse_sql_job((SOURCE + SINK + "INSERT INTO out SELECT * FROM src;\n").replace("\n", "\r\n"))
    assert root["source"][0]["plugin_name"] == "FakeSource"
    assert root["sink"][0].pos == Pos(3, 1)


# ---------------------------------------------------------------------------
# errors


def check(err: ConfigError, message: str, line: int) -> None:
    assert message in err.first.message
    assert err.first.line == line
    assert err.first.file == "job.sql"
    assert err.first.hint


def test_no_source_table():
    check(fails(SINK + "INSERT INTO out SELECT src;\n"), "The source table[src] is not found", 2)
    check(fails("-- nothing\n" + SINK), "The SQL config must contain at least one source table", 1)


def test_no_insert():
    check(fails(SOURCE + SINK + "\n"), "The SQL config must contain `INSERT INTO ... SELECT ...` syntax", 2)


def test_duplicate_table_names():
    check(fails(SOURCE + SOURCE + SINK + "INSERT INTO out SELECT src;\n"), "Table name duplicate: src", 2)
    check(fails(SOURCE + SINK + "CREATE TABLE out AS SELECT * FROM src;\nINSERT INTO out SELECT src;\n"),
          "Table name duplicate: out", 3)


def test_unsupported_statements():
    check(fails(SOURCE + SINK + "\nDROP TABLE src;\nINSERT INTO out SELECT src;\n"),
          "Unsupported SQL syntax: DROP TABLE src", 4)
    check(fails(SOURCE + SINK + "CREATE TABLE x (id INT);\n"), "Unsupported SQL syntax", 3)
    check(fails(SOURCE + SINK + "INSERT INTO out VALUES (1);\n"), "Unsupported SQL syntax", 3)
    check(fails(SOURCE + SINK + "INSERT INTO out SELECT * FROM src UNION SELECT * FROM src;\n"),
          "Unsupported SQL syntax: UNION", 3)
    check(fails(SOURCE + SINK + "INSERT INTO out SELECT * FROM (SELECT * FROM src);\n"),
          "Unsupported SQL syntax", 3)


def test_missing_connector():
    err = fails("CREATE TABLE src WITH (\n  'type' = 'source'\n);\n" + SINK + "INSERT INTO out SELECT src;\n")
    check(err, "CREATE TABLE src has no 'connector' option", 1)
    assert err.first.key == "connector"


def test_bad_or_missing_type():
    err = fails("CREATE TABLE src WITH (\n  'connector' = 'FakeSource',\n  'type' = 'transform'\n);\n")
    check(err, "the type 'transform'", 3)
    assert err.first.key == "type"
    check(fails("\nCREATE TABLE src WITH ('connector' = 'FakeSource');\n"), "has no 'type' option", 2)


def after_tables(statement: str, message: str) -> None:
    """``statement`` on line 3, after SOURCE and SINK, fails with ``message`` there."""
    check(fails(SOURCE + SINK + statement + "\n"), message, 3)


@pytest.mark.parametrize(("statement", "message"), [
    ("INSERT INTO out SELECT * FROM nope;", "The source table[nope] is not found"),
    ("CREATE TABLE t AS SELECT * FROM nope;", "The source table[nope] is not found"),
    ("INSERT INTO out SELECT * FROM out;", "The source table[out] is not found (it is a sink)"),
    ("INSERT INTO out SELECT nope;", "The source table[nope] is not found"),
    ("INSERT INTO nope SELECT * FROM src;", "The sink table[nope] is not found"),
    ("INSERT INTO src SELECT * FROM src;", "The sink table[src] is not found"),
])
def test_unknown_tables(statement: str, message: str):
    after_tables(statement, message)


def test_insert_with_columns():
    after_tables("INSERT INTO out (a, b) SELECT a, b FROM src;", "Insert sql must not have columns")


def test_insert_without_from_needs_a_single_table():
    after_tables("INSERT INTO out SELECT 1 + 2;", "Source table must be specified in SQL")


def test_broken_layout():
    check(fails(SOURCE + SINK + "INSERT INTO out SELECT src\n"), "does not end with ';'", 3)
    check(fails("/* config\nenv { }\n" + SOURCE), "/* config block opened here is never closed", 1)
    check(fails(SOURCE + "/* open\n" + SINK), "comment block opened here is never closed", 2)
    check(fails(SOURCE + "INSERT INTO out SELECT src; INSERT INTO out SELECT src;\n"), "';' in the middle", 2)
    check(fails("CREATE TABLE src WITH ('connector' = 'Fake', 'type' = 'source',\n 'a' 'b');\n"),
          "a malformed option", 2)
    check(fails("CREATE TABLE src WITH ('connector' = 'it''s;\n"), "a quoted string is never closed", 1)
