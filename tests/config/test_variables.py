"""Variables: unquoted substitutions, -i values, quoted placeholders, concatenation."""

from __future__ import annotations

import pytest

from airflow_provider_seatunnel.config import ConfigError, load_job, split_cli_variables
from airflow_provider_seatunnel.config.variables import normalize_variables

JOB = """\
env { job.mode = "BATCH" }
source {
  FakeSource {
    plugin_output = ${name}
    row.num = ${rows}
    string.template = ${templates}
  }
}
sink { Console { plugin_input = ${name} } }
"""


def test_unquoted_variables_from_cli_are_hocon_values(write_conf):
    job = load_job(write_conf(JOB), split_cli_variables(["name=fake", "rows=10", "templates=[abc,def]"]),
                   environ={})
    src = job.sources[0]
    assert src.get("plugin_output") == "fake"
    assert src.get("row.num") == 10
    assert src.get("string.template") == ["abc", "def"]


def test_one_i_argument_may_hold_several_items():
    assert split_cli_variables(['a=1,b=[x,y],c="p,q"']) == {"a": "1", "b": "[x,y]", "c": '"p,q"'}


def test_environment_resolves_unquoted_and_wins_over_cli(write_conf):
    job = load_job(write_conf(JOB), {"name": "from_cli", "rows": 1, "templates": "[a]"},
                   environ={"name": "from_env"})
    assert job.sources[0].get("plugin_output") == "from_env"


def test_config_itself_resolves_first(write_conf):
    job = load_job(write_conf("""
        rows = 42
        source { FakeSource { row.num = ${rows} } }
        sink { Console {} }
    """), {"rows": 1}, environ={"rows": "2"})
    assert job.sources[0].get("row.num") == 42


def test_unresolved_unquoted_variable_is_an_error_naming_it(write_conf):
    path = write_conf(JOB)
    with pytest.raises(ConfigError) as info:
        load_job(path, {"name": "x", "templates": "[a]"}, environ={})
    problem = info.value.first
    assert "${rows}" in problem.message
    assert problem.line == 5
    assert "-i rows=VALUE" in problem.hint


def test_optional_substitution_drops_the_key(write_conf):
    job = load_job(write_conf("source { FakeSource { row.num = ${?nothing}, x = 1 } }\nsink { Console {} }"),
                   environ={})
    assert "row.num" not in job.sources[0].options
    assert job.sources[0].get("x") == 1


def test_quoted_placeholders_defaults_and_concatenation(write_conf):
    text = """
    source {
      FakeSource {
        plugin_output = "t"
        a = "${dt}"
        b = "${missing:fallback }"
        c = "${missing:}"
        d = "dir/${dt}/${unknown}"
        query = "select * from "${t}" where d = '"${dt}"'"
        list = ["${dt}", "x"]
        nested { inner = "${dt}" }
      }
    }
    sink { Console {} }
    """
    job = load_job(write_conf(text), {"dt": "2024-01-02", "t": "orders"}, environ={})
    o = job.sources[0].options
    assert o["a"] == "2024-01-02"
    assert o["b"] == "fallback"
    assert o["c"] == ""
    assert o["d"] == "dir/2024-01-02/${unknown}"
    assert o["query"] == "select * from orders where d = '2024-01-02'"
    assert o["list"] == ["2024-01-02", "x"]
    assert o["nested"] == {"inner": "2024-01-02"}
    warned = [w for w in job.warnings if "${unknown}" in w.message]
    assert warned and warned[0].severity == "warning"


def test_quoted_placeholders_ignore_the_environment(write_conf):
    job = load_job(write_conf('source { FakeSource { a = "${HOME_X:d}" } }\nsink { Console {} }'),
                   environ={"HOME_X": "/root"})
    assert job.sources[0].get("a") == "d"


def test_connector_placeholders_stay_as_written(write_conf):
    text = """
    source { FakeSource { } }
    sink {
      LocalFile {
        path = "/data/${database_name}/${table_name}"
        partition_dir_expression = "${k0}=${v0}"
        file_name_expression = "${transactionId}_${now}"
        table = ${table_name}
      }
    }
    """
    job = load_job(write_conf(text), environ={})
    o = job.sinks[0].options
    assert o["path"] == "/data/${database_name}/${table_name}"
    assert o["partition_dir_expression"] == "${k0}=${v0}"
    assert o["file_name_expression"] == "${transactionId}_${now}"
    assert o["table"] == "${table_name}"
    assert not job.warnings


def test_system_placeholders_cannot_be_set():
    with pytest.raises(ConfigError, match="system placeholder"):
        normalize_variables({"table_name": "x"})


def test_default_outside_quotes_is_explained(write_conf):
    with pytest.raises(ConfigError, match="only works inside a quoted string"):
        load_job(write_conf("source { FakeSource { a = ${x:1} } }\nsink { Console {} }"), environ={})


def test_substitution_cycle_is_reported(write_conf):
    with pytest.raises(ConfigError, match=r"substitution cycle: (a -> b -> a|b -> a -> b)"):
        load_job(write_conf("a = ${b}\nb = ${a}\nsource { FakeSource { x = ${a} } }\nsink { Console {} }"),
                 environ={})


def test_a_cli_value_holding_a_comment_marker_is_kept_whole(write_conf):
    """``//`` and ``#`` in a ``-i`` value are text (a JDBC URL), not the start of a HOCON comment; found by the
    parity harness (benchmarks/parity j_postgres: the project connected to ``jdbc:postgresql:``)."""
    conf = write_conf('env { job.mode = "BATCH" }\nsource { FakeSource { plugin_output = "f", url = "${url}", '
                      'u2 = ${url}, tag = "${tag}" } }\nsink { Console { plugin_input = "f" } }\n')
    job = load_job(conf, split_cli_variables(["url=jdbc:postgresql://127.0.0.1:5432/db", "tag=a#b"]), environ={})
    src = job.sources[0]
    assert src.get("url") == src.get("u2") == "jdbc:postgresql://127.0.0.1:5432/db"
    assert src.get("tag") == "a#b"
    assert normalize_variables({"n": "10", "l": "[a,b]"}) == {"n": 10, "l": ["a", "b"]}
