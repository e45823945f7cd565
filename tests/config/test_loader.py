"""Reading configs: SeaTunnel's HOCON dialect, JSON, positions, legacy names."""

from __future__ import annotations

import json

import pytest

from airflow_provider_seatunnel.config import ConfigError, load_job
from airflow_provider_seatunnel.config.options import lookup

TWO_SOURCES = """\
env {
  job.mode = "BATCH"
}
source {
  FakeSource {
    plugin_output = "a"
    row.num = 1
  }
  FakeSource {
    plugin_output = "b"
    row.num = 2
  }
}
sink {
  Console { plugin_input = "a, b" }
}
"""


def test_duplicate_plugin_blocks_stay_separate(write_conf):
    job = load_job(write_conf(TWO_SOURCES))
    assert [p.name for p in job.sources] == ["FakeSource", "FakeSource"]
    assert [p.get("row.num") for p in job.sources] == [1, 2]
    assert [p.ref for p in job.sources] == ["source[0]", "source[1]"]


def test_dotted_keys_are_flat_and_nested_spelling_reads_the_same(write_conf):
    job = load_job(write_conf(TWO_SOURCES))
    assert "row.num" in job.sources[0].options
    assert "row" not in job.sources[0].options
    assert job.env == {"job.mode": "BATCH"}
    assert lookup({"row": {"num": 7}}, "row.num") == 7
    assert lookup({"split.read-interval": 5}, "split.read-interval") == 5
    assert lookup({"split": {"read-interval": 9}}, "split.read-interval") == 9


def test_positions_of_blocks_and_keys(write_conf):
    job = load_job(write_conf(TWO_SOURCES))
    first, second = job.sources
    assert (first.line, second.line) == (5, 9)
    assert second.line_of("row.num") == 11
    assert job.sinks[0].line == 15
    assert job.env_lines["job.mode"] == 2


def test_json_format(write_conf):
    doc = {
        "env": {"job.mode": "BATCH", "parallelism": 2},
        "source": [{"plugin_name": "FakeSource", "plugin_output": "s", "row.num": 3},
                   {"plugin_name": "FakeSource", "plugin_output": "t"}],
        "sink": [{"plugin_name": "Console", "plugin_input": ["s", "t"]}],
    }
    path = write_conf(json.dumps(doc, indent=2), name="job.json")
    job = load_job(path)
    assert job.format == "json"
    assert [p.get("plugin_output") for p in job.sources] == ["s", "t"]
    assert job.sources[1].line == 12  # the line of its opening brace
    assert job.env["parallelism"] == 2


def test_explicit_plugin_name_wins_and_list_form_works(write_conf):
    job = load_job(write_conf("""
        source { Anything { plugin_name = "FakeSource" } }
        sink = [{ plugin_name = "Console" }]
    """))
    assert job.sources[0].name == "FakeSource"
    assert job.sinks[0].name == "Console"


def test_two_source_sections_keep_every_block(write_conf):
    job = load_job(write_conf("""
        source { FakeSource { plugin_output = "a" } }
        source { FakeSource { plugin_output = "b" } }
        sink { Console { plugin_input = [a, b] } }
    """))
    assert [p.get("plugin_output") for p in job.sources] == ["a", "b"]


def test_quoted_escapes_and_triple_quotes(write_conf):
    job = load_job(write_conf('''
        source { LocalFile {
          field_delimiter = "\\t"
          pattern = "a\\\\d+"
          query = """select "x" from t"""
        } }
        sink { Console { } }
    '''))
    opts = job.sources[0].options
    assert opts["field_delimiter"] == "\t"
    assert opts["pattern"] == "a\\d+"
    assert opts["query"] == 'select "x" from t'


@pytest.mark.parametrize("text, line, col, words", [
    ("source {\n  FakeSource {\n    row.num = \n  }\n}\n", 3, 5, "has no value"),
    ("source {\n  FakeSource {\n    name = \"abc\n  }\n}\n", 3, 12, "unterminated quoted string"),
    ("source {\n  FakeSource {\n    a = 1\n", 2, None, "never closed"),
    ("env { parallelism = 1 } }\n", 1, 25, "no block to close here"),
    ("source {\n  FakeSource {\n    p = \"a\\q\"\n  }\n}\n", 3, None, "invalid escape"),
    ("source {\n  row.num = 5\n}\n", 2, 3, "must be a plugin block"),
])
def test_syntax_errors_name_file_line_and_column(write_conf, text, line, col, words):
    path = write_conf(text)
    with pytest.raises(ConfigError) as info:
        load_job(path)
    problem = info.value.first
    assert problem.file == str(path)
    assert problem.line == line
    if col is not None:
        assert problem.col == col
    assert words in str(info.value)
    assert f"{path}:{line}" in str(info.value)


def test_missing_file_is_a_config_error(tmp_path):
    with pytest.raises(ConfigError, match="config file not found"):
        load_job(str(tmp_path / "nope.conf"))


def test_config_error_is_a_value_error():
    assert issubclass(ConfigError, ValueError)


def test_unknown_top_level_key_warns_with_suggestion(write_conf):
    job = load_job(write_conf("source { FakeSource {} }\nsinks { Console {} }\n"))
    assert any("did you mean 'sink'" in (w.hint or "") for w in job.warnings)


def test_sql_job_format_compiles_to_source_sql_sink(plan_of):
    plan = plan_of("""\
/* config
env {
  parallelism = 2
  job.mode = "BATCH"
}
*/
CREATE TABLE fake WITH (
  'connector' = 'FakeSource',
  'type' = 'source',
  'row.num' = '10',
  'schema' = '{ fields { id = int, name = string } }'
);
CREATE TABLE out WITH (
  'connector' = 'Console',
  'type' = 'sink'
);
INSERT INTO out SELECT id, upper(name) AS name FROM fake;
""", name="job.sql")
    (p,) = plan.pipelines
    assert [(v.kind, v.plugin) for v in p.vertices] == [("source", "FakeSource"), ("transform", "Sql"),
                                                        ("sink", "Console")]
    assert p.vertices[1].config["query"] == "SELECT id, upper(name) AS name FROM fake"
    assert p.vertices[0].parallelism == 2
    assert p.vertices[0].line == 7


def test_plugin_blocks_of_an_included_file_are_kept_apart_and_added_to_the_includers(tmp_path):
    """An included file's ``source { A { } A { } }`` keeps both blocks (plain HOCON would merge them into
    one, silently losing a pipeline), and its sections add their blocks to the including file's."""
    from airflow_provider_seatunnel.plan import compile_job

    fake = 'FakeSource {{ plugin_output = "{0}", row.num = 1, schema = {{ fields {{ id = bigint }} }} }}'
    (tmp_path / "body.conf").write_text(
        f"source {{\n  {fake.format('web')}\n  {fake.format('store')}\n}}\n"
        'sink {\n  Console { plugin_input = "web" }\n  Console { plugin_input = "store" }\n}\n')
    top = tmp_path / "top.conf"
    top.write_text(f'include "body.conf"\nsource {{ {fake.format("extra")} }}\nsink {{ Console {{ plugin_input = "extra" }} }}\n')
    plan = compile_job(top, use_cache=False)
    assert sorted(p.task_id.split("_to_")[0] for p in plan.pipelines) == ["extra", "store", "web"]
