"""Redis at compile time: runnable jobs, the source's schema, the plan's parallelism, located errors,
secrets kept out of plans, and what plans but cannot run (mode cluster)."""

from __future__ import annotations

import json

import pytest

from airflow_provider_seatunnel.cli import main

CONN = 'host = "127.0.0.1", port = 6379, auth = "s3cret-pass"'
FAKE = 'FakeSource { plugin_output = "f", schema = { fields { id = int, name = string } } }'


def test_a_complete_redis_job_plans_with_its_schema_and_parallelism(write_conf, plan_of, capsys):
    text = f"""
        env {{ job.mode = "BATCH", parallelism = 2 }}
        source {{
          Redis {{ plugin_output = "users", {CONN}, keys = "user:*", data_type = key, format = json,
                   parallelism = 3, schema = {{ fields {{ id = int, name = string }} }} }}
          Redis {{ plugin_output = "raw", {CONN}, keys = "q:*", data_type = list }}
        }}
        sink {{
          Redis {{ plugin_input = "users", {CONN}, key = "name", data_type = hash, expire = 60 }}
          Redis {{ plugin_input = "raw", {CONN}, key = "copy", data_type = set, db_num = 2 }}
        }}
    """
    plan = plan_of(text)
    assert not plan.warnings
    vertices = {v.ref: v for p in plan.pipelines for v in p.vertices}
    assert vertices["source[0]"].schema == {"id": "int", "name": "string"} and vertices["source[0]"].parallelism == 3
    assert vertices["source[1]"].schema == {"content": "string"} and vertices["source[1]"].parallelism == 2
    assert "s3cret-pass" not in json.dumps(plan.to_dict())
    assert main(["validate", str(write_conf(text))]) == 0
    assert "s3cret-pass" not in capsys.readouterr().out


def test_a_later_transform_is_checked_against_the_sources_schema(config_error):
    error = config_error(f"""
        source {{ Redis {{ plugin_output = "u", {CONN}, keys = "u:*", data_type = key }} }}
        transform {{ Filter {{ plugin_input = "u", plugin_output = "v", include_fields = ["name"] }} }}
        sink {{ Console {{ plugin_input = "v" }} }}
    """)
    assert "name" in str(error) and "content" in str(error)


@pytest.mark.parametrize("section, options, key, message", [
    ("source", 'port = 6379, keys = "*", data_type = key', "host", "the option 'host' is required"),
    ("source", 'host = "h", keys = "*", data_type = key', "port", "the option 'port' is required"),
    ("source", 'host = "h", port = 70000, keys = "*", data_type = key', "port", "port must be an integer between"),
    ("source", f'{CONN}, data_type = key', "keys", "the option 'keys' is required"),
    ("source", f'{CONN}, keys = "*"', "data_type", "the option 'data_type' is required"),
    ("source", f'{CONN}, keys = "*", data_type = hashes', "data_type", "unknown data_type 'hashes'"),
    ("source", f'{CONN}, keys = "*", data_type = key, format = json', "format", "format json needs a schema"),
    ("source", f'{CONN}, keys = "*", data_type = key, format = xml', "format", "unknown format 'xml'"),
    ("source", f'{CONN}, keys = "*", data_type = hash, hash_key_parse_mode = pairs', "hash_key_parse_mode",
     "unknown hash_key_parse_mode 'pairs'"),
    ("source", f'{CONN}, keys = "*", data_type = key, batch_size = 0', "batch_size", "batch_size must be an integer"),
    ("source", f'{CONN}, keys = "*", data_type = key, db_num = -1', "db_num", "db_num must be an integer >= 0"),
    ("source", f'{CONN}, keys = "*", data_type = key, format = json, schema = {{ fields {{ a = intt }} }}',
     "schema", "intt"),
    ("source", f'{CONN}, keys = "*", data_type = key, mode = cluster', "nodes", "'nodes' is required"),
    ("sink", f'{CONN}, data_type = list', "key", "the option 'key' is required"),
    ("sink", f'{CONN}, key = "k", data_type = list, expire = "soon"', "expire", "expire must be an integer"),
    ("sink", f'{CONN}, key = "k", data_type = list, format = csv', "format", "unknown format 'csv'"),
])
def test_bad_options_fail_at_their_line(config_error, section, options, key, message):
    block = f"Redis {{ plugin_output = \"r\",\n  {options} }}" if section == "source" else \
        f"Redis {{ plugin_input = \"f\",\n  {options} }}"
    source = block if section == "source" else FAKE
    sink = 'Console { plugin_input = "r" }' if section == "source" else block
    error = config_error(f"env {{ job.mode = BATCH }}\nsource {{ {source} }}\nsink {{ {sink} }}\n")
    problem = error.problems[0]
    assert message in problem.message, problem.message
    assert problem.key == key and problem.plugin.endswith("Redis") and problem.file and problem.line is not None
    assert "s3cret-pass" not in str(error)


def test_a_connection_gives_host_and_port(plan_of):
    plan = plan_of("""
        source { Redis { plugin_output = "r", redis_conn_id = "cache", keys = "*", data_type = key } }
        sink { Redis { plugin_input = "r", redis_conn_id = "cache", key = "k", data_type = list } }
    """)
    assert not plan.warnings


def test_cluster_mode_plans_but_does_not_validate(write_conf, plan_of):
    text = f"""
        source {{ Redis {{ plugin_output = "r", {CONN}, keys = "*", data_type = key, mode = cluster,
                          nodes = ["a:6379", "b:6379"] }} }}
        sink {{ Console {{ plugin_input = "r" }} }}
    """
    warnings = [w for w in plan_of(text).warnings if w.get("code") == "not-runnable"]
    assert warnings and warnings[0]["key"] == "mode"
    assert main(["validate", str(write_conf(text))]) == 2
    later = plan_of(f'source {{ {FAKE} }}\nsink {{ Redis {{ plugin_input = "f", {CONN}, key = "k", data_type = hash, '
                    'hash_key_field = "id" } }')
    assert [w["key"] for w in later.warnings if w.get("code") == "not-runnable"] == ["hash_key_field"]


def test_ignored_options_are_warnings(plan_of):
    plan = plan_of(f"""
        source {{ Redis {{ plugin_output = "r", {CONN}, keys = "*", data_type = key, format = text,
                          schema = {{ fields {{ a = int }} }} }} }}
        sink {{ Redis {{ plugin_input = "r", {CONN}, key = "h", data_type = hash, format = json }} }}
    """)
    keys = sorted(w["key"] for w in plan.warnings)
    assert keys == ["format", "schema"]
