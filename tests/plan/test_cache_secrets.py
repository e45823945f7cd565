"""The plan cache holds no secret (references, resolved on a hit, give the fresh compile's plan) and
trusts only what the current user owns and no one else can write. Tests may run as root: the
ownership checks are exercised with os.chown there, and skipped otherwise (an unprivileged user
cannot give a file away)."""

from __future__ import annotations

import json
import logging
import os
import stat

import pytest

from airflow_provider_seatunnel.plan import cache, compile_job
from tests.plan.test_cache import counting

JOB = """
env { job.name = "cached", spark.hadoop.fs.s3a.secret.key = "lit-s3-secret-1", spark.hadoop.fs.s3a.access.key = ${S3_KEY} }
source { Jdbc { plugin_output = "t", url = "jdbc:postgresql://db:5432/app", driver = "org.postgresql.Driver",
                user = "reader", password = ${DB_PASSWORD}, query = "select * from orders" } }
sink { Jdbc { plugin_input = "t", url = "jdbc:postgresql://db:5432/app?password="${SINK_PW}, driver = "org.postgresql.Driver",
              user = ${who}, password = "literal-sink-pw-2", generate_sink_sql = true, table = "copy" } }
"""
ENV = {"DB_PASSWORD": "env-db-pw-3", "S3_KEY": "AKIA-env-key-4", "SINK_PW": "url-pw-5"}
SECRETS = ("lit-s3-secret-1", "env-db-pw-3", "AKIA-env-key-4", "url-pw-5", "literal-sink-pw-2", "var-user-6")


@pytest.fixture
def cache_root(tmp_path, monkeypatch):
    root = tmp_path / "cache"
    monkeypatch.setenv("SEATUNNEL_PLAN_CACHE", str(root))
    cache._warned.clear()
    return root


def entries(root) -> list:
    return sorted(root.glob("*.json"))


def test_a_hit_is_the_fresh_plan_and_the_file_holds_no_secret(write_conf, cache_root, monkeypatch):
    job = JOB.replace('url = "jdbc:postgresql://db:5432/app?password="${SINK_PW}', 'url = "jdbc:postgresql://db:5432/app"')
    path = write_conf(job)
    calls = counting(monkeypatch)
    variables = {"who": "var-user-6"}
    first = compile_job(path, variables, environ=ENV)
    (entry,) = entries(cache_root)
    raw = entry.read_bytes()
    assert not [s for s in SECRETS if s.encode() in raw]
    assert stat.S_IMODE(entry.stat().st_mode) == 0o600
    second = compile_job(path, variables, environ=ENV)
    assert len(calls) == 1  # a hit
    fresh = compile_job(path, variables, environ=ENV, use_cache=False)
    assert second == fresh == first
    assert second.to_dict(secrets=True) == fresh.to_dict(secrets=True)
    sink = second.pipelines[0].vertices[-1].config
    assert (sink["password"], sink["user"]) == ("literal-sink-pw-2", "var-user-6")
    assert second.pipelines[0].vertices[0].config["password"] == "env-db-pw-3"
    assert second.env["spark.hadoop.fs.s3a.access.key"] == "AKIA-env-key-4"
    # a new password in the environment is a new key: the plan has the new one, still not in clear on disk
    rotated = compile_job(path, variables, environ={**ENV, "DB_PASSWORD": "rotated-pw-7"})
    assert rotated.pipelines[0].vertices[0].config["password"] == "rotated-pw-7" and len(calls) == 3
    assert not [e for e in entries(cache_root) if b"rotated-pw-7" in e.read_bytes()]
    assert compile_job(path, variables, environ={**ENV, "DB_PASSWORD": "rotated-pw-7"}) == rotated
    assert len(calls) == 3


def test_a_secret_pieced_together_is_not_cached_and_an_older_entry_is_dropped(write_conf, cache_root, monkeypatch):
    """``url = "...?password="${SINK_PW}``: no one place holds the whole value, so no entry; an entry
    of the earlier layout (the plan with its secrets) under the key is removed."""
    path = write_conf(JOB)
    calls = counting(monkeypatch)
    variables = {"who": "var-user-6"}
    store = cache.open_store()
    key = cache.cache_key(str(path), "hocon", path.read_text(), variables, ENV, store.secret)
    old = cache_root / f"{key}.json"
    fd = os.open(old, os.O_WRONLY | os.O_CREAT, 0o600)
    with os.fdopen(fd, "w") as f:
        json.dump(compile_job(path, variables, environ=ENV, use_cache=False).to_dict(secrets=True), f)
    plan = compile_job(path, variables, environ=ENV)
    assert plan.pipelines[0].vertices[-1].config["url"] == "jdbc:postgresql://db:5432/app?password=url-pw-5"
    assert entries(cache_root) == []
    assert compile_job(path, variables, environ=ENV) == plan and len(calls) == 3  # compiled every time


