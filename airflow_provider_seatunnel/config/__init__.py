"""Loading job configs: the SeaTunnel HOCON dialect, JSON and SQL; variables; errors."""

from .errors import ConfigError, Problem
from .loader import JobConfig, PluginConfig, load_job
from .variables import split_cli_variables

__all__ = ["ConfigError", "JobConfig", "PluginConfig", "Problem", "load_job", "split_cli_variables"]
