"""HOCON as Typesafe Config reads it, case by case, section by section of the spec: where pyhocon
agrees the case is also checked against pyhocon; where it does not (or where SeaTunnel's dialect
differs on purpose), against the result the spec states."""

from __future__ import annotations

import json

import pytest
from pyhocon import ConfigFactory

from airflow_provider_seatunnel.config import hocon
from airflow_provider_seatunnel.config.errors import ConfigError
from airflow_provider_seatunnel.config.loader import load_job


def read(text: str, env: dict | None = None, file: str = "t.conf"):
    root = hocon.parse(text, file)
    env = env or {}
    hocon.resolve(root, lambda name: env.get(name, hocon.MISSING), file)
    return hocon.to_plain(root)


def pyhocon_reads(text: str):
    return json.loads(json.dumps(ConfigFactory.parse_string(text).as_plain_ordered_dict()))


def same_as_pyhocon(text: str):
    ours = read(text)
    assert ours == pyhocon_reads(text)
    return ours


# -- objects and merging ---------------------------------------------------------------------------

def test_a_later_object_merges_into_an_earlier_one():
    assert same_as_pyhocon("a { x = 1, y { p = 1 } }\na { y { q = 2 }, z = 3 }") == \
        {"a": {"x": 1, "y": {"p": 1, "q": 2}, "z": 3}}


def test_a_later_scalar_replaces_an_object_and_an_object_replaces_a_scalar():
    # the spec's rule; pyhocon refuses the second (an object after a scalar)
    assert read("a { x = 1 }\na = 5\nb = 5\nb { y = 2 }") == {"a": 5, "b": {"y": 2}}


def test_an_object_merged_with_a_substitution_keeps_every_field():
    # problem 4: env = {job.name} only, before
    text = 'base = {job.mode = "BATCH", parallelism = 2}\nenv = ${base}\nenv { job.name = "nightly" }'
    assert read(text)["env"] == {"job.mode": "BATCH", "parallelism": 2, "job.name": "nightly"}
    nested = "base { a = 1 }\nx = ${base}\nx { b = 2 }"
    assert same_as_pyhocon(nested)["x"] == {"a": 1, "b": 2}


def test_an_object_then_a_substitution_of_an_object_merges_too():
    assert read("o = { a = 1 }\np = { b = 2 }\no = ${p}")["o"] == {"a": 1, "b": 2}


# -- substitutions ----------------------------------------------------------------------------------

def test_an_undefined_optional_substitution_keeps_the_earlier_value():
    # problem 1: parallelism 1 (the default) and a passing validate, before
    text = "parallelism = 4\nparallelism = ${?PARALLELISM}"
    assert read(text) == {"parallelism": 4}
    assert read(text, {"PARALLELISM": "8"}) == {"parallelism": "8"}
    assert read("a { p = 4 }\na { p = ${?P} }") == {"a": {"p": 4}}


def test_an_optional_substitution_alone_leaves_the_field_unset():
    assert read("x = ${?NOPE}\ny = 1") == {"y": 1}
    assert read("l = [1, ${?NOPE}, 3]") == {"l": [1, 3]}


def test_every_unresolved_variable_is_reported_at_once_with_its_position():
    # problem 7: only the first, before
    text = "a = ${one}\nb {\n  c = ${two}\n}\nd = [${three}]\ne = x ${four}\n"
    with pytest.raises(ConfigError) as e:
        read(text)
    found = [(p.line, p.col, p.message) for p in e.value.problems]
    assert found == [(1, 5, "unresolved variable ${one}"), (3, 7, "unresolved variable ${two}"),
                     (5, 6, "unresolved variable ${three}"), (6, 7, "unresolved variable ${four}")]
    assert all(p.file == "t.conf" for p in e.value.problems)


def test_a_substitution_gets_a_copy_concatenation_changes_no_operand():
    # problem 5: the schema of the source using ${a} alone gained b's fields, before
    text = "a { f1 = int, n { x = 1 } }\nb { f2 = string, n { y = 2 } }\none = ${a} ${b}\ntwo = ${a}"
    got = read(text)
    assert got["two"] == {"f1": "int", "n": {"x": 1}} == got["a"]
    assert got["one"] == {"f1": "int", "n": {"x": 1, "y": 2}, "f2": "string"}
    assert got == pyhocon_reads(text)


def test_list_concatenation_and_append():
    assert same_as_pyhocon("a = [1, 2]\nb = ${a} [3]") == {"a": [1, 2], "b": [1, 2, 3]}
    assert read("a = [1]\na += 2\na += 3") == {"a": [1, 2, 3]}


def test_string_concatenation_keeps_inner_whitespace():
    assert same_as_pyhocon('x = "a"\ny = ${x} b  "c"') == {"x": "a", "y": "a b  c"}


# -- self-referential fields ------------------------------------------------------------------------

def test_a_self_reference_means_the_earlier_value():
    # problem 6: a RecursionError traceback, before
    got = read("defaults = {row.num = 5}\ndefaults = { extra = ${defaults} }")
    assert got == {"defaults": {"row.num": 5, "extra": {"row.num": 5}}}
    assert read("path = a\npath = ${path}/b\npath = ${path}/c") == {"path": "a/b/c"}


def test_a_self_reference_inside_a_block():
    # problem 6, inside env: a false "substitution cycle", before
    text = "env {\n  defaults = {row.num = 5}\n  defaults = { extra = ${env.defaults} }\n}"
    assert read(text)["env"]["defaults"] == {"row.num": 5, "extra": {"row.num": 5}}
    split = "env { p = 1 }\nenv { p = ${env.p}0 }"
    assert read(split) == {"env": {"p": "10"}}


