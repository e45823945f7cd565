"""Chains, the pipeline split (three typical job shapes and SeaTunnel's rules), physical plans."""

from __future__ import annotations

import re

import pytest

from airflow_provider_seatunnel.config import ConfigError

ONE_CHAIN = """
env { parallelism = 4 }
source { JDBC { url = "jdbc:mysql://db/shop", driver = "com.mysql.cj.jdbc.Driver", query = "SELECT * FROM orders" } }
transform { Sql { query = "SELECT order_id, SUM(amount) FROM this GROUP BY order_id" } }
sink { Elasticsearch { hosts = ["es-host:9200"], index = "orders_summary" } }
"""

TWO_SOURCES_UNION = """
source {
  JDBC { plugin_output = "orders", url = "jdbc:mysql://db/shop", driver = "d" }
  Socket { plugin_output = "events" }
}
transform { Sql { query = "SELECT * FROM orders UNION SELECT * FROM events" } }
sink { Elasticsearch { hosts = ["es-host:9200"], index = "events" } }
"""

ONE_SOURCE_TWO_SINKS = """
source { SqlServer-CDC { } }
sink {
  Elasticsearch { plugin_input = "SqlServer-CDC", hosts = ["es-host:9200"], index = "cdc" }
  JDBC { plugin_input = "SqlServer-CDC", url = "jdbc:mysql://db/x", driver = "d" }
}
"""


@pytest.mark.parametrize("text, count", [(ONE_CHAIN, 1), (TWO_SOURCES_UNION, 2), (ONE_SOURCE_TWO_SINKS, 1)])
def test_three_job_shapes_pipeline_counts(plan_of, text, count):
    assert len(plan_of(text).pipelines) == count


def test_two_sources_union_pipelines_are_the_two_paths(plan_of):
    p1, p2 = plan_of(TWO_SOURCES_UNION).pipelines
    assert [v.ref for v in p1.vertices] == ["source[0]", "transform[0]", "sink[0]"]
    assert [v.ref for v in p2.vertices] == ["source[1]", "transform[0]", "sink[0]"]
    assert p1.vertices[1].inputs == ("orders",) and p2.vertices[1].inputs == ("events",)
    assert p1.split["split"] and "2 inputs" in p1.split["reason"]
    assert any("UNION removes duplicates" in w["message"] for w in plan_of(TWO_SOURCES_UNION).warnings)


def test_a_join_across_inputs_keeps_its_part_one_pipeline(plan_of):
    plan = plan_of("""
        source {
          FakeSource { plugin_output = "a", schema { fields { id = bigint } } }
          FakeSource { plugin_output = "b", schema { fields { id = bigint } } }
        }
        transform { Sql { plugin_input = ["a", "b"], plugin_output = "j", query = "select a.id from a join b on a.id = b.id" } }
        sink { Console { plugin_input = "j" } }
    """)
    (p,) = plan.pipelines
    assert p.split == {"split": False, "reason": "not split: transform[0] Sql cannot run per input (a JOIN across "
                                                 "its inputs), so this part stays one pipeline"}


def test_one_source_two_sinks_binds_plugin_name_with_a_warning(plan_of):
    plan = plan_of(ONE_SOURCE_TWO_SINKS)
    assert [v.ref for v in plan.pipelines[0].vertices] == ["source[0]", "sink[0]", "sink[1]"]
    assert any("by its plugin name" in w["message"] for w in plan.warnings)


def test_two_sources_into_one_sink_split_in_two(plan_of):
    plan = plan_of("""
        env { job.mode = "BATCH" }
        source {
          FakeSource { schema = { fields { a = int, b = string, x = int, id = bigint, k = string, name = string } }, row.num = 10, parallelism = 1, result_table_name = "fake", schema { fields { c = int } } }
          FakeSource { schema = { fields { a = int, b = string, x = int, id = bigint, k = string, name = string } }, row.num = 10, result_table_name = "fake2", schema { fields { c = int } } }
        }
        transform { }
        sink {
          LocalFile {
            path = "/tmp/out"
            partition_dir_expression = "${k0}=${v0}"
            file_format_type = "text"
            source_table_name = ["fake", "fake2"]
          }
        }
    """)
    assert len(plan.pipelines) == 2
    assert plan.pipelines[0].vertices[-1].config["partition_dir_expression"] == "${k0}=${v0}"


def test_disconnected_parts_are_separate_pipelines(plan_of):
    plan = plan_of("""
        source { FakeSource { schema = { fields { a = int, b = string, x = int, id = bigint, k = string, name = string } }, plugin_output = "a" } FakeSource { schema = { fields { a = int, b = string, x = int, id = bigint, k = string, name = string } }, plugin_output = "b" } }
        sink { Console { plugin_input = "a" } Console { plugin_input = "b" } }
    """)
    assert [[v.ref for v in p.vertices] for p in plan.pipelines] == [["source[0]", "sink[0]"],
                                                                      ["source[1]", "sink[1]"]]
    assert not plan.pipelines[0].split["split"]


