"""Hostile configs: whatever a config asks for, reading it ends in a located ConfigError within
bounds (depth, resolved size, includes), includes read only where configs may come from, and what
the command line prints carries no terminal control characters."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap

import pytest

from airflow_provider_seatunnel.cli import main
from airflow_provider_seatunnel.config import hocon
from airflow_provider_seatunnel.config.errors import ConfigError, escape_controls
from airflow_provider_seatunnel.config.limits import Limits
from airflow_provider_seatunnel.config.loader import load_job
from airflow_provider_seatunnel.plan.compiler import compile_text

from ..conftest import ROOT

ENV = 'env { job.mode = "BATCH" }\n'
SOURCE = 'source { FakeSource { plugin_output = "f", schema = { fields { id = bigint } } } }\n'
SINK = 'sink { Console { plugin_input = "f" } }\n'


def located(e: pytest.ExceptionInfo) -> tuple:
    p = e.value.first
    return p.file, p.line, p.col


# -- item 9: nesting depth -----------------------------------------------------------------------

@pytest.mark.parametrize("open_, close", [("[", "]"), ("{a = ", "}")])
def test_340_levels_of_nesting_are_a_located_error_not_a_recursion_error(open_, close):
    text = ENV + SOURCE + SINK + "deep = " + open_ * 340 + "1" + close * 340 + "\n"
    with pytest.raises(ConfigError, match="nest deeper than 64 levels") as e:
        load_job("deep.conf", text=text)
    file, line, col = located(e)
    assert (file, line) == ("deep.conf", 4) and col > 64
    assert e.value.first.key.startswith("deep")


def test_the_depth_limit_is_a_parameter():
    """source { FakeSource { schema { fields { } } } } nests 4 deep, as written and as resolved."""
    assert load_job("t.conf", text=ENV + SOURCE + SINK + "x = [[[[1]]]]\n", limits=Limits(max_depth=4))
    with pytest.raises(ConfigError, match="deeper than 4 levels"):
        load_job("t.conf", text=ENV + SOURCE + SINK + "x = [[[[[1]]]]]\n", limits=Limits(max_depth=4))
    with pytest.raises(ConfigError, match="deeper than 3 levels"):
        load_job("t.conf", text=ENV + SOURCE + SINK, limits=Limits(max_depth=3))
    with pytest.raises(ConfigError, match="after substitution, 'x' nests deeper than 4 levels"):
        load_job("t.conf", text=ENV + SOURCE + SINK + "y = [[[1]]]\nx = [${y}, [${y}]]\n", limits=Limits(max_depth=4))


def test_substitutions_that_deepen_a_value_again_and_again_are_a_located_error():
    chain = "".join(f"a{i} = {{ x {{ y = ${{a{i - 1}}} }} }}\n" for i in range(1, 200))
    with pytest.raises(ConfigError, match="nest deeper than") as e:
        load_job("t.conf", text=ENV + SOURCE + SINK + "a0 = {}\n" + chain)
    assert e.value.first.line is not None


def test_a_long_chain_of_substitutions_is_a_located_error():
    """a3000 = ${a2999}, ..., a1 = ${a0}: resolved one inside the other, bounded."""
    chain = "".join(f"a{i} = ${{a{i - 1}}}\n" for i in range(3000, 0, -1))
    with pytest.raises(ConfigError, match="nest deeper than") as e:
        load_job("t.conf", text=ENV + SOURCE + SINK + chain + "a0 = 1\n")
    assert e.value.first.line is not None


def test_five_thousand_appends_to_one_key_read_as_one_list():
    root = hocon.resolve(hocon.parse("a += 1\n" * 5000), lambda name: hocon.MISSING)
    assert root["a"] == [1] * 5000


@pytest.mark.parametrize("query", [
    "select " + "(" * 340 + "id" + ")" * 340 + " as x from f",
    "select " + "+".join(["id"] * 1000) + " as x from f",
    "select " + "not " * 400 + "true as x from f",
    "select " + "upper(" * 300 + "'a'" + ")" * 300 + " as x from f",
])
def test_a_deeply_nested_sql_query_is_a_located_syntax_error(query):
    text = (ENV + SOURCE + f'transform {{\n  Sql {{ plugin_input = "f", plugin_output = "t", query = "{query}" }}\n}}\n'
            + 'sink { Console { plugin_input = "t" } }\n')
    with pytest.raises(ConfigError, match=r"SQL syntax error: .*(nest|too deep)") as e:
        compile_text("t.conf", text)
    p = e.value.first
    assert (p.plugin, p.key, p.line) == ("transform[0] Sql", "query", 4)


def test_a_sql_query_nested_within_the_limits_compiles():
    query = "select " + "upper(" * 30 + "'a'" + ")" * 30 + " as x, " + "+".join(["id"] * 100) + " as y from f"
    text = (ENV + SOURCE + f'transform {{ Sql {{ plugin_input = "f", plugin_output = "t", query = "{query}" }} }}\n'
            + 'sink { Console { plugin_input = "t" } }\n')
    assert compile_text("t.conf", text).pipelines


def test_a_deeply_nested_type_string_is_a_located_error():
    typ = "map<string, " * 400 + "int" + ">" * 400
    text = ENV + f'source {{ FakeSource {{ plugin_output = "f", schema = {{ fields {{ id = "{typ}" }} }} }} }}\n' + SINK
    with pytest.raises(ConfigError, match="nests deeper than 64 levels") as e:
        compile_text("t.conf", text)
    assert (e.value.first.plugin, e.value.first.key) == ("source[0] FakeSource", "schema")


# -- item 10: substitution and include expansion -------------------------------------------------

LAUGHS = "a0 = x\n" + "".join(f"a{i} = ${{a{i - 1}}}${{a{i - 1}}}\n" for i in range(1, 41))


def test_a_billion_laughs_ends_in_a_located_error_under_a_1_gib_address_space(tmp_path):
    """40 doubling substitutions (2^40 characters) under RLIMIT_AS = 1 GiB: the command line
    says where the config grows too large (exit 2) instead of a MemoryError traceback."""
    conf = tmp_path / "laughs.conf"
    conf.write_text(ENV + 'source { FakeSource { plugin_output = "f", text = ${a40}, schema = { fields { id = bigint } } } }\n'
                    + SINK + LAUGHS)
    script = textwrap.dedent(f"""
        import resource, sys
        resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))
        from airflow_provider_seatunnel.cli import main
        sys.exit(main(["validate", {str(conf)!r}]))
    """)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr and "MemoryError" not in done.stderr
    assert re.search(r"laughs\.conf:\d+:\d+: substitutions expand the config past \d+ characters", done.stderr)


def test_doubling_lists_and_objects_are_bounded_too():
    lists = "a0 = [x]\n" + "".join(f"a{i} = [${{a{i - 1}}}, ${{a{i - 1}}}]\n" for i in range(1, 41))
    objects = "a0 = {b = 1}\n" + "".join(f"a{i} = {{x = ${{a{i - 1}}}, y = ${{a{i - 1}}}}}\n" for i in range(1, 41))
    for text in (lists, objects):
        with pytest.raises(ConfigError, match="substitutions expand the config past") as e:
            load_job("t.conf", text=ENV + SOURCE + SINK + text)
        assert e.value.first.line is not None


def test_the_resolved_size_limit_is_a_parameter():
    text = ENV + SOURCE + SINK + "a0 = xxxxxxxxxx\n" + "".join(f"a{i} = ${{a{i - 1}}}${{a{i - 1}}}\n" for i in range(1, 6))
    assert load_job("t.conf", text=text)
    with pytest.raises(ConfigError, match="past 200 characters"):
        load_job("t.conf", text=text, limits=Limits(max_resolved_size=200))


def test_more_than_100_includes_are_a_located_error(tmp_path):
    (tmp_path / "part.conf").write_text("x = 1\n")
    conf = tmp_path / "main.conf"
    conf.write_text(ENV + SOURCE + SINK + 'include "part.conf"\n' * 101)
    with pytest.raises(ConfigError, match="more than 100 includes") as e:
        load_job(str(conf))
    assert located(e) == (str(conf), 104, 1)


def test_includes_nested_deeper_than_10_files_are_a_located_error(tmp_path):
    for i in range(12):
        (tmp_path / f"f{i}.conf").write_text(f'include "f{i + 1}.conf"\n' if i < 11 else "x = 1\n")
    conf = tmp_path / "main.conf"
    conf.write_text(ENV + SOURCE + SINK + 'include "f0.conf"\n')
    with pytest.raises(ConfigError, match="includes nest deeper than 10 files") as e:
        load_job(str(conf))
    assert e.value.first.file == str(tmp_path / "f9.conf")


# -- item 11: where includes read --------------------------------------------------------------

@pytest.fixture
def dags(tmp_path):
    (tmp_path / "dags" / "configs").mkdir(parents=True)
    (tmp_path / "private").mkdir()
    (tmp_path / "private" / "secret.conf").write_text('password = "hunter2"\n')
    return tmp_path / "dags"


def write_main(dags, include: str):
    conf = dags / "configs" / "main.conf"
    conf.write_text(ENV + SOURCE + SINK + f"extra {{\n  include {include}\n}}\n")
    return conf


@pytest.mark.parametrize("include", ['"../../private/secret.conf"', 'required("/etc/passwd")',
                                     'required(file("/proc/self/environ"))'])
def test_an_include_outside_the_configs_folder_is_refused(dags, include):
    conf = write_main(dags, include)
    with pytest.raises(ConfigError, match="leads out of the folders includes may read") as e:
        load_job(str(conf))
    assert located(e) == (str(conf), 5, 3)


def test_a_symlink_leading_out_of_the_folder_is_refused(dags):
    (dags / "configs" / "link.conf").symlink_to(dags.parent / "private" / "secret.conf")
    conf = write_main(dags, 'required("link.conf")')
    with pytest.raises(ConfigError, match="leads out of the folders includes may read"):
        load_job(str(conf))


def test_a_fifo_is_refused_without_blocking(dags):
    os.mkfifo(dags / "configs" / "pipe.conf")
    conf = write_main(dags, '"pipe.conf"')
    with pytest.raises(ConfigError, match="is not a regular file") as e:
        load_job(str(conf))
    assert located(e) == (str(conf), 5, 3)


@pytest.mark.parametrize("name", [".", "..", ""])
def test_including_a_directory_is_a_located_error(dags, name, monkeypatch):
    monkeypatch.chdir(dags / "configs")
    with pytest.raises(ConfigError, match=r"is a directory|leads out") as e:
        load_job("main.conf", text=ENV + SOURCE + SINK + f'include required("{name}")\n')
    assert located(e) == ("main.conf", 4, 1)


def test_the_include_paths_setting_and_include_dirs_allow_another_folder(dags, monkeypatch):
    conf = write_main(dags, '"../../private/secret.conf"')
    root = hocon.parse(conf.read_text(), str(conf), include_dirs=[dags.parent / "private"])
    assert root["extra"] == {"password": "hunter2"}
    monkeypatch.setenv("SEATUNNEL_INCLUDE_PATHS", f"/nowhere,{dags.parent / 'private'}")
    assert hocon.parse(conf.read_text(), str(conf))["extra"] == {"password": "hunter2"}
    assert load_job(str(conf)).sources


def test_an_include_of_a_subfolder_and_of_a_nested_include_upwards_within_the_tree(dags):
    (dags / "configs" / "common").mkdir()
    (dags / "configs" / "common" / "a.conf").write_text('include "../b.conf"\n')
    (dags / "configs" / "b.conf").write_text("b = 2\n")
    conf = dags / "configs" / "main.conf"
    conf.write_text(ENV + SOURCE + SINK + 'include "common/a.conf"\n')
    root = hocon.parse(conf.read_text(), str(conf))
    assert root["b"] == 2


# -- item 12: terminal control characters --------------------------------------------------------

CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def test_escape_controls_keeps_newlines_and_tabs_and_spells_the_rest_as_json_does():
    import json

    raw = "a\x1b[2J\r\x08\x07\x9b\u202e\n\tz"
    assert escape_controls(raw) == "a\\u001b[2J\\u000d\\u0008\\u0007\\u009b\\u202e\n\tz"
    assert json.loads('"' + escape_controls("\u202e\x9b") + '"') == "\u202e\x9b"


def test_control_characters_from_a_config_are_escaped_in_what_the_cli_prints(write_conf, capsys):
    conf = write_conf(ENV + 'source { "Fake\\u001b[2J\\u202eSource" { plugin_output = "f" } }\n'
                      + 'sink { Console { plugin_input = "f\\r\\u0007", "k\\u009b1m" = 1 } }\n')
    for command, code in ((["validate", str(conf)], 2), (["plan", str(conf), "--no-cache"], 0),
                          (["validate", str(conf), "--format", "json"], 2)):
        assert main(command) == code
        out, err = capsys.readouterr()
        assert not CONTROL.search(out + err), repr(out + err)
        assert "\\u001b[2J" in out + err


def test_control_characters_are_escaped_in_plan_text(write_conf, capsys):
    conf = write_conf(ENV + 'source { FakeSource { plugin_output = "f\\u001b]0;pwned\\u0007", '
                      'schema = { fields { id = bigint } } } }\n'
                      + 'sink { Console { plugin_input = "f\\u001b]0;pwned\\u0007" } }\n')
    assert main(["plan", str(conf), "--no-cache"]) == 0
    out = capsys.readouterr().out
    assert "f\\u001b]0;pwned\\u0007" in out and not CONTROL.search(out)


def test_a_config_error_message_escapes_control_characters():
    with pytest.raises(ConfigError) as e:
        load_job("t.conf", text='env {}\nsource { A { x = ${"\x1b[2J"} } }\n')
    assert "\x1b" not in str(e.value) and "\\u001b[2J" in str(e.value)


def test_an_invalid_escape_before_a_line_end_keeps_the_error_on_one_line(tmp_path):
    """A backslash before a line end in a quoted string: the located error names the character
    (found by the mutation test: the raw line end split the message, its second line unlocated)."""
    from airflow_provider_seatunnel.config.loader import load_job

    conf = tmp_path / "job.conf"
    conf.write_text('env { job.name = "x\\\ny" }\n')
    with pytest.raises(ConfigError) as info:
        load_job(conf)
    assert "U+000A" in str(info.value) and all(str(conf) in line for line in str(info.value).splitlines() if line)
