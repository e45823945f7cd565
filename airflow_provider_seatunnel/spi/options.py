"""What a connector reads its block with: the parsed block, the job, located problems, option coercion.

Re-exported from the config reader so that connectors depend on the contract alone.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from ..config.errors import ConfigError, Problem
from ..config.hocon import MISSING
from ..config.loader import JobConfig, PluginConfig
from ..config.options import as_bool, as_int, as_list, checked_bool, checked_int, lookup

if TYPE_CHECKING:
    from .errors import RuntimeConfigError

__all__ = ["MISSING", "ConfigError", "JobConfig", "OptionError", "PluginConfig", "Problem", "as_bool", "as_int",
           "as_list", "bool_option", "checked_bool", "checked_int", "lookup", "run_time_options"]

T = TypeVar("T")


@dataclass(frozen=True)
class OptionError(ValueError):
    """An option SeaTunnel would refuse: its key, the message and a hint (a connector's option
    parser raises it; its compile-time check turns it into a located problem)."""

    key: str
    message: str
    hint: str | None = None

    def __str__(self) -> str:
        return self.message

    def at_run_time(self) -> RuntimeConfigError:
        """The same refusal met when a task runs (a hand-written plan skips the compiler): a deterministic
        :class:`.errors.RuntimeConfigError` naming the key and the hint."""
        from .errors import RuntimeConfigError

        return RuntimeConfigError(f"option '{self.key}': {self.message}" + (f" ({self.hint})" if self.hint else ""))


def bool_option(options: Any, key: str, default: Any = None) -> Any:
    """The boolean option ``key`` of a block (``true``/``false`` as SeaTunnel spells them), ``default``
    when absent or null; anything else is an :class:`OptionError` naming the key."""
    value = lookup(options, key)
    if value is MISSING or value is None:
        return default
    parsed = as_bool(value)
    if parsed is None:
        raise OptionError(key, f"{key} must be true or false, found {value!r}")
    return parsed


def run_time_options(parse: Callable[[Any, str], Any], vertex: Any, want: type[T]) -> T:
    """A vertex's block parsed again when its task runs (a hand-written plan skips the compiler's
    checks) into ``want`` (its connector's source or sink options): an :class:`OptionError` becomes
    the deterministic :class:`.errors.RuntimeConfigError` naming the key."""
    try:
        options = parse(vertex.config, vertex.kind)
    except OptionError as e:
        raise e.at_run_time() from None
    if not isinstance(options, want):
        raise TypeError(f"{vertex.kind} options parsed as {type(options).__name__}, not {want.__name__}")
    return options