def test_branching_without_multi_input_stays_one_pipeline(plan_of):
    plan = plan_of("""
        source { FakeSource { schema = { fields { a = int, b = string, x = int, id = bigint, k = string, name = string } }, plugin_output = "s" } }
        transform {
          Filter { plugin_input = "s", plugin_output = "t1", include_fields = [a] }
          Filter { plugin_input = "s", plugin_output = "t2", exclude_fields = [a] }
        }
        sink { Console { plugin_input = "t1" } Console { plugin_input = "t2" } }
    """)
    assert len(plan.pipelines) == 1
    assert len(plan.pipelines[0].vertices) == 5


def test_once_split_branches_split_too(plan_of):
    plan = plan_of("""
        source { FakeSource { schema = { fields { a = int, b = string, x = int, id = bigint, k = string, name = string } }, plugin_output = "a" } FakeSource { schema = { fields { a = int, b = string, x = int, id = bigint, k = string, name = string } }, plugin_output = "b" } }
        transform { Sql { plugin_input = ["a", "b"], plugin_output = "t", query = "select * from this" } }
        sink { Console { plugin_input = "t" } Assert { plugin_input = "t", rules { row_rules = [{ rule_type = MIN_ROW, rule_value = 0 }] } } }
    """)
    assert len(plan.pipelines) == 4
    assert [[v.ref for v in p.vertices] for p in plan.pipelines] == [
        ["source[0]", "transform[0]", "sink[0]"], ["source[0]", "transform[0]", "sink[1]"],
        ["source[1]", "transform[0]", "sink[0]"], ["source[1]", "transform[0]", "sink[1]"]]


def test_split_paths_take_the_predecessors_parallelism(plan_of):
    plan = plan_of("""
        source {
          FakeSource { schema = { fields { a = int, b = string, x = int, id = bigint, k = string, name = string } }, plugin_output = "a", parallelism = 2 }
          FakeSource { schema = { fields { a = int, b = string, x = int, id = bigint, k = string, name = string } }, plugin_output = "b", parallelism = 6 }
        }
        transform {
          Sql { plugin_input = ["a", "b"], plugin_output = "t", query = "select * from this", parallelism = 8 }
        }
        sink { Console { plugin_input = "t" } }
    """)
    assert [[v.parallelism for v in p.vertices] for p in plan.pipelines] == [[2, 2, 2], [6, 6, 6]]
    assert any("asked for parallelism 8; runs at 2" in n for n in plan.pipelines[0].vertices[1].notes)


@pytest.mark.parametrize("query, reason", [
    ("select a.x from a join b on a.id = b.id", "a JOIN"),
    ("select k, count(*) from this group by k", "an aggregation"),
    ("select * from a intersect select * from b", "INTERSECT"),
])
def test_combining_sql_keeps_its_part_whole(plan_of, query, reason):
    plan = plan_of(f"""
        source {{ FakeSource {{ schema = {{ fields {{ a = int, b = string, x = int, id = bigint, k = string, name = string }} }}, plugin_output = "a" }} FakeSource {{ schema = {{ fields {{ a = int, b = string, x = int, id = bigint, k = string, name = string }} }}, plugin_output = "b" }} }}
        transform {{ Sql {{ plugin_input = ["a", "b"], plugin_output = "t", query = "{query}" }} }}
        sink {{ Console {{ plugin_input = "t" }} }}
    """)
    (p,) = plan.pipelines
    assert not p.split["split"]
    assert reason in p.split["reason"] and "stays one pipeline" in p.split["reason"]
    assert [v.ref for v in p.vertices] == ["source[0]", "source[1]", "transform[0]", "sink[0]"]


def test_union_all_of_inputs_splits_without_warning(plan_of):
    plan = plan_of("""
        source { FakeSource { schema = { fields { a = int, b = string, x = int, id = bigint, k = string, name = string } }, plugin_output = "a" } FakeSource { schema = { fields { a = int, b = string, x = int, id = bigint, k = string, name = string } }, plugin_output = "b" } }
        transform { Sql { plugin_input = ["a", "b"], plugin_output = "t",
                          query = "select x from a union all select x from b" } }
        sink { Console { plugin_input = "t" } }
    """)
    assert len(plan.pipelines) == 2
    assert not any("UNION" in w["message"] for w in plan.warnings if w.get("code") != "not-portable")


