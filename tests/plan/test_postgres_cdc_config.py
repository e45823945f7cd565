"""Postgres-CDC at compile time: a runnable STREAMING job with its tables, located errors in SeaTunnel's
rules, what plans but cannot run, lineage, the driver jar, and the password kept out of the plan."""

from __future__ import annotations

import json

import pytest

from airflow_provider_seatunnel.cli import main
from airflow_provider_seatunnel.connectors.postgres_cdc import CONNECTOR as PG_CDC

BLOCK = ('Postgres-CDC {{ plugin_output = "c", base-url = "jdbc:postgresql://db:5432/shop", username = "u", '
         'password = "cdc-s3cret", table-names = ["shop.public.orders", "shop.sales.items"] {extra} }}')


def job(extra: str = "") -> str:
    return f"""
        env {{ job.mode = "STREAMING" }}
        source {{ {BLOCK.format(extra=extra)} }}
        sink {{ Console {{ plugin_input = "c" }} }}
    """


def test_a_cdc_job_plans_with_its_tables_and_validates(write_conf, plan_of, capsys):
    plan = plan_of(job())
    assert not plan.warnings
    source = next(v for p in plan.pipelines for v in p.vertices if v.kind == "source")
    assert PG_CDC.emits_changes(source, False)
    assert "cdc-s3cret" not in json.dumps(plan.to_dict())
    assert main(["validate", str(write_conf(job()))]) == 0
    assert "cdc-s3cret" not in capsys.readouterr().out


@pytest.mark.parametrize("extra, key, message", [
    (', startup.mode = "sometimes"', "startup.mode", "unknown startup.mode"),
    (', decoding.plugin.name = "protobuf"', "decoding.plugin.name", "unknown decoding.plugin.name"),
    (', snapshot.split.size = 0', "snapshot.split.size", "an integer >= 1"),
    (', slot.name = "bad-name"', "slot.name", "may hold lower-case letters"),
])
def test_bad_options_fail_at_their_line(config_error, extra, key, message):
    problem = config_error(job(extra)).problems[0]
    assert message in problem.message and problem.key == key and problem.line is not None


def test_tables_must_be_database_schema_table_of_the_url(config_error):
    text = job().replace('"shop.sales.items"', '"other.public.x"')
    assert "not in the database of base-url" in config_error(text).problems[0].message
    text = job().replace('"shop.sales.items"', '"items"')
    assert "database.schema.table" in config_error(text).problems[0].message
    assert "'base-url' is required" in config_error(job().replace('base-url = "jdbc:postgresql://db:5432/shop",',
                                                                  "")).problems[0].message


@pytest.mark.parametrize("extra", [', startup.mode = earliest', ', format = compatible_debezium_json'])
def test_what_plans_but_cannot_run(write_conf, plan_of, extra):
    plan = plan_of(job(extra))
    assert [w.get("code") for w in plan.warnings] == ["not-runnable"]
    assert main(["validate", str(write_conf(job(extra)))]) == 2


def test_other_decoding_plugins_are_decoded_with_pgoutput(write_conf, plan_of):
    text = job(', decoding.plugin.name = "decoderbufs"')
    (warning,) = plan_of(text).warnings
    assert warning["key"] == "decoding.plugin.name" and "pgoutput" in warning["message"]
    assert main(["validate", str(write_conf(text))]) == 0


def test_lineage_tables_and_the_driver_jar():
    options = {"base-url": "jdbc:postgresql://db:5432/shop", "table-names": ["shop.public.orders"]}
    assert PG_CDC.assets(options) == ["postgres://db:5432/shop/public/orders"]
    assert PG_CDC.jars(options, {}) == ["/usr/share/java/postgresql.jar"]


def test_an_undeclared_key_is_a_did_you_mean_warning(plan_of):
    plan = plan_of(job(', slot_name = "orders"'))
    [unknown] = [w for w in plan.warnings if w.get("code") == "unknown-option"]
    assert unknown["key"] == "slot_name" and unknown["hint"] == "did you mean 'slot.name'?"


def test_all_tables_of_a_source_share_one_replication_slot():
    from types import SimpleNamespace

    from airflow_provider_seatunnel.connectors.postgres_cdc.options import parse
    from airflow_provider_seatunnel.connectors.postgres_cdc.runtime import slot_name

    ctx, vertex = SimpleNamespace(pipeline_key="p"), SimpleNamespace(ref="source[0]")
    for extra in ({}, {"slot.name": "shop_cdc"}):
        opts = parse({"base-url": "jdbc:postgresql://db:5432/shop", "table-names": [f"shop.public.t{i}" for i in
                                                                                    range(3)], **extra})
        assert len({slot_name(ctx, vertex, opts, i) for i in range(3)}) == 1  # type: ignore[arg-type]
