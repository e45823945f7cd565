"""Portability: what runs here but SeaTunnel's own engine refuses.

A config that validates here should run on SeaTunnel too. Where this package accepts more than the
pinned SeaTunnel release (:data:`SEATUNNEL_RELEASE`) does (a Spark SQL function SeaTunnel's Sql
transform does not know, a query shape it refuses, a literal its release misreads), a connector's
compile-time check reports a *not portable* problem (code :data:`NOT_PORTABLE`) located at the
plugin's key: a warning, and an error under the ``[seatunnel] strict`` setting, as an unknown
option key is. The job plans and runs here either way; the problem says what to write instead so
that it runs on both engines.

The facts each check relies on are data in the connector that checks (its tables of what SeaTunnel
knows), each verified by running a config on SeaTunnel's engine (docs/parity.md).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .options import JobConfig, PluginConfig, Problem

__all__ = ["NOT_PORTABLE", "SEATUNNEL_RELEASE", "not_portable", "severity"]

#: the code of a problem for what runs here but the pinned SeaTunnel release refuses
NOT_PORTABLE = "not-portable"
#: the SeaTunnel release whose engine the portability checks describe
SEATUNNEL_RELEASE = "2.3.8"


def severity(strict: bool | None = None) -> str:
    """The severity of what the pinned SeaTunnel refuses: ``error`` when ``strict`` (default: the
    ``[seatunnel] strict`` setting), else ``warning``."""
    from .. import settings

    return "error" if (settings.strict() if strict is None else strict) else "warning"


def not_portable(job: JobConfig, plugin: PluginConfig, message: str, *, key: str | None = None,
                 hint: str | None = None, strict: bool | None = None) -> Problem:
    """A problem at ``plugin``'s ``key``: ``message`` (what SeaTunnel refuses and why) said to be not portable,
    with ``hint`` (what to write instead), of :func:`severity`."""
    return job.problem(f"{message}: not portable to SeaTunnel {SEATUNNEL_RELEASE}", plugin, key=key, hint=hint,
                       severity=severity(strict), code=NOT_PORTABLE)
