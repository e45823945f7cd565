"""The plan cache: keyed by everything a plan depends on (text, included files, working directory, variables,
the environment it reads, settings, code), authenticated, and bounded."""

from __future__ import annotations

import json
import logging
import os
import stat
import sys
from pathlib import Path

import pytest

from airflow_provider_seatunnel.plan import cache, compile_job
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
    (entry,) = (tmp_path / "c").glob("*.json")
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
    (entry,) = (tmp_path / "c").glob("*.json")
    entry.write_text("{not json")
    plan = compile_job(path, {"name": "a"}, environ={})
    assert plan.pipelines[0].vertices[0].output == "a"
    assert os.path.getsize(entry) > 100


# ---------------------------------------------------------------- what the key covers (issue 34, item 4)

INCLUDING = 'source { FakeSource { include "inc.conf"\n plugin_output = t } }\nsink { Console { plugin_input = t } }\n'
FIELDS = 'schema = { fields { %s = int } }\n'


def output_fields(plan) -> list:
    return [f["name"] for f in plan.pipelines[0].vertices[0].config["schema"]["fields"]] \
        if isinstance(plan.pipelines[0].vertices[0].config["schema"].get("fields"), list) \
        else list(plan.pipelines[0].vertices[0].config["schema"]["fields"])


@pytest.fixture
def cache_root(tmp_path, monkeypatch):
    root = tmp_path / "c"
    monkeypatch.setenv("SEATUNNEL_PLAN_CACHE", str(root))
    for name in ("MAX_ENTRIES", "MAX_BYTES", "MAX_ENTRY_BYTES"):
        monkeypatch.delenv(f"SEATUNNEL_PLAN_CACHE_{name}", raising=False)
    cache._warned.clear()
    return root


def test_editing_an_included_file_recompiles(write_conf, cache_root, monkeypatch):
    path = write_conf(INCLUDING)
    write_conf(FIELDS % "before", "inc.conf")
    calls = counting(monkeypatch)
    assert output_fields(compile_job(path, environ={})) == ["before"]
    assert output_fields(compile_job(path, environ={})) == ["before"] and len(calls) == 1  # a hit
    write_conf(FIELDS % "after", "inc.conf")
    assert output_fields(compile_job(path, environ={})) == ["after"]
    assert len(calls) == 2


def test_an_optional_include_that_appears_later_recompiles(write_conf, cache_root):
    path = write_conf('source { FakeSource { schema = { fields { old = int } }\n include "extra"\n plugin_output = t } }\n'
                      'sink { Console { plugin_input = t } }\n')
    assert output_fields(compile_job(path, environ={})) == ["old"]
    write_conf(FIELDS % "new", "extra.conf")
    assert output_fields(compile_job(path, environ={})) == ["old", "new"]


def test_an_environment_variable_an_included_file_reads_is_part_of_the_key(write_conf, cache_root):
    path = write_conf(INCLUDING)
    write_conf("schema = { fields { a = int } }\nrow.num = ${ROWS}\n", "inc.conf")
    assert compile_job(path, environ={"ROWS": "5"}).pipelines[0].vertices[0].config["row.num"] == "5"
    assert compile_job(path, environ={"ROWS": "7"}).pipelines[0].vertices[0].config["row.num"] == "7"
    (entry,) = cache_root.glob("*.json")  # the first entry was replaced: same key, new dependencies
    ((name, recorded),) = json.loads(entry.read_bytes())["body"]["deps"]["env"]
    assert name == "ROWS" and len(recorded) == 64 and recorded != "7"  # an HMAC of the value, not the value


def test_the_working_directory_is_part_of_the_key(tmp_path, cache_root, monkeypatch):
    """Inline text resolves its includes from the working directory."""
    for name in ("a", "b"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "inc.conf").write_text(FIELDS % f"from_{name}")
    monkeypatch.chdir(tmp_path / "a")
    assert output_fields(compile_job(INCLUDING, environ={})) == ["from_a"]
    monkeypatch.chdir(tmp_path / "b")
    assert output_fields(compile_job(INCLUDING, environ={})) == ["from_b"]


def test_a_relative_config_path_resolves_from_the_working_directory(tmp_path, cache_root, monkeypatch):
    for name in ("a", "b"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "job.conf").write_text(INCLUDING)
        (tmp_path / name / "inc.conf").write_text(FIELDS % f"from_{name}")
        os.utime(tmp_path / name / "job.conf", ns=(10**18, 10**18))  # the same text, the same times
    monkeypatch.chdir(tmp_path / "a")
    assert output_fields(compile_job("job.conf", environ={})) == ["from_a"]
    monkeypatch.chdir(tmp_path / "b")
    assert output_fields(compile_job("job.conf", environ={})) == ["from_b"]


