"""The plan cache: keyed by content, variables, referenced environment and version."""

from __future__ import annotations

import os
import stat

from airflow_provider_seatunnel.plan import compile_job
from airflow_provider_seatunnel.plan import compiler as compiler_module

JOB = 'source { FakeSource { schema = { fields { a = int, b = string, x = int, id = bigint, k = string, name = string } }, plugin_output = ${name} } }\nsink { Console { plugin_input = ${name} } }\n'


def counting(monkeypatch):
    calls = []
    real = compiler_module.compile_text

    def spy(*args, **kwargs):
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(compiler_module, "compile_text", spy)
    return calls


def test_second_compile_is_a_cache_hit(write_conf, tmp_path, monkeypatch):
    monkeypatch.setenv("SEATUNNEL_PLAN_CACHE", str(tmp_path / "c"))
    calls = counting(monkeypatch)
    path = write_conf(JOB)
    first = compile_job(path, {"name": "a"}, environ={})
    second = compile_job(path, {"name": "a"}, environ={})
    assert len(calls) == 1
    assert first.to_dict(secrets=True) == second.to_dict(secrets=True)
    (entry,) = (tmp_path / "c").iterdir()
    assert stat.S_IMODE(entry.stat().st_mode) == 0o600


def test_text_variables_and_environment_are_part_of_the_key(write_conf, tmp_path, monkeypatch):
    monkeypatch.setenv("SEATUNNEL_PLAN_CACHE", str(tmp_path / "c"))
    calls = counting(monkeypatch)
    path = write_conf(JOB)
    compile_job(path, {"name": "a"}, environ={})
    compile_job(path, {"name": "b"}, environ={})
    plan = compile_job(path, {"name": "a"}, environ={"name": "from_env"})
    assert plan.pipelines[0].vertices[0].output == "from_env"
    path.write_text(JOB + "# edited\n")
    compile_job(path, {"name": "a"}, environ={})
    assert len(calls) == 4


def test_cache_off(write_conf, monkeypatch, tmp_path):
    monkeypatch.setenv("SEATUNNEL_PLAN_CACHE", "off")
    calls = counting(monkeypatch)
    path = write_conf(JOB)
    compile_job(path, {"name": "a"}, environ={"SEATUNNEL_PLAN_CACHE": "off"})
    compile_job(path, {"name": "a"}, environ={"SEATUNNEL_PLAN_CACHE": "off"})
    assert len(calls) == 2


def test_corrupt_entry_is_recompiled(write_conf, tmp_path, monkeypatch):
    monkeypatch.setenv("SEATUNNEL_PLAN_CACHE", str(tmp_path / "c"))
    path = write_conf(JOB)
    compile_job(path, {"name": "a"}, environ={})
    (entry,) = (tmp_path / "c").iterdir()
    entry.write_text("{not json")
    plan = compile_job(path, {"name": "a"}, environ={})
    assert plan.pipelines[0].vertices[0].output == "a"
    assert os.path.getsize(entry) > 100
