"""SeaTunnel's engine planning rules (docs/planning.md): equal row types, multi-table sources and sinks,
the multi-table shuffle, action and chain names, the parser's order, Jdbc's committer slot, the
simple-graph tolerance and the catalog keys carried to the sinks."""

from __future__ import annotations

import json

from airflow_provider_seatunnel.plan.model import JobPlan
from airflow_provider_seatunnel.plan.render import render_text

AB = "schema = { fields { a = int, b = string } }"
AC = "schema = { fields { a = int, c = bigint } }"

MULTI = """
  FakeSource {
    plugin_output = "multi"
    parallelism = 3
    tables_configs = [
      { schema { table = "db.t1", fields { id = bigint, name = string },
                 primaryKey { name = "pk1", columnNames = [id] } } },
      { schema { table = "db.t2", fields { k = int } } }
    ]
  }
"""


def vertex(plan, ref, pipeline=0):
    return next(v for v in plan.pipelines[pipeline].vertices if v.ref == ref)


# --- equal row types -----------------------------------------------------------------------------


def test_a_sink_reading_two_row_types_is_a_located_error(config_error):
    err = config_error(f"""\
source {{
  FakeSource {{ plugin_output = "x", {AB} }}
  FakeSource {{ plugin_output = "y", {AC} }}
}}
sink {{
  Console {{ plugin_input = ["x", "y"] }}
}}
""")
    (p,) = [p for p in err.problems if "different row types" in p.message]
    assert (p.line, p.plugin, p.key) == (6, "sink[0] Console", "plugin_input")
    assert "{a = int, b = string}" in p.message and "{a = int, c = bigint}" in p.message
    assert "source[1] FakeSource" in p.message and p.hint and "same" in p.hint


def test_a_union_transform_reading_two_row_types_is_an_error(config_error):
    err = config_error(f"""
source {{ FakeSource {{ plugin_output = "x", {AB} }} FakeSource {{ plugin_output = "y", {AC} }} }}
transform {{ Filter {{ plugin_input = ["x", "y"], plugin_output = "f", include_fields = [a] }} }}
sink {{ Console {{ plugin_input = "f" }} }}
""")
    assert any(p.plugin == "transform[0] Filter" and "different row types" in p.message for p in err.problems)


def test_equal_row_types_plan_and_a_join_may_combine_different_ones(plan_of):
    plan = plan_of(f"""
source {{ FakeSource {{ plugin_output = "x", {AB} }} FakeSource {{ plugin_output = "y", {AB} }} }}
sink {{ Console {{ plugin_input = ["x", "y"] }} }}
""")
    assert len(plan.pipelines) == 2
    joined = plan_of(f"""
source {{ FakeSource {{ plugin_output = "x", {AB} }} FakeSource {{ plugin_output = "y", {AC} }} }}
transform {{ Sql {{ plugin_input = ["x", "y"], plugin_output = "j",
                   query = "select x.a, x.b, y.c from x join y on x.a = y.a" }} }}
sink {{ Console {{ plugin_input = "j" }} }}
""")
    assert len(joined.pipelines) == 1


def test_unknown_row_types_leave_a_run_time_check_in_the_plan(plan_of):
    plan = plan_of(f"""
source {{
  FakeSource {{ plugin_output = "x", {AB} }}
  Jdbc {{ plugin_output = "y", url = "jdbc:postgresql://db/x", driver = "org.postgresql.Driver",
          query = "select 1 as a, 'b' as b" }}
}}
sink {{ Console {{ plugin_input = ["x", "y"] }} }}
""")
    for p in plan.pipelines:  # each clone of the split sink carries the whole sink's check
        (check,) = vertex(plan, "sink[0]", plan.pipelines.index(p)).runtime_checks
        assert check["check"] == "equal_row_types" and check["inputs"] == ["source[0]", "source[1]"]
        assert check["datasets"] == ["x", "y"] and "source[1] Jdbc" in check["reason"]
    doc = plan.to_dict()
    assert doc["pipelines"][0]["vertices"][-1]["runtime_checks"][0]["check"] == "equal_row_types"
    assert "run-time check: one row type on inputs x, y" in render_text(plan)


