"""The typed option specs: one declaration gives the compile-time problems, the typed options, the
derived required/identity/secrets and the docs' option tables."""

from __future__ import annotations

import importlib.util

import pytest

from airflow_provider_seatunnel.config.errors import ConfigError
from airflow_provider_seatunnel.config.loader import load_job
from airflow_provider_seatunnel.plan.compiler import compile_text
from airflow_provider_seatunnel.spi.connector import Connector
from airflow_provider_seatunnel.spi.errors import RuntimeConfigError
from airflow_provider_seatunnel.spi.options import OptionError
from airflow_provider_seatunnel.spi.optionspec import Option, OptionSpec

from ..conftest import ROOT

SPEC = OptionSpec((
    Option("path", required=True, identity=True, description="Where."),
    Option("batch_size", "int", 100, fallback=("batchSize",), minimum=1),
    Option("ratio", "double", 0.5),
    Option("mode", "enum", "APPEND", choices=("APPEND", "OVERWRITE")),
    Option("password", secret=True),
    Option("fields", "list"),
    Option("headers", "map"),
    Option("compress", "bool", False),
    Option("codec", required_if=(("compress", (True,)),)),
    Option("user"), Option("token"),
), exactly_one=(("user", "token"),), open_prefixes=("client.",))


def _problems(block: str, strict: bool = False) -> list:
    job = load_job("job.conf", text="env { job.mode = BATCH }\nsource { FakeSource {} }\n"
                   f"sink {{ Demo {{\n{block}\n}} }}\n")
    (plugin,) = job.sinks
    return SPEC.problems(plugin, job, strict=strict)


def test_a_valid_block_parses_to_typed_values_with_defaults_and_fallback_keys():
    o = SPEC.parse({"path": "/x", "batchSize": "50", "mode": "overwrite", "fields": "a, b", "compress": "true",
                    "codec": "gzip", "client": {"retries": 3}, "user": "u"})
    assert o["batch_size"] == 50 and o["mode"] == "OVERWRITE" and o["fields"] == ("a", "b")
    assert o["compress"] is True and o["ratio"] == 0.5 and o["password"] is None
    assert o.given("batch_size") and not o.given("ratio")
    assert SPEC.parse({"path": {"nested": 1}} | {"path": "/x", "ratio": 2}).get("ratio") == 2.0


def test_nested_and_dotted_keys_are_read_as_seatunnel_reads_them():
    spec = OptionSpec((Option("row.num", "int", 5),))
    assert spec.parse({"row.num": 7})["row.num"] == 7
    assert spec.parse({"row": {"num": 8}})["row.num"] == 8


@pytest.mark.parametrize(("options", "key", "message"), [
    ({"batch_size": "many"}, "batch_size", "batch_size must be an integer"),
    ({"batchSize": 0}, "batchSize", "batchSize must be an integer >= 1"),
    ({"ratio": "half"}, "ratio", "ratio must be a number"),
    ({"mode": "APPND"}, "mode", "unknown mode 'APPND'"),
    ({"compress": "yes"}, "compress", "compress must be true or false"),
    ({"headers": "x"}, "headers", "headers must be a map"),
])
def test_a_wrong_value_is_an_option_error_naming_the_key(options, key, message):
    with pytest.raises(OptionError) as e:
        SPEC.parse({"path": "/x", **options})
    assert e.value.key == key and message in e.value.message


def test_compile_time_problems_are_located_at_their_keys():
    found = _problems('path = "/x"\nmode = APPND\ncompress = true\nuser = u\ntoken = t\nbatch_sise = 3')
    by_key = {p.key: p for p in found}
    assert by_key["mode"].hint == "did you mean 'APPEND'?" and by_key["mode"].line == 5
    assert by_key["codec"].message == "the option 'codec' is required when compress = true"
    assert by_key["token"].message.startswith("exactly one of user, token must be set")
    unknown = by_key["batch_sise"]
    assert unknown.severity == "warning" and unknown.hint == "did you mean 'batch_size'?"
    assert unknown.code == "unknown-option" and unknown.line == 9


def test_a_missing_required_option_and_strict_unknown_keys():
    found = _problems("user = u\nclient.retries = 3\nplugin_output = t\nsurprise = 1", strict=True)
    messages = {p.message: p.severity for p in found}
    assert messages == {"the option 'path' is required": "error",
                        "unknown option 'surprise' of Demo": "error"}


