"""What a connector reads its block with: the parsed block, the job, located problems, option coercion.

Re-exported from the config reader so that connectors depend on the contract alone.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from ..config.errors import ConfigError, Problem
from ..config.hocon import MISSING
from ..config.loader import JobConfig, PluginConfig
from ..config.options import as_bool, as_int, as_list, checked_bool, checked_int, lookup

if TYPE_CHECKING:
    from .errors import RuntimeConfigError
    from .schema import Schema

__all__ = ["MISSING", "ConfigError", "JobConfig", "OptionError", "PluginConfig", "Problem", "as_bool", "as_int",
           "as_list", "bool_option", "checked_bool", "checked_int", "choice_option", "key_field_problems", "lookup",
           "mode_option_problems", "names_option", "option", "run_time_options", "text_option"]

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


def option(options: Any, key: str, default: Any = None) -> Any:
    """The option ``key`` of a block as written (dotted keys as SeaTunnel reads them), ``default`` when
    absent or null."""
    value = lookup(options, key)
    return default if value is MISSING or value is None else value


def text_option(options: Any, key: str, default: str | None = None) -> str | None:
    """A string option, stripped; ``default`` when absent; empty, a list or a map is an :class:`OptionError`."""
    value = option(options, key)
    if value is None:
        return default
    if isinstance(value, (Mapping, list)) or not str(value).strip():
        raise OptionError(key, f"{key} must be a non-empty string, found {value!r}")
    return str(value).strip()


def choice_option(options: Any, key: str, allowed: tuple[str, ...], default: str) -> str:
    """One of ``allowed`` (upper-case names such as save modes), matched case-insensitively; ``default`` when
    absent; another value is an :class:`OptionError` suggesting the closest allowed name."""
    value = option(options, key)
    if value is None:
        return default
    text = str(value).strip().upper()
    if text in allowed:
        return text
    close = difflib.get_close_matches(text, list(allowed), n=1, cutoff=0.5)
    raise OptionError(key, f"unknown {key} '{value}'",
                      f"did you mean '{close[0]}'?" if close else f"use one of {', '.join(allowed)}")


def names_option(options: Any, key: str) -> tuple[str, ...]:
    """Column names: a list, or comma-separated strings (SeaTunnel writes key lists both ways); none when
    absent. Empty names, non-strings and a name given twice (case-insensitively) are an :class:`OptionError`."""
    value = option(options, key)
    if value is None:
        return ()
    names = [n for item in as_list(value) for n in (item.split(",") if isinstance(item, str) else [item])]
    if not names or not all(isinstance(n, str) and n.strip() for n in names):
        raise OptionError(key, f"{key} must name columns (a list, or one comma-separated string), found {value!r}",
                          f'{key} = ["id"]')
    out = tuple(n.strip() for n in names)
    twice = sorted({n for n in out if [m.lower() for m in out].count(n.lower()) > 1})
    if twice:
        raise OptionError(key, f"{key} names {', '.join(twice)} twice")
    return out


def key_field_problems(plugin: PluginConfig, job: JobConfig, schema: Schema,
                       keys: Sequence[tuple[str, Sequence[str]]], case_sensitive: bool) -> list[Problem]:
    """A sink's key options (``(option, column names)``: primary keys, partition keys) must name fields of
    its input ``schema``: an error at each option naming one it lacks (compared as ``case_sensitive`` says)."""
    fields = schema.names
    known = set(fields) if case_sensitive else {f.lower() for f in fields}
    problems = []
    for key, names in keys:
        unknown = [n for n in names if (n if case_sensitive else n.lower()) not in known]
        if unknown:
            problems.append(job.problem(f"{key}: {', '.join(unknown)} is not a field of the input (fields: "
                                        f"{', '.join(fields)})", plugin, key=key))
    return problems


def mode_option_problems(plugin: PluginConfig, job: JobConfig, batch_only: Sequence[str], stream_only: Sequence[str],
                         reads: tuple[str, str], hint: str) -> list[Problem]:
    """A source's options of the other job mode: in STREAMING a BATCH-only option (one version of the data,
    where a stream reads every change: ``reads`` = (what the option reads, what a stream reads)) is an
    error with ``hint``; in BATCH a STREAMING-only option is ignored with a warning."""
    streaming = str(job.env_get("job.mode", "BATCH")).strip().upper() == "STREAMING"
    problems: list[Problem] = []
    for key in batch_only if streaming else stream_only:
        if not plugin.has(key):
            continue
        if streaming:
            problems.append(job.problem(f"{key} reads {reads[0]}; a STREAMING source reads {reads[1]} from where it "
                                        "starts", plugin, key=key, hint=hint))
        else:
            problems.append(job.problem(f"{key} applies to STREAMING jobs only: it is ignored", plugin, key=key,
                                        severity="warning"))
    return problems


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