# --- multi-table -----------------------------------------------------------------------------------


def test_a_multi_table_source_plans_one_multi_table_sink(plan_of):
    plan = plan_of(f"source {{ {MULTI} }}\nsink {{ Console {{ plugin_input = \"multi\", multi_table_sink_replica = 2 }} }}")
    (p,) = plan.pipelines
    source, sink = vertex(plan, "source[0]"), vertex(plan, "sink[0]")
    assert source.tables == ("db.t1", "db.t2") and source.action_name == "Source[0]-FakeSource"
    assert sink.parallelism == 3  # its input's, as SeaTunnel sets it
    assert sink.multi_table == {"tables": ["db.t1", "db.t2"], "replicas": 2,
                                "action_name": "Sink[0]-Console-MultiTableSink",
                                "table_sinks": ["Sink[0]-Console-db.t1", "Sink[0]-Console-db.t2"]}
    assert sink.action_name == "Sink[0]-Console-MultiTableSink"
    assert p.shuffle is None  # one downstream vertex: no shuffle
    text = render_text(plan)
    assert "multi-table sink Sink[0]-Console-MultiTableSink: 2 tables (db.t1, db.t2)" in text
    doc = json.loads(json.dumps(plan.to_dict()))
    assert doc["pipelines"][0]["vertices"][1]["multi_table"]["tables"] == ["db.t1", "db.t2"]
    assert JobPlan.from_dict(doc).to_dict() == plan.to_dict()


def test_a_multi_table_source_feeding_several_sinks_is_shuffled(plan_of):
    plan = plan_of(f"""source {{ {MULTI} }}
sink {{ Console {{ plugin_input = "multi" }} Assert {{ plugin_input = "multi", rules {{ row_rules = [{{ rule_type = MIN_ROW, rule_value = 1 }}] }} }} }}""")
    (p,) = plan.pipelines
    assert p.shuffle == {"name": "Shuffle [Source[0]-FakeSource]", "after": "source[0]",
                         "before": ["sink[0]", "sink[1]"], "parallelism": 3, "tables": ["db.t1", "db.t2"]}
    assert [vertex(plan, s).parallelism for s in ("source[0]", "sink[0]", "sink[1]")] == [3, 1, 1]
    assert any("multi-table shuffle" in n for n in vertex(plan, "sink[0]").notes)
    assert "shuffle: Shuffle [Source[0]-FakeSource] × 3" in render_text(plan)
    assert plan.to_dict()["pipelines"][0]["shuffle"]["name"] == "Shuffle [Source[0]-FakeSource]"


def test_a_sink_mixing_a_multi_table_source_with_another_is_an_error(config_error):
    err = config_error(f"""source {{ {MULTI}
  FakeSource {{ plugin_output = "one", {AB} }}
}}
sink {{ Console {{ plugin_input = ["multi", "one"] }} }}""")
    (p,) = [p for p in err.problems if "multi-table" in p.message]
    assert p.plugin == "sink[0] Console" and p.key == "plugin_input"
    assert "source[0] FakeSource (2 tables)" in p.message and "SeaTunnel refuses" in p.message


def test_a_transform_on_a_multi_table_source_plans_with_a_warning(plan_of):
    plan = plan_of(f"""source {{ {MULTI} }}
transform {{ Copy {{ plugin_input = "multi", plugin_output = "c", fields {{ k2 = k }} }} }}
sink {{ Console {{ plugin_input = "c" }} }}""")
    (w,) = [w for w in plan.warnings if w.get("code") == "seatunnel-refuses"]
    assert w["plugin"] == "transform[0] Copy" and w["severity"] == "warning"
    assert "runs once per table here" in w["message"]
    assert vertex(plan, "sink[0]").multi_table["tables"] == ["db.t1", "db.t2"]


