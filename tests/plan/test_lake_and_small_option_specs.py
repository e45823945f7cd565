"""The option specs of the lakehouse connectors and the small plugins: an undeclared key is the
unknown-option warning with the closest declared key, values are typed by the declaration, and the
lakehouse rules the declarations cannot state keep their messages."""

from __future__ import annotations

import pytest

from airflow_provider_seatunnel.config.errors import ConfigError
from airflow_provider_seatunnel.connectors.lakehouse.options import column_names, exclusive
from airflow_provider_seatunnel.plan.compiler import compile_text
from airflow_provider_seatunnel.spi.options import OptionError
from airflow_provider_seatunnel.spi.optionspec import Option, OptionSpec

FAKE = 'FakeSource { plugin_output = "t", schema = { fields { id = bigint, s = string } } }'


def _job(source: str = FAKE, transform: str = "", sink: str = 'Console { plugin_input = "t" }') -> str:
    return (f"env {{ job.mode = BATCH }}\nsource {{ {source} }}\n"
            + (f"transform {{ {transform} }}\n" if transform else "") + f"sink {{ {sink} }}\n")


def _unknown(text: str) -> dict[str, str | None]:
    plan = compile_text("job.conf", text)
    return {w["key"]: w.get("hint") for w in plan.warnings if w.get("code") == "unknown-option"}


@pytest.mark.parametrize(("sink", "key", "hint"), [
    ('Delta { plugin_input = "t", path = "/d/t", primary_key = "id" }', "primary_key", "primary_keys"),
    ('Delta { plugin_input = "t", path = "/d/t", use_version = 3 }', "use_version", None),  # a source option
    ('Paimon { plugin_input = "t", warehouse = "/w", database = "d", table = "t", data_save_mod = APPEND_DATA }',
     "data_save_mod", "data_save_mode"),
    ('Console { plugin_input = "t", log.print.dta = false }', "log.print.dta", "log.print.data"),
])
def test_an_undeclared_sink_key_warns_with_the_closest_declared_one(sink, key, hint):
    found = _unknown(_job(sink=sink))
    assert key in found, found
    if hint is not None:
        assert found[key] == f"did you mean '{hint}'?"


def test_an_iceberg_key_under_a_declared_prefix_is_located_at_its_full_name():
    found = _unknown(_job(sink='Iceberg { plugin_input = "t", table = "t", iceberg.catalog.config = { type = hadoop, '
                               'warehouse = "/w" }, "iceberg.table.primary-key" = "id" }'))
    assert found == {"iceberg.table.primary-key": "did you mean 'iceberg.table.primary-keys'?"}


def test_the_small_plugins_warn_of_keys_they_do_not_have_and_take_their_older_names():
    source = 'FakeSource { plugin_output = "t", schema = { fields { id = bigint, s = string } }, row.nm = 3 }'
    found = _unknown(_job(source=source, transform='Copy { plugin_input = "t", plugin_output = "c", field { x = id } }',
                          sink='Console { plugin_input = "c" }'))
    assert found == {"row.nm": "did you mean 'row.num'?", "field": "did you mean 'fields'?"}
    # Filter's older name `fields` is read as include_fields; SeaTunnel's own configs set split.row
    source = 'FakeSource { plugin_output = "t", schema = { fields { id = bigint, s = string } }, split.row = 2 }'
    plan = compile_text("job.conf", _job(source=source, transform='Filter { plugin_input = "t", plugin_output = "f", '
                                                                    'fields = [s] }', sink='Console { plugin_input = "f" }'))
    assert not plan.warnings
    filtered = next(v for v in plan.pipelines[0].vertices if v.plugin == "Filter")
    assert list(filtered.schema) == ["s"]


@pytest.mark.parametrize(("sink", "key", "message"), [
    ('Console { plugin_input = "t", log.print.delay.ms = -1 }', "log.print.delay.ms", "must be an integer >= 0"),
    ('Console { plugin_input = "t", log.print.data = maybe }', "log.print.data", "must be true or false"),
    ('Delta { plugin_input = "t", path = "/d/t", partition_keys { a = 1 } }', "partition_keys", "must be a list"),
])
def test_values_are_typed_by_the_declaration(sink, key, message):
    with pytest.raises(ConfigError) as e:
        compile_text("job.conf", _job(sink=sink))
    [problem] = e.value.problems
    assert problem.key == key and message in problem.message, problem.message


def test_a_filter_with_both_lists_is_one_problem_of_its_spec():
    with pytest.raises(ConfigError) as e:
        compile_text("job.conf", _job(transform='Filter { plugin_input = "t", plugin_output = "f", fields = [s], '
                                                'exclude_fields = [id] }', sink='Console { plugin_input = "f" }'))
    [problem] = e.value.problems
    assert problem.message.startswith("exactly one of include_fields, exclude_fields must be set")
    assert problem.key == "exclude_fields"


SPEC = OptionSpec((Option("keys", "list"), Option("a", "long"), Option("b", "long")))


def test_column_names_refuse_an_empty_list_a_non_name_and_a_name_twice_in_any_case():
    assert column_names(SPEC.parse({}), "keys") == ()
    assert column_names(SPEC.parse({"keys": ["id", "b, c"]}), "keys") == ("id", "b", "c")
    for value, message in (([], "must name columns"), ([1], "must name columns"), ("id, ID", "names ID, id twice")):
        with pytest.raises(OptionError, match=message):
            column_names(SPEC.parse({"keys": value}), "keys")


def test_exclusive_options_name_the_last_one_set():
    exclusive(SPEC.parse({"a": 1}), "a", "b")
    with pytest.raises(OptionError) as e:
        exclusive(SPEC.parse({"a": 1, "b": 2}), "a", "b")
    assert e.value.key == "b" and e.value.message == "a and b exclude each other"