def test_run_time_options_refuse_what_the_compiler_would():
    with pytest.raises(RuntimeConfigError, match="the option 'path' is required"):
        SPEC.run_time({})
    with pytest.raises(RuntimeConfigError, match="the option 'codec' is required when compress = true"):
        SPEC.run_time({"path": "/x", "compress": True})
    with pytest.raises(RuntimeConfigError, match="option 'mode'"):
        SPEC.run_time({"path": "/x", "mode": "nope"})


def test_a_declaration_is_checked_when_it_is_made():
    with pytest.raises(ValueError, match="declared twice"):
        OptionSpec((Option("a"), Option("b", fallback=("a",))))
    with pytest.raises(ValueError, match="unknown type"):
        Option("a", "float")


def test_a_connector_with_a_spec_derives_required_identity_and_secrets():
    class Demo(Connector):
        name = "DemoSpec"
        option_spec = SPEC
        secrets = frozenset({"api_key"})

    assert Demo.required == ("path",) and Demo.identity == ("path",)
    assert Demo.secrets == {"password", "api_key"}


def _replace(options: str) -> str:
    return ('env { job.mode = BATCH }\nsource { FakeSource { plugin_output = "t"\nschema { fields { s = string } } } }\n'
            f'transform {{ Replace {{ plugin_input = "t"\n{options}\npattern = "a"\nreplacement = "b" }} }}\n'
            'sink { Console {} }\n')


def test_a_ported_transform_reports_through_its_spec():
    with pytest.raises(ConfigError) as e:
        compile_text("job.conf", _replace('replace_feild = "s"'))
    assert [p.message for p in e.value.problems] == ["the option 'replace_field' is required"]
    plan = compile_text("job.conf", _replace('replace_field = "s"\nreplace_feild = "s"'))
    (warning,) = [w for w in plan.warnings if w["code"] == "unknown-option"]
    assert warning["hint"] == "did you mean 'replace_field'?" and warning["line"] == 6
    assert warning["key"] == "replace_feild" and warning["severity"] == "warning"