def test_under_strict_a_transform_on_a_multi_table_source_is_an_error(monkeypatch, config_error):
    """What the pinned SeaTunnel refuses is a portability problem: an error under strict."""
    monkeypatch.setenv("SEATUNNEL_STRICT", "true")
    err = config_error(f"""source {{ {MULTI} }}
transform {{ Copy {{ plugin_input = "multi", plugin_output = "c", fields {{ k2 = k }} }} }}
sink {{ Console {{ plugin_input = "c" }} }}""")
    (p,) = err.problems
    assert (p.code, p.severity, p.plugin) == ("seatunnel-refuses", "error", "transform[0] Copy")


def test_a_jdbc_table_list_is_a_multi_table_source(plan_of):
    plan = plan_of("""source { Jdbc { plugin_output = "j", url = "jdbc:postgresql://db/x", driver = "org.postgresql.Driver",
  table_list = [{ table_path = "public.a" }, { table_path = "public.b" }] } }
sink { Console { plugin_input = "j" } }""")
    assert vertex(plan, "sink[0]").multi_table["tables"] == ["public.a", "public.b"]


# --- names and order -------------------------------------------------------------------------------


def test_chain_action_names_are_unique_and_count_the_parsers_takes(plan_of):
    plan = plan_of(f"""
source {{ FakeSource {{ plugin_output = "s", {AB} }} }}
transform {{
  Filter {{ plugin_input = "m", plugin_output = "f1", include_fields = [a] }}
  Sql {{ plugin_input = "s", plugin_output = "m", query = "select * from s" }}
  Filter {{ plugin_input = "m", plugin_output = "f2", include_fields = [b] }}
}}
sink {{ Console {{ plugin_input = "f1" }} Console {{ plugin_input = "f2" }} }}
""")
    (p,) = plan.pipelines
    names = {v.ref: v.action_name for v in p.vertices}
    # the first Filter waits for "m": taken at 0 and again at 3
    assert names["transform[1]"] == "Transform[1]-Sql"
    assert names["transform[2]"] == "Transform[2]-Filter" and names["transform[0]"] == "Transform[3]-Filter"
    chains = {v.chain_action_name for v in p.vertices if v.kind == "transform"}
    assert chains == {"TransformChain[Transform[1]-Sql]", "TransformChain[Transform[2]-Filter]",
                      "TransformChain[Transform[3]-Filter]"}
    readable = [c["name"] for c in p.chains]
    assert readable.count("TransformChain[Filter]") == 2  # the readable names repeat; the action names do not


def test_pipeline_numbers_follow_the_parsers_order_of_requeued_transforms(plan_of):
    plan = plan_of(f"""
source {{ FakeSource {{ plugin_output = "s1", {AB} }} FakeSource {{ plugin_output = "s2", {AB} }} }}
transform {{
  Filter {{ plugin_input = "u", plugin_output = "late", include_fields = [a] }}
  Sql {{ plugin_input = ["s1", "s2"], plugin_output = "u", query = "select * from s1 union all select * from s2" }}
  Filter {{ plugin_input = "u", plugin_output = "early", include_fields = [b] }}
}}
sink {{ Console {{ plugin_input = "late" }} LocalFile {{ plugin_input = "early", path = "/tmp/e", file_format_type = "csv" }} }}
""")
    # SeaTunnel takes transform[2] before the re-queued transform[0]: its branch comes first
    order = [[v.ref for v in p.vertices if v.kind == "transform"] for p in plan.pipelines]
    assert order == [["transform[1]", "transform[2]"], ["transform[1]", "transform[0]"]] * 2


# --- Jdbc's committer slot ---------------------------------------------------------------------------


