"""Wiring plugin blocks into a LogicalDag, and every graph error with its location."""

from __future__ import annotations

import pytest

from airflow_provider_seatunnel.config import load_job
from airflow_provider_seatunnel.plan.logical import build_logical_dag


def dag_of(write_conf, text, name="job.conf"):
    return build_logical_dag(load_job(write_conf(text, name), environ={}))


def test_unnamed_linear_chain_reads_the_previous_plugin(write_conf):
    dag = dag_of(write_conf, """
        source { FakeSource { schema = { fields { a = int, b = string, x = int, id = bigint, k = string, name = string } } } }
        transform { Sql { query = "select * from this" } Filter { include_fields = [a] } }
        sink { Console { } }
    """)
    assert dag.edges == (("source[0]", "transform[0]"), ("transform[0]", "transform[1]"),
                         ("transform[1]", "sink[0]"))


def test_unnamed_sinks_read_the_last_producer(write_conf):
    dag = dag_of(write_conf, """
        source { FakeSource { schema = { fields { a = int, b = string, x = int, id = bigint, k = string, name = string } } } }
        sink { Console { } Assert { rules { row_rules = [{rule_type = MIN_ROW, rule_value = 1}] } } }
    """)
    assert set(dag.edges) == {("source[0]", "sink[0]"), ("source[0]", "sink[1]")}


def test_transform_order_in_the_file_does_not_matter(write_conf):
    dag = dag_of(write_conf, """
        source { FakeSource { schema = { fields { a = int, b = string, x = int, id = bigint, k = string, name = string } }, plugin_output = "a" } }
        transform {
          Sql { plugin_input = "b", plugin_output = "c", query = "select * from b" }
          Filter { plugin_input = "a", plugin_output = "b", include_fields = [x] }
        }
        sink { Console { plugin_input = "c" } }
    """)
    assert set(dag.edges) == {("source[0]", "transform[1]"), ("transform[1]", "transform[0]"),
                              ("transform[0]", "sink[0]")}


def test_legacy_names_and_comma_separated_inputs(write_conf):
    dag = dag_of(write_conf, """
        source {
          FakeSource { schema = { fields { a = int, b = string, x = int, id = bigint, k = string, name = string } }, result_table_name = "a" }
          FakeSource { schema = { fields { a = int, b = string, x = int, id = bigint, k = string, name = string } }, result_table_name = "b" }
        }
        sink { Console { source_table_name = "a, b" } }
    """)
    assert dag.vertex("sink[0]").inputs == ("a", "b")
    assert dag.vertex("sink[0]").upstream == ("source[0]", "source[1]")


def test_legacy_and_new_name_agreeing_only_warns(write_conf):
    dag = dag_of(write_conf, """
        source { FakeSource { schema = { fields { a = int, b = string, x = int, id = bigint, k = string, name = string } }, plugin_output = "a", result_table_name = "a" } }
        sink { Console { plugin_input = "a" } }
    """)
    assert any("result_table_name" in w.message for w in dag.warnings)


def test_plugin_names_are_case_insensitive(write_conf):
    dag = dag_of(write_conf, """
        source { fakesource { schema = { fields { a = int, b = string, x = int, id = bigint, k = string, name = string } } } }
        transform { sql { query = "select * from this" } }
        sink { CONSOLE { } }
    """)
    assert [v.plugin for v in dag.vertices] == ["FakeSource", "Sql", "Console"]


def test_parallelism_rules(write_conf):
    dag = dag_of(write_conf, """
        env { parallelism = 3 }
        source { FakeSource { schema = { fields { a = int, b = string, x = int, id = bigint, k = string, name = string } }, plugin_output = "a" } FakeSource { schema = { fields { a = int, b = string, x = int, id = bigint, k = string, name = string } }, plugin_output = "b", parallelism = 5 } }
        transform { Sql { plugin_input = "b", plugin_output = "c", query = "select * from b" } }
        sink { Console { plugin_input = "a" } LocalFile { plugin_input = "c", path = "/tmp/x", file_format_type = "csv", parallelism = 2 } }
    """)
    p = {v.id: v.parallelism for v in dag.vertices}
    assert p == {"source[0]": 3, "source[1]": 5, "transform[0]": 5, "sink[0]": 3, "sink[1]": 2}
    assert any("SeaTunnel's engine would use its input's (5)" in n for n in dag.vertex("sink[1]").notes)


def test_string_parallelism_is_accepted(write_conf):
    dag = dag_of(write_conf, 'source { FakeSource { schema = { fields { a = int, b = string, x = int, id = bigint, k = string, name = string } }, parallelism = "4" } }\nsink { Console { } }')
    assert dag.vertex("source[0]").parallelism == 4