def _filled(write_conf, cache_root) -> tuple:
    path = write_conf("source { FakeSource { plugin_output = t, schema = { fields { id = bigint } } } }\n"
                      "sink { Console { plugin_input = t } }\n")
    compile_job(path, environ={})
    (entry,) = entries(cache_root)
    return path, entry


@pytest.mark.parametrize("mode", [0o620, 0o602, 0o666], ids=["group", "others", "both"])
def test_an_entry_writable_by_others_is_a_miss_with_one_warning(write_conf, cache_root, monkeypatch, caplog, mode):
    path, entry = _filled(write_conf, cache_root)
    calls = counting(monkeypatch)
    os.chmod(entry, mode)
    with caplog.at_level(logging.WARNING, logger=cache.__name__):
        compile_job(path, environ={})
        os.chmod(entry, mode)  # the miss rewrote it 0600; make it lax again
        compile_job(path, environ={})
    assert len(calls) == 2
    warnings = [r.getMessage() for r in caplog.records if r.name == cache.__name__]
    assert len(warnings) == 1 and "writable by group or others" in warnings[0] and str(entry) in warnings[0]
    os.chmod(entry, 0o600)
    compile_job(path, environ={})
    assert len(calls) == 2  # trusted again: a hit


def test_a_symbolic_link_entry_is_not_followed(write_conf, cache_root, monkeypatch):
    path, entry = _filled(write_conf, cache_root)
    planted = cache_root.parent / "planted.json"
    planted.write_bytes(entry.read_bytes())
    os.chmod(planted, 0o600)
    entry.unlink()
    entry.symlink_to(planted)
    calls = counting(monkeypatch)
    compile_job(path, environ={})
    assert len(calls) == 1 and not entry.is_symlink()


@pytest.mark.skipif(os.geteuid() != 0, reason="giving a file to another user needs root")
def test_an_entry_owned_by_another_user_is_a_miss(write_conf, cache_root, monkeypatch, caplog):
    path, entry = _filled(write_conf, cache_root)
    os.chown(entry, 4242, 4242)
    calls = counting(monkeypatch)
    with caplog.at_level(logging.WARNING, logger=cache.__name__):
        compile_job(path, environ={})
    assert len(calls) == 1
    assert any("owned by uid 4242" in r.getMessage() for r in caplog.records)
    assert entry.stat().st_uid == os.geteuid()  # replaced by this user's own entry


def test_a_directory_others_can_write_is_not_used(write_conf, cache_root, monkeypatch, caplog):
    cache_root.mkdir(mode=0o700)
    os.chmod(cache_root, 0o777)
    path = write_conf("source { FakeSource { plugin_output = t, schema = { fields { id = bigint } } } }\n"
                      "sink { Console { plugin_input = t } }\n")
    calls = counting(monkeypatch)
    with caplog.at_level(logging.WARNING, logger=cache.__name__):
        compile_job(path, environ={})
        compile_job(path, environ={})
    assert len(calls) == 2 and entries(cache_root) == []
    warnings = [r.getMessage() for r in caplog.records if r.name == cache.__name__]
    assert len(warnings) == 1 and "writable by others" in warnings[0]
    assert stat.S_IMODE(cache_root.stat().st_mode) == 0o777  # not ours to change


@pytest.mark.skipif(os.geteuid() != 0, reason="giving a directory to another user needs root")
def test_a_directory_owned_by_another_user_is_not_used(write_conf, cache_root, monkeypatch):
    cache_root.mkdir(mode=0o700)
    os.chown(cache_root, 4242, 4242)
    path = write_conf("source { FakeSource { plugin_output = t, schema = { fields { id = bigint } } } }\n"
                      "sink { Console { plugin_input = t } }\n")
    calls = counting(monkeypatch)
    compile_job(path, environ={})
    compile_job(path, environ={})
    assert len(calls) == 2 and entries(cache_root) == []


def test_the_directory_is_created_private_and_its_parents_by_the_umask(write_conf, tmp_path, monkeypatch):
    root = tmp_path / "a" / "b" / "plans"
    monkeypatch.setenv("SEATUNNEL_PLAN_CACHE", str(root))
    old = os.umask(0o022)
    try:
        _filled(write_conf, root)
    finally:
        os.umask(old)
    assert stat.S_IMODE(root.stat().st_mode) == 0o700
    assert stat.S_IMODE((tmp_path / "a").stat().st_mode) == 0o755
    assert stat.S_IMODE((tmp_path / "a" / "b").stat().st_mode) == 0o755
