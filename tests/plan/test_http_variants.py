"""The Http source's named variants at compile time (Github, Gitlab, Jira, Klaviyo, Lemlist, Notion,
OneSignal, Persistiq): each one's required options located at their line, the headers its options make
(replacing the block's of the same name), the Http source's own rules still applying, BATCH-only ones
refused in a STREAMING job, and credentials kept out of plans and task ids."""

from __future__ import annotations

import base64
import json

import pytest

from airflow_provider_seatunnel.spi import SINK, SOURCE, get_connector

URL = 'url = "https://api.example.com/v1/items"'
FIELDS = "format = json, schema = { fields { id = bigint, name = string } }"

#: each variant's own options, complete
OWN = {
    "Github": 'access_token = "gh-s3cret"',
    "Gitlab": 'access_token = "gl-s3cret"',
    "Jira": 'email = "ann@example.com", api_token = "jira-s3cret"',
    "Klaviyo": 'private_key = "pk_s3cret", revision = "2024-10-15"',
    "Lemlist": 'password = "lem-s3cret"',
    "Notion": 'password = "notion-s3cret", version = "2022-06-28"',
    "OneSignal": 'password = "os-s3cret"',
    "Persistiq": 'password = "piq-s3cret"',
}


def job(plugin: str, options: str, mode: str = "BATCH") -> str:
    return f"""
        env {{ job.mode = "{mode}", parallelism = 2 }}
        source {{ {plugin} {{ plugin_output = "h",
          {options} }} }}
        sink {{ Console {{ plugin_input = "h" }} }}
    """


def b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


@pytest.mark.parametrize("plugin", sorted(OWN))
def test_each_variant_plans_with_its_schema_and_keeps_its_credentials_out_of_the_plan(plan_of, plugin):
    first = plan_of(job(plugin, f"{URL}, {FIELDS}, {OWN[plugin]}"))
    assert not first.warnings
    (vertex,) = [v for p in first.pipelines for v in p.vertices if v.plugin == plugin]
    assert vertex.schema == {"id": "bigint", "name": "string"} and vertex.parallelism == 2
    shown = json.dumps(first.to_dict())
    assert "s3cret" not in shown and "api.example.com" in shown
    other = plan_of(job(plugin, f"{URL}, {FIELDS}, {OWN[plugin].replace('s3cret', 'other')}"))
    assert first.pipelines[0].task_id == other.pipelines[0].task_id  # secrets are not part of the identity


@pytest.mark.parametrize("plugin, options, key", [
    ("Github", URL, "access_token"),
    ("Gitlab", URL, "access_token"),
    ("Jira", f'{URL}, api_token = "t"', "email"),
    ("Jira", f'{URL}, email = "a@b.c"', "api_token"),
    ("Klaviyo", f'{URL}, revision = "2024-10-15"', "private_key"),
    ("Klaviyo", f'{URL}, private_key = "pk"', "revision"),
    ("Lemlist", URL, "password"),
    ("Notion", f'{URL}, version = "2022-06-28"', "password"),
    ("Notion", f'{URL}, password = "p"', "version"),
    ("OneSignal", URL, "password"),
    ("Persistiq", URL, "password"),
    ("Persistiq", 'password = "p"', "url"),
])
def test_a_missing_option_of_a_variant_is_a_located_error(config_error, plugin, options, key):
    problem = config_error(job(plugin, options)).problems[0]
    assert f"the option '{key}' is required" in problem.message, problem.message
    assert problem.plugin.endswith(plugin) and problem.line is not None


@pytest.mark.parametrize("plugin", sorted(OWN))
def test_the_http_sources_rules_apply_to_every_variant(config_error, plugin):
    problem = config_error(job(plugin, f"{URL}, format = json, {OWN[plugin]}")).problems[0]
    assert problem.key == "schema" and "required when format = json" in problem.message
    problem = config_error(job(plugin, f'url = "/relative", {OWN[plugin]}')).problems[0]
    assert problem.key == "url" and "not an http:// or https:// URL" in problem.message


@pytest.mark.parametrize("plugin, headers", [
    ("Github", {"Authorization": "Bearer gh-s3cret"}),
    ("Gitlab", {"PRIVATE-TOKEN": "gl-s3cret"}),
    ("Jira", {"Authorization": f"Basic {b64('ann@example.com:jira-s3cret')}"}),
    ("Klaviyo", {"Authorization": "Klaviyo-API-Key pk_s3cret", "revision": "2024-10-15",
                 "Accept": "application/json"}),
    ("Lemlist", {"Authorization": f"Basic {b64(':lem-s3cret')}"}),
    ("Notion", {"Authorization": "Bearer notion-s3cret", "Notion-Version": "2022-06-28"}),
    ("OneSignal", {"Authorization": "Basic os-s3cret", "Content-Type": "application/json"}),
    ("Persistiq", {"x-api-key": "piq-s3cret"}),
])
def test_each_variant_turns_its_options_into_headers_that_replace_the_blocks(plan_of, plugin, headers):
    """The block's headers of the same name (any case) give way; its other headers stay."""
    given = {name.lower(): "from-the-block" for name in headers}
    text = job(plugin, f"{URL}, {OWN[plugin]}, headers = {{ X-Team = data, "
               + ", ".join(f'"{k}" = "{v}"' for k, v in given.items()) + " }")
    (vertex,) = [v for p in plan_of(text).pipelines for v in p.vertices if v.plugin == plugin]
    translated = get_connector(plugin).http_options(vertex.config)
    assert translated["headers"] == {"X-Team": "data", **headers}
    assert not set(translated) & {"access_token", "email", "api_token", "private_key", "revision", "password",
                                  "version"}


def test_a_blank_github_token_sends_no_authorization(plan_of):
    (vertex,) = [v for p in plan_of(job("Github", f'{URL}, access_token = ""')).pipelines for v in p.vertices
                 if v.plugin == "Github"]
    assert get_connector("Github").http_options(vertex.config)["headers"] == {}


@pytest.mark.parametrize("plugin", ["Gitlab", "Jira"])
def test_gitlab_and_jira_read_in_batch_jobs_only(config_error, plan_of, plugin):
    problem = config_error(job(plugin, f"{URL}, {OWN[plugin]}", mode="STREAMING")).problems[0]
    assert f"{plugin} reads in BATCH jobs only" in problem.message
    plan_of(job("Notion", f"{URL}, {OWN['Notion']}", mode="STREAMING"))  # the others stream as Http does


def test_the_variants_are_sources_only():
    for plugin in OWN:
        connector = get_connector(plugin)
        assert connector.can_run(SOURCE) and not connector.can_run(SINK)
        assert getattr(connector, "sink_option_spec", None) is None
