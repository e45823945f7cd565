"""Every two-phase sink of the suite, by lower-case name (a new sink adds its adapter's module here)."""

from __future__ import annotations

from tests.conformance import databases, files, lakehouse, plugins
from tests.conformance.adapters import Adapter

ADAPTERS: dict[str, Adapter] = {a.name.lower(): a for a in (*files.ADAPTERS, *databases.ADAPTERS, *lakehouse.ADAPTERS,
                                                     *plugins.ADAPTERS)}