# --- errors: every one names file, line, plugin and key ------------------------------------


def problems_of(config_error, text):
    err = config_error(text)
    return err, err.problems


def test_no_source_and_no_sink_are_both_reported(config_error):
    err, problems = problems_of(config_error, "env { job.mode = BATCH }\n")
    text = str(err)
    assert "the job has no source" in text and "the job has no sink" in text
    assert all(p.file and p.file.endswith("job.conf") for p in problems)


def test_unknown_job_mode_suggests(config_error):
    _, (p,) = problems_of(config_error, 'env {\n  job.mode = "BATHC"\n}\nsource { FakeSource { schema = { fields { a = int, b = string, x = int, id = bigint, k = string, name = string } } } }\n'
                                          'sink { Console {} }\n')
    assert p.line == 2 and p.key == "job.mode" and p.plugin == "env"
    assert "did you mean BATCH" in p.hint


@pytest.mark.parametrize("value", ["0", "-2", '"abc"', "1.5"])
def test_bad_parallelism(config_error, value):
    _, (p,) = problems_of(config_error, f"source {{\n  FakeSource {{ schema = {{ fields {{ a = int }} }}\n    parallelism = {value}\n  }}\n}}\n"
                                          "sink { Console {} }\n")
    assert p.line == 3 and p.plugin == "source[0] FakeSource" and p.key == "parallelism"
    assert "positive integer" in p.message


def test_bad_env_parallelism(config_error):
    _, (p,) = problems_of(config_error, "env {\n  parallelism = 0\n}\nsource { FakeSource { schema = { fields { a = int, b = string, x = int, id = bigint, k = string, name = string } } } }\n"
                                        "sink { Console {} }\n")
    assert (p.line, p.key, p.plugin) == (2, "parallelism", "env")


@pytest.mark.parametrize("value", ["0", "-1", '"many"', "1.5", "true"])
def test_bad_env_concurrent_tables_is_a_located_compile_error(config_error, value):
    _, (p,) = problems_of(config_error, f"env {{\n  multi_table.concurrent_tables = {value}\n}}\n"
                                        "source { FakeSource { schema = { fields { a = int } } } }\nsink { Console {} }\n")
    assert (p.line, p.key, p.plugin) == (2, "multi_table.concurrent_tables", "env")
    assert "must be a positive integer" in p.message


def test_env_concurrent_tables_stays_in_the_plan_s_env(plan_of):
    plan = plan_of("env { multi_table.concurrent_tables = 3 }\n"
                   "source { FakeSource { schema = { fields { a = int } } } }\nsink { Console {} }\n")
    assert plan.env["multi_table.concurrent_tables"] == 3


def test_input_naming_no_output_suggests_a_near_name(config_error):
    err, (p, unread) = problems_of(config_error, """\
source {
  FakeSource { schema = { fields { a = int, b = string, x = int, id = bigint, k = string, name = string } }, plugin_output = "orders" } FakeSource { schema = { fields { a = int, b = string, x = int, id = bigint, k = string, name = string } }, plugin_output = "other" }
}
sink {
  Console {
    plugin_input = ["ordres", "other"]
  }
}
""")
    assert (p.line, p.plugin, p.key) == (6, "sink[0] Console", "plugin_input")
    assert "'ordres' names no source or transform output" in p.message
    assert "did you mean 'orders'" in p.hint
    assert str(err).startswith(p.file + ":6:")
    assert unread.plugin == "source[0] FakeSource" and "read by nobody" in unread.message


def test_duplicate_output_names_both_plugins(config_error):
    _, problems = problems_of(config_error, """\
source {
  FakeSource { schema = { fields { a = int, b = string, x = int, id = bigint, k = string, name = string } }, plugin_output = "a" }
  FakeSource { schema = { fields { a = int, b = string, x = int, id = bigint, k = string, name = string } },
    plugin_output = "a"
  }
}
sink { Console { plugin_input = "a" } }
""")
    dup = [p for p in problems if "already used" in p.message]
    assert len(dup) == 1
    assert dup[0].plugin == "source[1] FakeSource" and dup[0].line == 4
    assert "source[0] FakeSource" in dup[0].message


def test_output_read_by_nobody(config_error):
    _, (p,) = problems_of(config_error, """\
source {
  FakeSource { schema = { fields { a = int, b = string, x = int, id = bigint, k = string, name = string } }, plugin_output = "a" }
  FakeSource { schema = { fields { a = int, b = string, x = int, id = bigint, k = string, name = string } }, plugin_output = "b" }
}
sink { Console { plugin_input = "a" } }
""")
    assert p.plugin == "source[1] FakeSource" and "'b'" in p.message and "read by nobody" in p.message
    assert p.line == 3