def test_the_docs_option_tables_match_the_specs():
    spec = importlib.util.spec_from_file_location("option_docs", ROOT / "scripts" / "option_docs.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert (ROOT / "docs" / "options.md").read_text() == module.render(), "run `make docs`"
    assert "## Replace (transform)" in module.render()




def test_options_of_one_section_required_unless_and_bounds():
    spec = OptionSpec((
        Option("host", required=True, required_unless=("conn_id",), allow_blank=False),
        Option("conn_id"),
        Option("port", "int", 1, minimum=1, maximum=65535),
        Option("keys", required=True, sections=("source",)),
        Option("key", required=True, sections=("sink",)),
    ))
    assert spec.parse({"conn_id": "c", "keys": "*"}, "source", complete=True)["keys"] == "*"
    assert "key" not in spec.parse({"conn_id": "c", "keys": "*"}, "source")
    with pytest.raises(OptionError, match="the option 'key' is required"):
        spec.parse({"conn_id": "c", "keys": "*"}, "sink", complete=True)
    with pytest.raises(OptionError, match="the option 'host' is required"):
        spec.parse({"keys": "*"}, "source", complete=True)
    with pytest.raises(OptionError, match="host must be a non-empty string"):
        spec.parse({"host": "  "}, "source")
    with pytest.raises(OptionError, match="port must be an integer between 1 and 65535, found 70000"):
        spec.parse({"port": 70000})
    assert spec.known("keys", "source") and not spec.known("keys", "sink") and spec.known("parallelism", "sink")
    assert spec.required == ("keys", "key")  # host may come from the connection


def test_a_ported_connector_warns_of_keys_it_does_not_have():
    text = ('env { job.mode = BATCH }\nsource { Redis { plugin_output = "r", host = "h", port = 6379, keys = "*",\n'
            'data_typ = key, data_type = key, expire = 5 } }\nsink { Console { plugin_input = "r" } }\n')
    plan = compile_text("job.conf", text)
    unknown = {w["key"]: w for w in plan.warnings if w["code"] == "unknown-option"}
    assert set(unknown) == {"data_typ", "expire"}  # expire is a sink option
    assert unknown["data_typ"]["hint"] == "did you mean 'data_type'?" and unknown["data_typ"]["line"] == 3


def test_valid_gives_the_typed_options_only_when_the_spec_finds_nothing_wrong():
    assert SPEC.valid({"path": "/x", "user": "u"})["batch_size"] == 100
    assert SPEC.valid({"user": "u"}) is None  # path is required
    assert SPEC.valid({"path": "/x", "mode": "nope"}) is None


def test_split_reports_a_missing_separator_once_and_no_empty_output_fields():
    text = ('env { job.mode = BATCH }\nsource { FakeSource { plugin_output = "t"\nschema { fields { s = string } } } }\n'
            'transform { Split { plugin_input = "t", split_field = "s", output_fields = ["a", "b"] } }\n'
            'sink { Console {} }\n')
    with pytest.raises(ConfigError) as e:
        compile_text("job.conf", text)
    assert [p.message for p in e.value.problems] == ["the option 'separator' is required"]


def _filter_row_kind(options: str) -> str:
    return ('env { job.mode = BATCH }\nsource { FakeSource { plugin_output = "t"\nschema { fields { s = string } } } }\n'
            f'transform {{ FilterRowKind {{ plugin_input = "t"\n{options} }} }}\nsink {{ Console {{}} }}\n')


def test_filter_row_kind_reads_its_lists_through_its_spec():
    plan = compile_text("job.conf", _filter_row_kind('include_kinds = "insert, DELETE"\nexclude_kind = [DELETE]'))
    (warning,) = [w for w in plan.warnings if w["code"] == "unknown-option"]
    assert warning["key"] == "exclude_kind" and warning["hint"] == "did you mean 'exclude_kinds'?"
    with pytest.raises(ConfigError) as e:
        compile_text("job.conf", _filter_row_kind("include_kinds { a = INSERT }"))
    assert [(p.key, p.message) for p in e.value.problems] == [
        ("include_kinds", "include_kinds must be a list, found {'a': 'INSERT'}")]


def test_written_gives_a_declared_option_as_the_block_wrote_it_older_names_included():
    assert SPEC.written({"batchSize": "7"}, "batch_size") == "7"  # untyped, read under its older name
    assert SPEC.written({"batch_size": "x", "batchSize": 3}, "batch_size") == "x"  # the key wins, unchecked
    assert SPEC.written({}, "batch_size") is None and SPEC.written({}, "batch_size", 5) == 5
    with pytest.raises(KeyError):
        SPEC.written({"nope": 1}, "nope")  # only declared options


def test_bundled_options_are_all_set_or_none_in_their_sections():
    """SeaTunnel's bundled options (a username with its password): at compile time a located problem, when a
    task runs an OptionError; a null counts as unset; a group whose options are not of the section is not
    checked; a group naming an undeclared key is refused when declared."""
    spec = OptionSpec((
        Option("path"), Option("user"), Option("password", secret=True),
        Option("low", "int", sections=("source",)), Option("high", "int", sections=("source",)),
    ), bundled=(("user", "password"), ("low", "high")))
    assert spec.parse({"user": "u", "password": ""}, "sink", complete=True)["user"] == "u"
    assert spec.parse({"path": "/x"}, "sink", complete=True)["user"] is None
    with pytest.raises(OptionError, match="user and password go together: user is set, password not") as e:
        spec.parse({"user": "u", "password": None}, "sink", complete=True)
    assert e.value.key == "password"
    with pytest.raises(OptionError, match="low and high go together: high is set, low not"):
        spec.parse({"high": 3}, "source", complete=True)
    assert spec.parse({"high": 3}, "sink", complete=True)  # not of the section: another check says "unknown"
    assert spec.parse({"user": "u"}, "sink")["user"] == "u"  # only a complete parse checks groups
    job = load_job("job.conf", text='env { job.mode = BATCH }\nsource { FakeSource {} }\n'
                                    'sink { Demo {\npath = "/x"\npassword = p\n} }\n')
    (problem,) = spec.problems(job.sinks[0], job)
    assert (problem.key, problem.hint) == ("user", "set user too, or none of them")
    assert "go together: all set or none" in spec.markdown()
    with pytest.raises(KeyError):
        OptionSpec((Option("a"),), bundled=(("a", "b"),))


def test_a_connection_gives_a_login_with_its_password_or_neither():
    from airflow_provider_seatunnel.connectors.clickhouse import CONNECTOR as CH
    from airflow_provider_seatunnel.connectors.clickhouse.options import parse
    from airflow_provider_seatunnel.spi.contract import ConnectionInfo

    login_only = ConnectionInfo("c", "clickhouse", host="h", port=8123, login="default")
    assert login_only.credentials() == {"username": "default", "password": ""}
    assert ConnectionInfo("c", "x").credentials() == {}
    endpoint = parse({**CH.connection_options(login_only), "database": "d", "table": "t"}, "sink").endpoint
    assert endpoint is not None and (endpoint.username, endpoint.password) == ("default", "")