def test_a_new_package_version_or_changed_code_recompiles(write_conf, cache_root, monkeypatch):
    path = write_conf(JOB)
    calls = counting(monkeypatch)
    compile_job(path, {"name": "a"}, environ={})
    monkeypatch.setattr(cache, "__version__", "99.0.0")
    cache.code_fingerprint.cache_clear()
    compile_job(path, {"name": "a"}, environ={})
    assert len(calls) == 2
    module = Path(compiler_module.__file__)
    st = module.stat()
    try:
        os.utime(module, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))  # an edited module
        cache.code_fingerprint.cache_clear()
        compile_job(path, {"name": "a"}, environ={})
    finally:
        os.utime(module, ns=(st.st_atime_ns, st.st_mtime_ns))
        cache.code_fingerprint.cache_clear()
    assert len(calls) == 3


# ---------------------------------------------------------------- entries are authenticated

def test_an_edited_entry_is_a_miss_never_a_plan(write_conf, cache_root, monkeypatch):
    path = write_conf(JOB)
    compile_job(path, {"name": "a"}, environ={})
    (entry,) = cache_root.glob("*.json")
    raw = entry.read_bytes()
    assert raw.count(b'"a"') >= 1
    entry.write_bytes(raw.replace(b'"output":"a"', b'"output":"planted"'))
    assert b"planted" in entry.read_bytes()
    calls = counting(monkeypatch)
    assert compile_job(path, {"name": "a"}, environ={}).pipelines[0].vertices[0].output == "a"
    assert len(calls) == 1


def test_another_configs_entry_under_this_key_is_a_miss(write_conf, cache_root, monkeypatch):
    path = write_conf(JOB)
    compile_job(path, {"name": "mine"}, environ={})
    (mine,) = cache_root.glob("*.json")
    compile_job(path, {"name": "other"}, environ={})
    (other,) = set(cache_root.glob("*.json")) - {mine}
    os.replace(other, mine)  # the other config's plan, renamed to this config's key
    calls = counting(monkeypatch)
    assert compile_job(path, {"name": "mine"}, environ={}).pipelines[0].vertices[0].output == "mine"
    assert len(calls) == 1


def test_an_entry_from_another_cache_directory_is_a_miss(write_conf, tmp_path, cache_root, monkeypatch):
    path = write_conf(JOB)
    compile_job(path, {"name": "a"}, environ={})
    assert len(list(cache_root.glob("*.json"))) == 1
    (cache_root / cache.KEY_FILE).unlink()  # another directory: another key
    calls = counting(monkeypatch)
    compile_job(path, {"name": "a"}, environ={})
    assert len(calls) == 1
    key = cache_root / cache.KEY_FILE
    assert stat.S_IMODE(key.stat().st_mode) == 0o600 and stat.S_IMODE(cache_root.stat().st_mode) == 0o700


def test_a_symlink_planted_as_the_cache_directory_is_refused(write_conf, tmp_path, monkeypatch, caplog):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir(mode=0o700)
    link = tmp_path / "link"
    link.symlink_to(elsewhere)
    monkeypatch.setenv("SEATUNNEL_PLAN_CACHE", str(link))
    cache._warned.clear()
    path = write_conf(JOB)
    with caplog.at_level(logging.WARNING, logger=cache.__name__):
        assert compile_job(path, {"name": "a"}, environ={}).pipelines[0].vertices[0].output == "a"
    assert list(elsewhere.iterdir()) == []
    assert any("symlink" in r.getMessage() for r in caplog.records)


# ---------------------------------------------------------------- bounds (issue 34, item 5)

def test_the_least_recently_used_entries_are_evicted_past_the_entry_limit(write_conf, cache_root, monkeypatch):
    monkeypatch.setenv("SEATUNNEL_PLAN_CACHE_MAX_ENTRIES", "2")
    path = write_conf(JOB)
    names = {}
    for i, name in enumerate(("first", "second")):
        compile_job(path, {"name": name}, environ={})
        (names[name],) = set(cache_root.glob("*.json")) - set(names.values())
        os.utime(names[name], (1_000_000 + i, 1_000_000 + i))
    calls = counting(monkeypatch)
    compile_job(path, {"name": "first"}, environ={})  # a hit: "first" is now the most recently used
    assert len(calls) == 0
    compile_job(path, {"name": "third"}, environ={})
    remaining = set(cache_root.glob("*.json"))
    assert len(remaining) == 2 and names["first"] in remaining and names["second"] not in remaining


