"""What a connector reads its block with: the parsed block, the job, located problems, option coercion.

Re-exported from the config reader so that connectors depend on the contract alone.
"""

from __future__ import annotations

from ..config.errors import ConfigError, Problem
from ..config.hocon import MISSING
from ..config.loader import JobConfig, PluginConfig
from ..config.options import as_bool, as_int, as_list, checked_bool, checked_int, lookup

__all__ = ["MISSING", "ConfigError", "JobConfig", "PluginConfig", "Problem", "as_bool", "as_int", "as_list",
           "checked_bool", "checked_int", "lookup"]