def test_zeta_slots_count_a_jdbc_committer_only_with_exactly_once(plan_of):
    def zeta(extra):
        plan = plan_of(f"""source {{ FakeSource {{ {AB} }} }}
sink {{ Jdbc {{ url = "jdbc:postgresql://db/x", driver = "org.postgresql.Driver", table = "t",
               generate_sink_sql = true, database = "x" {extra} }} }}""")
        return plan.pipelines[0].slots["zeta"]

    assert zeta("") == 2  # the enumerator and one reader
    assert zeta(', is_exactly_once = true, xa_data_source_class_name = "org.postgresql.xa.PGXADataSource"') == 3


# --- simple-graph tolerance --------------------------------------------------------------------------


def test_a_simple_graph_with_a_misnamed_input_reads_the_previous_plugin(plan_of):
    plan = plan_of(f"""source {{ FakeSource {{ plugin_output = "orders", {AB} }} }}
transform {{ Filter {{ plugin_input = "ordrs", plugin_output = "f", include_fields = [a] }} }}
sink {{ Console {{ plugin_input = "filtered" }} }}""")
    (p,) = plan.pipelines
    assert p.edges == (("source[0]", "transform[0]"), ("transform[0]", "sink[0]"))
    warned = {w["plugin"]: w for w in plan.warnings if "names no source or transform output" in w["message"]}
    assert set(warned) == {"transform[0] Filter", "sink[0] Console"}
    assert "'ordrs'" in warned["transform[0] Filter"]["message"] and warned["sink[0] Console"]["line"] == 3
    assert warned["transform[0] Filter"]["hint"] == "did you mean 'orders'?"
    assert any("SeaTunnel's simple-graph rule" in n for n in vertex(plan, "sink[0]").notes)


def test_a_misnamed_input_in_a_complex_graph_stays_an_error(config_error):
    err = config_error(f"""source {{ FakeSource {{ plugin_output = "orders", {AB} }} }}
sink {{ Console {{ plugin_input = "ordrs" }} Console {{ plugin_input = "orders" }} }}""")
    assert any("'ordrs' names no source or transform output" in p.message and p.severity == "error"
               for p in err.problems)


# --- catalog keys -----------------------------------------------------------------------------------


KEYED = """FakeSource { plugin_output = "k", schema = {
  table = "db.users"
  fields { id = bigint, name = string, email = string }
  primaryKey { name = "pk_users", columnNames = [id] }
  constraintKeys = [{ constraintName = "uk_email", constraintType = UNIQUE_KEY,
                      constraintColumns = [{ columnName = email, sortType = DESC }] }]
} }"""


def test_catalog_keys_reach_the_sink_through_transforms_that_keep_their_columns(plan_of):
    plan = plan_of(f"""source {{ {KEYED} }}
transform {{ Filter {{ plugin_input = "k", plugin_output = "f", include_fields = [id, name] }} }}
sink {{ Console {{ plugin_input = "f" }} }}""")
    keys = {"primary_key": {"name": "pk_users", "columns": ["id"]}, "constraint_keys": []}
    assert vertex(plan, "source[0]").catalog["db.users"]["constraint_keys"] == [
        {"name": "uk_email", "type": "UNIQUE_KEY", "columns": [{"column": "email", "sort": "DESC"}]}]
    # email dropped: the unique key goes, the primary key stays
    assert vertex(plan, "transform[0]").catalog == {"db.users": keys}
    assert vertex(plan, "sink[0]").catalog == {"db.users": keys}
    assert "keys of db.users: primary key pk_users(id)" in render_text(plan)
    dropped = plan_of(f"""source {{ {KEYED} }}
transform {{ Filter {{ plugin_input = "k", plugin_output = "f", include_fields = [name] }} }}
sink {{ Console {{ plugin_input = "f" }} }}""")
    assert vertex(dropped, "sink[0]").catalog == {}


def test_a_malformed_primary_key_is_a_located_error(config_error):
    err = config_error(f"""source {{ FakeSource {{ {AB[:-2]}, primaryKey {{ columnNames = [a] }} }} }} }}
sink {{ Console {{ }} }}""")
    assert any("primaryKey needs a name" in p.message and p.plugin == "source[0] FakeSource" for p in err.problems)
