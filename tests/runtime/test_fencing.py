"""Fencing: two attempts of one run that overlap (Airflow retrying a task whose old worker still
runs, two command-line runs given one run id) never lose or duplicate a row, and only the newest
attempt commits; data_save_mode DROP_DATA takes effect in the commit, never before.

LocalFile against real directories, Jdbc against the real PostgreSQL of tests/pg.py; the
overlaps are made deterministic with a lock held by a real psql session and with a commit paused
inside its file moves."""

from __future__ import annotations

import dataclasses
import threading
import time
from pathlib import Path

import pytest

from airflow_provider_seatunnel.connectors import localfile as lf
from airflow_provider_seatunnel.connectors.jdbc import CONNECTOR as JDBC
from airflow_provider_seatunnel.connectors.localfile import commits as lf_commits
from airflow_provider_seatunnel.runtime import faults, twophase
from airflow_provider_seatunnel.runtime.executor import RunContext
from airflow_provider_seatunnel.spi.fencing import StagingMismatch
from airflow_provider_seatunnel.spi.rows import with_kind
from tests.runtime.test_jdbc_sink import ROWS, _contexts, commits, fake, job, staging_tables, table
from tests.runtime.test_localfile import data_files, sink_conf, sink_ctx

LF_2PC = twophase.driver(lf.CONNECTOR)  # the engine's two phases over LocalFile's storage verbs
JDBC_2PC = twophase.driver(JDBC)  # the engine's two phases over the sink's storage verbs


def wait_until(predicate, timeout: float = 90.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.1)
    raise AssertionError("timed out waiting for the overlap to happen")


class Attempt(threading.Thread):
    """An attempt run in a thread (as a second worker would run it); ``result`` or ``error``."""

    def __init__(self, fn):
        super().__init__(daemon=True)
        self.fn, self.result, self.error = fn, None, None
        self.start()

    def run(self):
        try:
            self.result = self.fn()
        except BaseException as e:
            self.error = e

    def outcome(self, timeout: float = 180.0):
        self.join(timeout)
        assert not self.is_alive(), "the attempt never finished"
        return self.result, self.error


def rows_of(spark, out: Path) -> list[int]:
    return sorted(r.id for r in spark.read.json(str(out)).collect())


# ------------------------------------------------------------------------------------------------
# LocalFile
# ------------------------------------------------------------------------------------------------

def _frame(spark, n: int, parts: int = 2):
    return {"t": with_kind(spark.range(n).selectExpr("cast(id as int) id").repartition(parts))}


def test_localfile_a_retry_waits_for_a_commit_in_progress_then_finds_it(spark, plan_of, tmp_path, monkeypatch):
    out = tmp_path / "out"
    conf = sink_conf(out, file_format_type="json")
    first, sink = sink_ctx(plan_of, spark, conf, run_id="r", attempt=1)
    info = LF_2PC.prepare(first, sink, _frame(spark, 40, parts=4))
    paused, go = threading.Event(), threading.Event()
    real_move = lf_commits._move

    def slow_move(src, dst):
        paused.set()
        go.wait(60)  # the old worker stops responding half way through its renames
        real_move(src, dst)

    monkeypatch.setattr(lf_commits, "_move", slow_move)
    committing = Attempt(lambda: LF_2PC.commit(first, sink, info))
    assert paused.wait(60)
    retry_ctx, _ = sink_ctx(plan_of, spark, conf, run_id="r", attempt=2)
    retry = Attempt(lambda: LF_2PC.prepare(retry_ctx, sink, _frame(spark, 40, parts=4)))
    time.sleep(1.5)
    assert retry.is_alive()  # it waits for the commit lock instead of touching the commit
    go.set()
    assert committing.outcome() == (None, None)
    again, error = retry.outcome()
    assert error is None and [e.committed for e in again.tables] == [True]
    assert rows_of(spark, out) == list(range(40))


def test_localfile_a_staged_file_that_changed_is_not_committed(spark, plan_of, tmp_path):
    out = tmp_path / "out"
    ctx, sink = sink_ctx(plan_of, spark, sink_conf(out, file_format_type="json"))
    info = LF_2PC.prepare(ctx, sink, _frame(spark, 10, parts=1))
    src = Path(info.tables[0].detail["moves"][0][0])
    src.write_text('{"id": 99}\n')
    with pytest.raises(StagingMismatch, match="staged as"):
        LF_2PC.commit(ctx, sink, info)
    LF_2PC.abort(ctx, sink, info)
    assert data_files(out) == []