def layered(k: int) -> str:
    """k stacked layers of two transforms each reading both of the previous layer: 2^k paths."""
    lines = ['source { FakeSource { schema = { fields { a = int, b = string, x = int, id = bigint, k = string, name = string } }, plugin_output = "l0a" } FakeSource { schema = { fields { a = int, b = string, x = int, id = bigint, k = string, name = string } }, plugin_output = "l0b" } }', "transform {"]
    for i in range(1, k + 1):
        for side in "ab":
            lines.append(f'  Copy {{ plugin_input = ["l{i - 1}a", "l{i - 1}b"], plugin_output = "l{i}{side}", fields {{ c = a }} }}')
    lines.append("}")
    lines.append(f'sink {{ Console {{ plugin_input = ["l{k}a", "l{k}b"] }} }}')
    return "\n".join(lines)


def test_path_explosion_is_a_config_error_not_a_hang(config_error):
    err = config_error(layered(40))  # 2^41 paths
    assert "would split into 2199023255552 pipelines, more than the limit of 256" in str(err)
    assert err.first.key == "plan.max-pipelines"


def test_pipeline_limit_is_configurable(plan_of, config_error):
    assert len(plan_of("env { plan.max-pipelines = 64 }\n" + layered(5)).pipelines) == 64
    assert "more than the limit of 63" in str(config_error("env { plan.max-pipelines = 63 }\n" + layered(5)))


def test_chains_fuse_consecutive_single_input_transforms(plan_of):
    plan = plan_of("""
        source { FakeSource { schema = { fields { a = int, b = string, x = int, id = bigint, k = string, name = string } } } }
        transform { Sql { query = "select * from this" } Filter { include_fields = [a] } Copy { fields { b = a } } }
        sink { Console { } }
    """)
    (p,) = plan.pipelines
    assert p.chains == ({"name": "TransformChain[Sql->Filter->Copy]",
                         "vertices": ["transform[0]", "transform[1]", "transform[2]"], "parallelism": 1},)
    assert {v.chain for v in p.vertices if v.kind == "transform"} == {"TransformChain[Sql->Filter->Copy]"}


def test_multi_output_transform_ends_a_chain(plan_of):
    plan = plan_of("""
        source { FakeSource { schema = { fields { a = int, b = string, x = int, id = bigint, k = string, name = string } }, plugin_output = "s" } }
        transform {
          Sql { plugin_input = "s", plugin_output = "a", query = "select * from s" }
          Filter { plugin_input = "a", plugin_output = "b", include_fields = [x] }
          Filter { plugin_input = "a", plugin_output = "c", include_fields = [x] }
        }
        sink { Console { plugin_input = "b" } Console { plugin_input = "c" } }
    """)
    names = sorted(c["name"] for c in plan.pipelines[0].chains)
    assert names == ["TransformChain[Filter]", "TransformChain[Filter]", "TransformChain[Sql]"]


def test_chain_members_run_at_the_heads_parallelism(plan_of):
    plan = plan_of("""
        source { FakeSource { schema = { fields { a = int, b = string, x = int, id = bigint, k = string, name = string } }, parallelism = 4 } }
        transform { Sql { query = "select * from this" } Filter { include_fields = [a], parallelism = 8 } }
        sink { Console { } }
    """)
    v = {v.ref: v for v in plan.pipelines[0].vertices}
    assert v["transform[1]"].parallelism == 4
    notes = v["transform[1]"].notes
    assert any("asked for parallelism 8; runs at 4 in TransformChain[Sql->Filter]" in n for n in notes)


def test_physical_plan_slots_and_task_groups(plan_of):
    plan = plan_of("""
        source { FakeSource { schema = { fields { a = int, b = string, x = int, id = bigint, k = string, name = string } }, parallelism = 4 } }
        transform { Sql { query = "select * from this" } }
        sink { LocalFile { path = "/tmp/out", file_format_type = "csv", parallelism = 2 } }
    """)
    (p,) = plan.pipelines
    assert [(g.vertices, g.parallelism) for g in p.task_groups] == [
        (("source[0]", "transform[0]"), 4), (("sink[0]",), 2)]
    assert p.slots["with_fusion"] == 6  # fused: source+Sql at 4, the sink alone at 2
    assert p.slots["without_fusion"] == 10
    assert p.slots["zeta"] == 1 + 1 + 4  # enumerator, file committer, 4 source groups
    assert len(p.physical_vertices()) == 6
    assert p.retry == {"times": 3, "interval_seconds": 3}