def test_the_total_size_is_bounded(write_conf, cache_root, monkeypatch):
    path = write_conf(JOB)
    compile_job(path, {"name": "a"}, environ={})
    (entry,) = cache_root.glob("*.json")
    size = entry.stat().st_size
    monkeypatch.setenv("SEATUNNEL_PLAN_CACHE_MAX_BYTES", str(2 * size + size // 2))
    os.utime(entry, (1_000_000, 1_000_000))
    for name in ("b", "c", "d"):
        compile_job(path, {"name": name}, environ={})
    remaining = list(cache_root.glob("*.json"))
    assert len(remaining) == 2 and entry not in remaining
    assert sum(e.stat().st_size for e in remaining) <= 2 * size + size // 2


def test_a_plan_over_the_entry_limit_is_used_but_not_stored(write_conf, cache_root, monkeypatch, caplog):
    monkeypatch.setenv("SEATUNNEL_PLAN_CACHE_MAX_ENTRY_BYTES", "1K")
    path = write_conf(JOB)
    calls = counting(monkeypatch)
    with caplog.at_level(logging.WARNING, logger=cache.__name__):
        assert compile_job(path, {"name": "a"}, environ={}).pipelines[0].vertices[0].output == "a"
        compile_job(path, {"name": "a"}, environ={})
    assert len(calls) == 2 and list(cache_root.glob("*.json")) == []
    (message,) = [r.getMessage() for r in caplog.records if r.name == cache.__name__]
    assert "over plan_cache_max_entry_bytes (1024)" in message and str(path) in message


def test_a_bad_limit_setting_is_a_warning_and_the_default(write_conf, cache_root, monkeypatch, caplog):
    monkeypatch.setenv("SEATUNNEL_PLAN_CACHE_MAX_ENTRIES", "lots")
    path = write_conf(JOB)
    with caplog.at_level(logging.WARNING, logger=cache.__name__):
        compile_job(path, {"name": "a"}, environ={})
    assert len(list(cache_root.glob("*.json"))) == 1
    assert any("plan_cache_max_entries" in r.getMessage() for r in caplog.records)


def test_size_settings_read_whole_numbers_with_binary_suffixes():
    from airflow_provider_seatunnel import settings

    def size(raw):
        return settings.size(settings.PLAN_CACHE_MAX_BYTES, {"SEATUNNEL_PLAN_CACHE_MAX_BYTES": raw}, default=7)

    assert [size("12"), size("2K"), size("3m"), size("1GB"), size(" ")] == [12, 2048, 3 * 1024 ** 2, 1024 ** 3, 7]
    with pytest.raises(ValueError, match=r"plan_cache_max_bytes .*SEATUNNEL_PLAN_CACHE_MAX_BYTES.*'-1'"):
        size("-1")


def test_a_key_others_can_read_disables_the_cache(write_conf, cache_root, monkeypatch, caplog):
    path = write_conf(JOB)
    compile_job(path, {"name": "a"}, environ={})
    os.chmod(cache_root / cache.KEY_FILE, 0o644)
    calls = counting(monkeypatch)
    with caplog.at_level(logging.WARNING, logger=cache.__name__):
        assert compile_job(path, {"name": "a"}, environ={}).pipelines[0].vertices[0].output == "a"
        compile_job(path, {"name": "a"}, environ={})
    assert len(calls) == 2
    (message,) = [r.getMessage() for r in caplog.records if r.name == cache.__name__]
    assert "readable or writable by group or others (mode 644)" in message and cache.KEY_FILE in message


def test_installing_a_distribution_recompiles_saving_a_dag_file_does_not(write_conf, tmp_path, cache_root, monkeypatch):
    site, dags = tmp_path / "venv" / "site-packages", tmp_path / "dags"
    site.mkdir(parents=True)
    dags.mkdir()
    monkeypatch.setattr(sys, "path", [*sys.path, str(site), str(dags)])
    cache.code_fingerprint.cache_clear()
    path = write_conf(JOB)
    calls = counting(monkeypatch)
    compile_job(path, {"name": "a"}, environ={})
    (dags / "new_dag.py").write_text("")
    os.utime(dags, ns=(1, 1))
    cache.code_fingerprint.cache_clear()  # a new process
    compile_job(path, {"name": "a"}, environ={})
    assert len(calls) == 1
    (site / "seatunnel_plugin-1.0.dist-info").mkdir()  # pip install a connector plugin
    os.utime(site, ns=(2, 2))
    cache.code_fingerprint.cache_clear()
    compile_job(path, {"name": "a"}, environ={})
    assert len(calls) == 2
    cache.code_fingerprint.cache_clear()