def test_cycle_prints_its_path(config_error):
    _, problems = problems_of(config_error, """\
source { FakeSource { schema = { fields { a = int, b = string, x = int, id = bigint, k = string, name = string } }, plugin_output = "s" } }
transform {
  Sql { plugin_input = ["s", "b"], plugin_output = "a", query = "select * from s" }
  Filter { plugin_input = "a", plugin_output = "b", include_fields = [x] }
}
sink { Console { plugin_input = "a" } }
""")
    (cycle,) = [p for p in problems if "cycle" in p.message]
    assert "transform[0] Sql (a) -> transform[1] Filter (b) -> transform[0] Sql (a)" in cycle.message
    assert cycle.line == 3


def test_self_reading_transform_is_a_cycle(config_error):
    _, problems = problems_of(config_error, """\
source { FakeSource { schema = { fields { a = int, b = string, x = int, id = bigint, k = string, name = string } }, plugin_output = "s" } }
transform { Filter { plugin_input = ["s", "t"], plugin_output = "t", include_fields = [x] } }
sink { Console { plugin_input = "t" } }
""")
    assert any("cycle" in p.message for p in problems)


def test_sink_with_an_empty_input_list(config_error):
    _, problems = problems_of(config_error, 'source { FakeSource { schema = { fields { a = int, b = string, x = int, id = bigint, k = string, name = string } } } }\nsink {\n  Console { plugin_input = [] }\n}\n')
    assert any("input list is empty" in p.message and p.line == 3 for p in problems)


def test_every_error_is_reported_at_once(config_error):
    err, problems = problems_of(config_error, """\
env { job.mode = NOPE }
source { FakeSource { schema = { fields { a = int, b = string, x = int, id = bigint, k = string, name = string } }, plugin_output = "a", parallelism = 0 } }
transform { Sql { plugin_input = "zzz", plugin_output = "t" } }
sink { Console { plugin_input = "t" } Console { plugin_input = "t" } }
""")
    text = str(err)
    assert "unknown job.mode" in text
    assert "'zzz' names no source or transform output" in text
    assert "option 'query'" not in text or "required" in text
    assert "the option 'query' is required" in text
    assert len(problems) >= 3


def test_conflicting_legacy_name(config_error):
    _, (p,) = problems_of(config_error, 'source { FakeSource { schema = { fields { a = int, b = string, x = int, id = bigint, k = string, name = string } }, plugin_output = "a", result_table_name = "b" } }\n'
                                        'sink { Console { plugin_input = "a" } }\n')
    assert p.key == "result_table_name" and "disagree" in p.message


def test_plugin_in_the_wrong_section(config_error):
    _, (p,) = problems_of(config_error, "source { Console { } }\nsink { Console { } }\n")
    assert "'Console' is not a source plugin" in p.message


def test_sql_syntax_error_points_into_the_query(config_error):
    _, (p,) = problems_of(config_error, 'source { FakeSource { schema = { fields { a = int, b = string, x = int, id = bigint, k = string, name = string } } } }\ntransform {\n  Sql {\n'
                                        '    query = "select * fro this where"\n  }\n}\nsink { Console { } }\n')
    assert p.key == "query" and p.line == 4 and "SQL syntax error" in p.message


def test_missing_required_option(config_error):
    _, problems = problems_of(config_error, "source { FakeSource { schema = { fields { a = int } } } }\n"
                                            "sink {\n  LocalFile { }\n}\n")
    (p,) = [p for p in problems if "'path'" in p.message]
    assert "the option 'path' is required" in p.message and p.line == 3


def test_exclusive_options(config_error):
    _, (p,) = problems_of(config_error, 'source { FakeSource { schema = { fields { a = int, b = string, x = int, id = bigint, k = string, name = string } } } }\n'
                                        'transform { Filter { include_fields = [a], exclude_fields = [b] } }\n'
                                        'sink { Console { } }\n')
    assert "exactly one of include_fields, exclude_fields" in p.message


def test_unknown_and_unrunnable_plugins_plan_with_warnings(plan_of):
    plan = plan_of("source { Socket { } }\ntransform { Frobnicate { } }\nsink { Console { } }\n")
    codes = [w.get("code") for w in plan.warnings]
    assert codes.count("not-runnable") == 2
    assert len(plan.pipelines) == 1