def test_plan_json_doc_states_the_slot_formulas(plan_of):
    from pathlib import Path

    (p,) = plan_of("source { FakeSource { schema { fields { id = bigint } } } }\nsink { Console { } }\n").pipelines
    doc = (Path(__file__).parents[2] / "docs" / "plan-json.md").read_text()
    assert set(p.slots["formula"]) == {"with_fusion", "without_fusion", "zeta"}
    for count, formula in p.slots["formula"].items():
        assert f"| `{count}` | `{formula}` |" in doc


def test_restore_and_checkpoint_settings(plan_of):
    plan = plan_of("""
        env { job.retry.times = 0, job.retry.interval.seconds = 10, checkpoint.interval = 5000, job.mode = streaming }
        source { FakeSource { schema = { fields { a = int, b = string, x = int, id = bigint, k = string, name = string } } } }
        sink { Console { } }
    """)
    (p,) = plan.pipelines
    assert p.retry == {"times": 0, "interval_seconds": 10}
    assert p.checkpoint == {"interval_ms": 5000, "timeout_ms": None}
    assert plan.mode == "STREAMING"


# --- task ids -----------------------------------------------------------------------------

TWO_JOBS = """
source {{
  {extra}
  FakeSource {{ schema = {{ fields {{ id = bigint }} }}, plugin_output = "orders", row.num = {rows} }}
  FakeSource {{ schema = {{ fields {{ id = bigint }} }}, plugin_output = "users" }}
}}
sink {{
  {extra_sink}
  LocalFile {{ plugin_input = "orders", path = "/data/orders", file_format_type = "csv" }}
  Console {{ plugin_input = "users" }}
}}
"""


def task_ids(plan):
    return [p.task_id for p in plan.pipelines]


def test_task_ids_are_valid_unique_and_readable(plan_of):
    ids = task_ids(plan_of(TWO_JOBS.format(extra="", extra_sink="", rows=5)))
    assert len(set(ids)) == 2
    assert all(re.fullmatch(r"[A-Za-z0-9_.-]{1,250}", t) for t in ids)
    assert ids[0].startswith("orders_to_localfile_") and ids[1].startswith("users_to_console_")


def test_adding_a_pipeline_renames_no_other(plan_of):
    before = task_ids(plan_of(TWO_JOBS.format(extra="", extra_sink="", rows=5)))
    after_plan = plan_of(TWO_JOBS.format(extra='FakeSource { schema = { fields { a = int, b = string, x = int, id = bigint, k = string, name = string } }, plugin_output = "new" }',
                                         extra_sink='Console { plugin_input = "new" }', rows=5))
    after = task_ids(after_plan)
    assert len(after) == 3
    assert set(before) <= set(after)
    assert [p.id for p in after_plan.pipelines if p.task_id == before[0]] == [2]  # renumbered, same id


def test_tuning_an_option_keeps_the_task_id(plan_of):
    a = task_ids(plan_of(TWO_JOBS.format(extra="", extra_sink="", rows=5)))
    b = task_ids(plan_of(TWO_JOBS.format(extra="", extra_sink="", rows=500)))
    assert a == b


def test_changing_the_target_changes_the_task_id(plan_of):
    a = task_ids(plan_of(TWO_JOBS.format(extra="", extra_sink="", rows=5)))
    b = task_ids(plan_of(TWO_JOBS.format(extra="", extra_sink="", rows=5).replace("/data/orders", "/data/o2")))
    assert a[0] != b[0] and a[1] == b[1]


def test_identical_pipelines_get_distinct_ids_from_their_content(plan_of):
    plan = plan_of("""
        source { FakeSource { schema = { fields { a = int, b = string, x = int, id = bigint, k = string, name = string } }, plugin_output = "a", row.num = 1 } FakeSource { schema = { fields { a = int, b = string, x = int, id = bigint, k = string, name = string } }, plugin_output = "a2", row.num = 1 } }
        sink { Console { plugin_input = "a" } Console { plugin_input = "a2" } }
    """)
    assert len(set(task_ids(plan))) == 2


def test_plan_json_round_trips(plan_of):
    from airflow_provider_seatunnel.plan import JobPlan

    plan = plan_of(TWO_SOURCES_UNION)
    assert JobPlan.from_dict(plan.to_dict(secrets=True)).to_dict() == plan.to_dict()


def test_secrets_are_redacted_in_the_plan(plan_of):
    plan = plan_of('source { Jdbc { url = "jdbc:postgresql://h/db", driver = "org.postgresql.Driver", '
                   'user = "u", password = "s3cret", query = "select 1" } }\nsink { Console { } }\n')
    text = str(plan.to_dict())
    assert "s3cret" not in text and "******" in text
    assert "s3cret" in str(plan.to_dict(secrets=True))


def test_config_error_for_limit_is_configerror_type(config_error):
    assert isinstance(config_error(layered(9)), ConfigError)
