"""Shared fixtures: compile configs written to a temp dir, with a private plan cache."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from airflow_provider_seatunnel.config.errors import ConfigError
from airflow_provider_seatunnel.plan import compile_job

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(autouse=True)
def _private_plan_cache(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("SEATUNNEL_PLAN_CACHE", str(tmp_path_factory.mktemp("plan-cache")))


@pytest.fixture
def write_conf(tmp_path):
    def write(text: str, name: str = "job.conf") -> Path:
        path = tmp_path / name
        path.write_text(textwrap.dedent(text))
        return path

    return write


@pytest.fixture
def plan_of(write_conf):
    """Compile config text (no cache) and return the plan."""

    def compile_(text: str, variables=None, name: str = "job.conf", environ=None):
        return compile_job(write_conf(text, name), variables, use_cache=False, environ=environ)

    return compile_


@pytest.fixture
def config_error(plan_of):
    """Compile text that must fail; return the ConfigError."""

    def fail(text: str, variables=None, name: str = "job.conf"):
        with pytest.raises(ConfigError) as info:
            plan_of(text, variables, name=name)
        return info.value

    return fail
