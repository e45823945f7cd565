"""runtime/tables.py without Spark: the env option, how many tables at once, and the one-at-a-time
path's failure (the pool's, with Spark's scheduler pools, is in test_jdbc_concurrent_tables.py)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from airflow_provider_seatunnel.runtime import tables
from airflow_provider_seatunnel.spi import Capabilities
from airflow_provider_seatunnel.spi.errors import DataError, PipelineError, RuntimeConfigError


@pytest.mark.parametrize(("raw", "expected"), [(None, None), (3, 3), ("2", 2), (" 8 ", 8)])
def test_the_env_option_is_a_positive_integer_or_absent(raw, expected):
    env = {} if raw is None else {tables.ENV_OPTION: raw}
    assert tables.configured(env) == expected


@pytest.mark.parametrize("raw", [0, -1, "many", True, 1.5])
def test_a_bad_env_option_is_a_config_error_naming_it(raw):
    with pytest.raises(RuntimeConfigError, match=r"multi_table\.concurrent_tables must be a positive integer"):
        tables.configured({tables.ENV_OPTION: raw})


def _ctx(env=None, batch_id=None):
    return SimpleNamespace(plan=SimpleNamespace(env=env or {}), batch_id=batch_id, spark=None)


def test_only_a_sink_declaring_it_writes_several_tables_at_once():
    capable = SimpleNamespace(capabilities=Capabilities(concurrent_tables=True))
    other = SimpleNamespace(capabilities=Capabilities())
    vertex = SimpleNamespace(parallelism=2)
    env = {tables.ENV_OPTION: 6}
    assert tables.concurrency(_ctx(env), vertex, 10, other) == 1
    assert tables.concurrency(_ctx(env), vertex, 1, capable) == 1  # one table
    assert tables.concurrency(_ctx(env, batch_id=3), vertex, 10, capable) == 6  # a shared capture's micro-batch
    assert tables.concurrency(_ctx(env), vertex, 10, capable) == 6
    assert tables.concurrency(_ctx(env), vertex, 5, capable) == 5  # never more than the tables
    assert tables.MIN_TABLES <= tables.concurrency(_ctx(), vertex, 100, capable) <= tables.MAX_TABLES


def test_work_one_at_a_time_stops_at_the_first_failure_and_names_its_table():
    done, ran = [], []

    def work(table, fail=False):
        def run():
            ran.append(table)
            if fail:
                raise DataError("a value too long")
            return table
        return table, run

    items = [work("a"), work("b", fail=True), work("c")]
    with pytest.raises(PipelineError, match="table b: a value too long") as failed:
        tables.each_table(None, items, 1, done.append)
    assert isinstance(failed.value, DataError)  # still deterministic: a retry would meet it again
    assert ran == ["a", "b"] and done == ["a"]  # c never started; a is handed over to be discarded


def test_an_error_that_is_not_a_pipeline_error_becomes_the_run_s_error_naming_the_table():
    def boom():
        raise ValueError("no such column")

    with pytest.raises(PipelineError, match="table t2: boom: no such column"):
        tables.each_table(None, [("t1", lambda: 1), ("t2", boom)], 1, lambda _: None,
                          fail=lambda e: PipelineError(f"boom: {e}"))


def test_a_single_table_s_error_is_left_as_it_is():
    with pytest.raises(DataError, match=r"^pipeline p: bad$"):
        tables.each_table(None, [("only", lambda: (_ for _ in ()).throw(DataError("bad", pipeline="p")))], 4,
                          lambda _: None)
