"""FtpFile and SftpFile at compile time (no Spark, no network): LocalFile's file option checks
(:mod:`..files.checks`), then the server options: ``host``, ``port``, ``user``,
``password`` (each required unless the block names an Airflow connection; SftpFile's password not
with a ``key_file``), ``path``, FtpFile's ``connection_mode``."""

from __future__ import annotations

from functools import partial
from typing import Any

from ...spi.options import JobConfig, PluginConfig, Problem
from ..files.checks import StoreBlock, check_with_store
from ..files.options import written
from .options import CONNECTION_MODES, key_prefix


def _server_problems(conn_option: str, b: StoreBlock) -> None:
    report, value, options = b.report, b.value, b.options
    conn = value(conn_option)
    if conn is not None and (not isinstance(conn, str) or not conn.strip()):
        report(f"{conn_option} must name an Airflow connection", conn_option)
    if conn is None:
        keyed = value("key_file") is not None or value("private_key") is not None  # SFTP: a key logs in
        for key in ("host", "port", "user") + (() if keyed else ("password",)):
            if value(key) is None:
                report(f"the option '{key}' is required", key,
                       hint=f"set {key} = ..., or name an Airflow connection with {conn_option}")
    port = value("port")
    if port is not None:
        try:
            number = int(str(port).strip())
            if not 0 < number < 65536:
                raise ValueError
        except ValueError:
            report(f"port '{port}' is not a TCP port", "port", hint="set port = 21 (FTP) or 22 (SFTP)")
    path = written(options, "path")
    if path is not None:
        try:
            key_prefix(b.plugin.name, path)
        except Exception as e:
            report(str(e).split(": ", 1)[-1], "path", hint='set path = "/folder/on/the/server"')
    mode = value("connection_mode")
    if mode is not None and str(mode).strip().lower() not in CONNECTION_MODES:
        report(f"unknown connection_mode '{mode}'", "connection_mode", hint=f"use one of {', '.join(CONNECTION_MODES)}")
    _host_key_problems(report, value)


def _host_key_problems(report: Any, value: Any) -> None:
    """The host-key options (:mod:`.hostkeys`): a fingerprint as ssh-keygen prints it, boolean switches."""
    from .hostkeys import host_key_policy

    for key, hint in (("host_key_fingerprint", 'set host_key_fingerprint = "SHA256:..." as `ssh-keygen -lf` prints '
                                               "the server's key"),
                      ("strict_host_key_checking", "set strict_host_key_checking = true or false"),
                      ("no_host_key_check", "set no_host_key_check = true or false")):
        if value(key) is None:
            continue
        try:
            host_key_policy("", {key: value(key)})
        except Exception as e:
            report(str(e).split(": ", 1)[-1].split(": write")[0], key, hint=hint)


def check(plugin: PluginConfig, job: JobConfig, conn_option: str) -> list[Problem]:
    """The file options' checks, then the server options of the block (or of each ``tables_configs`` item)."""
    return check_with_store(plugin, job, partial(_server_problems, conn_option))