def test_localfile_drop_data_takes_effect_in_the_commit(spark, plan_of, tmp_path):
    out = tmp_path / "out"
    (out / "k=1").mkdir(parents=True)
    (out / "old.json").write_text('{"id": -1}\n')
    (out / "k=1" / "older.json").write_text('{"id": -2}\n')
    conf = sink_conf(out, file_format_type="json", data_save_mode="DROP_DATA")
    # 1. a failure after the write (the driver survives): the target is as it was
    ctx, sink = sink_ctx(plan_of, spark, conf, run_id="d1")
    info = LF_2PC.prepare(ctx, sink, _frame(spark, 10))
    assert (out / "old.json").exists() and (out / "k=1" / "older.json").exists()
    LF_2PC.abort(ctx, sink, info)
    assert sorted(p.name for p in data_files(out)) == ["old.json", "older.json"]

    def commit_stopped_between_renames():
        dying = RunContext(spark, ctx.plan, ctx.pipeline, "d1", attempt=2,
                           options=faults.from_environment({faults.ENV: "sink.move@2+1"}))
        info = LF_2PC.prepare(dying, sink, _frame(spark, 10))
        with pytest.raises(faults.InjectedFault):
            LF_2PC.commit(dying, sink, info)
        return dying, info

    # 2. a raise between the renames, then abort: the dropped entries come back
    dying, info = commit_stopped_between_renames()
    LF_2PC.abort(dying, sink, info)
    assert sorted(p.name for p in data_files(out)) == ["old.json", "older.json"]
    # 3. the same, but the driver dies (no abort): the next attempt finishes drop and moves
    commit_stopped_between_renames()
    retry = RunContext(spark, ctx.plan, ctx.pipeline, "d1", attempt=3)
    again = LF_2PC.prepare(retry, sink, _frame(spark, 10))
    assert [e.committed for e in again.tables] == [True]  # the interrupted commit, finished by the retry's token
    assert rows_of(spark, out) == list(range(10)) and not (out / "k=1").exists()
    assert not (out / lf.COMMITS_DIR / ".trash").exists() or not any((out / lf.COMMITS_DIR / ".trash").iterdir())
    # 4. another pipeline of the same run commits without dropping again
    other = RunContext(spark, ctx.plan, dataclasses.replace(ctx.pipeline, task_id="clone"), "d1")
    more = {"t": with_kind(spark.range(10, 15).selectExpr("cast(id as int) id"))}
    LF_2PC.commit(other, sink, LF_2PC.prepare(other, sink, more))
    assert rows_of(spark, out) == list(range(15))


# ------------------------------------------------------------------------------------------------
# Jdbc
# ------------------------------------------------------------------------------------------------

def _lock_waiters(db) -> int:
    return int(db.sql("SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'")[0][0])


def _jdbc_rows(spark, n: int):
    return {"fake": with_kind(spark.range(n).selectExpr("cast(id as int) id", "concat('n', id) name"))}


def test_jdbc_a_retry_while_the_old_commit_waits_on_a_lock_loses_nothing(plan_of, spark, db):
    n = 20000
    text = job(db, fake(ROWS), 'generate_sink_sql = true, table = "ov", primary_keys = ["id"]')
    _, _, sink, ctx = _contexts(plan_of, spark, db, text, "ov-1")
    first = JDBC_2PC.prepare(ctx(1), sink, _jdbc_rows(spark, n))
    holder = db.session()
    holder.stdin.write("BEGIN;\nLOCK TABLE ov IN ACCESS EXCLUSIVE MODE;\n")
    holder.stdin.flush()
    wait_until(lambda: db.sql("SELECT count(*) FROM pg_locks WHERE relation = 'ov'::regclass AND granted "
                              "AND mode = 'AccessExclusiveLock'")[0][0] == "1")
    try:
        old = Attempt(lambda: JDBC_2PC.commit(ctx(1), sink, first))
        wait_until(lambda: _lock_waiters(db) >= 1)  # the old attempt's commit waits for the target

        def retry():
            info = JDBC_2PC.prepare(ctx(2), sink, _jdbc_rows(spark, n))
            JDBC_2PC.commit(ctx(2), sink, info)
            return info

        new = Attempt(retry)
        wait_until(lambda: _lock_waiters(db) >= 2 or not new.is_alive())
    finally:
        holder.stdin.write("COMMIT;\n")
        holder.stdin.close()
        holder.wait(30)
    assert old.outcome() == (None, None)
    again, error = new.outcome()
    assert error is None and [s.committed for s in again.tables] == [True]
    assert int(db.sql("SELECT count(*) FROM ov")[0][0]) == n
    assert db.sql("SELECT rows_moved, attempt FROM seatunnel_commits WHERE run_id = 'ov-1'") == [[str(n), "1"]]
    assert staging_tables(db) == []


def test_jdbc_a_staging_table_changed_after_the_write_is_not_committed(plan_of, spark, db):
    text = job(db, fake(ROWS), 'generate_sink_sql = true, table = "tampered"')
    _, _, sink, ctx = _contexts(plan_of, spark, db, text, "tm-1")
    info = JDBC_2PC.prepare(ctx(1), sink, _jdbc_rows(spark, 30))
    db.sql(f"DELETE FROM {info.tables[0].detail['staging']} WHERE id < 5")
    with pytest.raises(StagingMismatch, match="holds 25 rows, but this attempt wrote 30"):
        JDBC_2PC.commit(ctx(1), sink, info)
    assert table(db, "tampered") == [] and commits(db, "tm-1") == 0


def test_jdbc_drop_data_takes_effect_in_the_commit_transaction(plan_of, spark, db):
    db.sql("CREATE TABLE kept (id INT, name TEXT); INSERT INTO kept VALUES (-1, 'old'), (-2, 'older')")
    text = job(db, fake(ROWS), 'generate_sink_sql = true, table = "kept", data_save_mode = "DROP_DATA"')
    plan, p, sink, ctx = _contexts(plan_of, spark, db, text, "dd-1")
    dying = RunContext(spark, plan, p, "dd-1", options=faults.from_environment({faults.ENV: "sink.commit"}))
    info = JDBC_2PC.prepare(dying, sink, _jdbc_rows(spark, 5))
    assert len(table(db, "kept")) == 2  # nothing deleted before the commit
    with pytest.raises(Exception, match="injected fault"):
        JDBC_2PC.commit(dying, sink, info)  # after the delete and the moves, before the record: rolled back
    assert table(db, "kept") == [["-2", "older"], ["-1", "old"]]
    retry = JDBC_2PC.prepare(ctx(2), sink, _jdbc_rows(spark, 5))
    JDBC_2PC.commit(ctx(2), sink, retry)
    assert [r[0] for r in table(db, "kept")] == ["0", "1", "2", "3", "4"]