def test_a_key_of_an_object_in_a_list_is_not_the_root_key_of_its_name():
    # found by the pyhocon comparison: `${x}` in a list element's object was taken for a self-reference
    assert read("x = 0\na = [{x = ${x}}]") == {"x": 0, "a": [{"x": 0}]}
    assert read("x = 1\na = [[{x = ${x}}], {y = {x = ${x}}}]") == {"x": 1, "a": [[{"x": 1}], {"y": {"x": 1}}]}


def test_a_self_reference_without_an_earlier_value_looks_only_at_the_environment():
    # problem 6: reported as a cycle, before
    assert read("X = ${?X}") == {}
    assert read("X = ${?X}", {"X": "7"}) == {"X": "7"}
    with pytest.raises(ConfigError, match=r"unresolved variable \$\{X\}") as e:
        read("X = ${X}")
    assert "cycle" not in str(e.value)


def test_a_true_cycle_is_reported_not_a_traceback():
    with pytest.raises(ConfigError, match="substitution cycle: b -> a -> b") as e:
        read("a = ${b}\nb = ${a}")
    assert len(e.value.problems) == 1


# -- whitespace and newlines ------------------------------------------------------------------------

@pytest.mark.parametrize("text, expected", [
    ('query =\n  "select 1"', {"query": "select 1"}),
    ("a :\n\n 5", {"a": 5}),
    ("source\n{\n  x = 1\n}", {"source": {"x": 1}}),
    ("o\n{ a = 1 }\nn\n= 2", {"o": {"a": 1}, "n": 2}),
])
def test_newlines_after_a_separator_or_before_a_brace_are_skipped(text, expected):
    # problem 2: rejected, before
    assert read(text.replace("source", "src")) == {k.replace("source", "src"): v for k, v in expected.items()}
    assert read(text.replace("source", "src")) == pyhocon_reads(text.replace("source", "src"))


def test_a_plugin_section_and_block_on_their_own_lines(tmp_path):
    conf = tmp_path / "job.conf"
    conf.write_text('env\n{\n  job.mode = "BATCH"\n}\nsource\n{\n  FakeSource\n  {\n    row.num = 3\n'
                    '    schema = { fields { id = int } }\n  }\n}\nsink\n{\n  Console\n  {\n  }\n}\n')
    job = load_job(str(conf))
    assert [p.name for p in job.sources] == ["FakeSource"] and job.sources[0].options["row.num"] == 3


def test_a_separator_with_no_value_is_still_an_error():
    with pytest.raises(ConfigError, match="the key 'a' has no value"):
        read("a =\n}")


# -- includes ----------------------------------------------------------------------------------------

def test_include_forms_relative_to_the_including_file(tmp_path):
    (tmp_path / "conf").mkdir()
    (tmp_path / "conf" / "common.conf").write_text('job.mode = "BATCH"\nparallelism = 2\n')
    (tmp_path / "conf" / "more.conf").write_text("{ extra = ${parallelism} }")
    (tmp_path / "conf" / "schema.json").write_text('{"fields": {"id": "int"}}')
    main = tmp_path / "conf" / "main.conf"
    main.write_text('env {\n  include "common.conf"\n  include file("more")\n  parallelism = 3\n}\n'
                    'schema { include required(file("schema.json")) }\nparallelism = 9\n')
    root = hocon.parse(main.read_text(), str(main))
    hocon.resolve(root, lambda n: hocon.MISSING, str(main))
    assert hocon.to_plain(root) == {"env": {"job.mode": "BATCH", "parallelism": 3, "extra": 9},
                                    "schema": {"fields": {"id": "int"}}, "parallelism": 9}


def test_an_optional_include_that_names_no_file_warns_and_required_fails(tmp_path):
    main = tmp_path / "main.conf"
    warnings: list = []
    root = hocon.parse('a = 1\ninclude "nope.conf"\n', str(main), warnings=warnings)
    assert root == {"a": 1} and [w.line for w in warnings] == [2] and "nope.conf" in warnings[0].message
    with pytest.raises(ConfigError, match="included file not found") as e:
        hocon.parse('a = 1\ninclude required("nope.conf")\n', str(main))
    assert e.value.first.line == 2


@pytest.mark.parametrize("kind", ["classpath", "url"])
def test_include_of_classpath_or_url_is_a_clear_error(kind):
    with pytest.raises(ConfigError, match=rf"include {kind}\(...\) is not supported"):
        hocon.parse(f'include {kind}("x.conf")\n', "t.conf")


def test_an_error_in_an_included_file_names_that_file(tmp_path):
    (tmp_path / "bad.conf").write_text("a = 1\nb = ${missing}\n")
    main = tmp_path / "main.conf"
    main.write_text('include "bad.conf"\n')
    with pytest.raises(ConfigError) as e:
        read(main.read_text(), file=str(main))
    assert (e.value.first.file, e.value.first.line) == (str(tmp_path / "bad.conf"), 2)


def test_an_include_cycle_is_an_error(tmp_path):
    (tmp_path / "a.conf").write_text('include "b.conf"\n')
    (tmp_path / "b.conf").write_text('include "a.conf"\n')
    with pytest.raises(ConfigError, match="include cycle"):
        hocon.parse((tmp_path / "a.conf").read_text(), str(tmp_path / "a.conf"))


def test_an_include_that_is_a_key_stays_a_key():
    assert read('include = "x"\nincluded { include.a = 1 }') == {"include": "x", "included": {"include.a": 1}}


# -- paths with quoted parts ------------------------------------------------------------------------

def test_quoted_keys_and_substitution_paths():
    assert read('"a.b" = 1\nc = ${"a.b"}') == {"a.b": 1, "c": 1}
    assert read('a { "x y" = 2 }\nc = ${a->"x y"}'.replace('->"x y"', "->x y")) == {"a": {"x y": 2}, "c": 2}
