"""Filter transform: keeps (``include_fields``, fallback key ``fields``) or drops (``exclude_fields``) fields.

Include lists the output in the listed order; exclude keeps the input order minus the
listed fields. Every listed field must exist (SeaTunnel's TRANSFORM_COMMON-02). Rows keep
their row kind.

This module also holds the field helpers the built-in transforms share: SeaTunnel's
missing-field messages, checked at compile time when the input schema is known and again
at run time, and column quoting for Spark.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ..config.options import as_list
from .base import TRANSFORM, Connector, exactly_one_of

if TYPE_CHECKING:
    from ..config.errors import Problem
    from ..config.loader import JobConfig, PluginConfig
    from ..plan.schema import Schema


# ---------------------------------------------------------------- shared field helpers

def quote(name: str) -> str:
    """``name`` as a Spark column reference (backticks: dots and spaces stay part of the name)."""
    return "`" + name.replace("`", "``") + "`"


def missing_message(transform: str, missing: Sequence[str]) -> str:
    """SeaTunnel's TRANSFORM_COMMON-01/02 message for fields absent from the upstream schema."""
    if len(missing) == 1:
        return f"The input field '{missing[0]}' of '{transform}' transform not found in upstream schema"
    return f"The input fields '{','.join(missing)}' of '{transform}' transform not found in upstream schema"


def _hint(missing: Sequence[str], known: Sequence[str]) -> str:
    guesses = [g for name in missing for g in difflib.get_close_matches(name, list(known), n=1, cutoff=0.6)]
    if guesses and len(missing) == 1:
        return f"did you mean '{guesses[0]}'? fields: {', '.join(known)}"
    return f"the fields are: {', '.join(known)}" if known else "the upstream schema has no fields"


def field_problems(plugin: PluginConfig, job: JobConfig, transform: str, names: Sequence[str],
                   schema: Schema | None, key: str) -> list[Problem]:
    """One problem naming the ``names`` absent from ``schema`` (none if the schema is unknown).

    Field names match exactly, as in SeaTunnel (``Name`` is not ``name``).
    """
    if schema is None:
        return []
    known = schema.names
    missing = [n for n in dict.fromkeys(names) if n not in known]
    if not missing:
        return []
    return [job.problem(missing_message(transform, missing), plugin, key=key, hint=_hint(missing, known))]


def require_columns(df: Any, transform: str, names: Sequence[str]) -> None:
    """Raise :class:`RuntimeConfigError` unless every one of ``names`` is a data column of ``df``."""
    from ..runtime.errors import RuntimeConfigError
    from ..runtime.rows import data_columns

    known = data_columns(df)
    missing = [n for n in dict.fromkeys(names) if n not in known]
    if missing:
        raise RuntimeConfigError(f"{missing_message(transform, missing)} ({_hint(missing, known)})")


def kind_columns(df: Any) -> list[Any]:
    """The hidden row-kind column of ``df`` as a one-item select list (empty if it has none)."""
    from pyspark.sql import functions as F

    from ..runtime.rows import ROW_KIND

    return [F.col(ROW_KIND)] if ROW_KIND in df.columns else []


def check_regex(ctx: Any, pattern: str, what: str) -> None:
    """Raise :class:`RuntimeConfigError` unless ``pattern`` compiles as a Java regex (checked on the driver)."""
    from ..runtime.errors import RuntimeConfigError

    try:
        ctx.spark.sparkContext._jvm.java.util.regex.Pattern.compile(pattern)
    except Exception as e:  # py4j wraps the PatternSyntaxException
        text = str(getattr(e, "java_exception", e)).strip().splitlines()
        raise RuntimeConfigError(f"{what} {pattern!r} is not a valid Java regex: "
                                 f"{text[0] if text else type(e).__name__}") from None


def single_input(inputs: dict) -> dict:
    """The one dataset (``{table id: DataFrame}``) of a single-input transform."""
    return next(iter(inputs.values())) if inputs else {}


# ---------------------------------------------------------------- Filter

NAME = "Filter"


def _options(options: Any) -> tuple[list[str] | None, list[str] | None]:
    """``(include, exclude)`` field lists; the one not set is None."""
    from ..config.hocon import MISSING
    from ..config.options import lookup

    include = lookup(options, "include_fields")
    if include is MISSING:
        include = lookup(options, "fields")
    exclude = lookup(options, "exclude_fields")
    return ([str(x) for x in as_list(include)] if include is not MISSING else None,
            [str(x) for x in as_list(exclude)] if exclude is not MISSING else None)


def _key(options: Any) -> str:
    include, _ = _options(options)
    if include is None:
        return "exclude_fields"
    return "include_fields" if "include_fields" in options else "fields"


def _check(plugin: PluginConfig, job: JobConfig) -> list[Problem]:
    found = exactly_one_of(plugin, job, ("include_fields", "fields"), ("exclude_fields",))
    if not found:
        include, exclude = _options(plugin.options)
        if not (include if include is not None else exclude):
            found.append(job.problem("the field list is empty", plugin, key=_key(plugin.options),
                                     hint="list at least one field"))
    return found


def schema(plugin: PluginConfig, job: JobConfig, inputs: list[Schema | None]) -> tuple[Schema | None, list[Problem]]:
    from ..plan.schema import Schema

    source = inputs[0] if inputs else None
    include, exclude = _options(plugin.options)
    if source is None or (include is None) == (exclude is None):
        return None, []
    listed = include if include is not None else exclude
    problems = field_problems(plugin, job, NAME, listed, source, _key(plugin.options))
    if problems:
        return None, problems
    by_name = {f.name: f for f in source.fields}
    if include is not None:
        return Schema(tuple(by_name[n] for n in dict.fromkeys(include))), []
    dropped = set(exclude)
    return Schema(tuple(f for f in source.fields if f.name not in dropped)), []


def apply(ctx: Any, vertex: Any, inputs: dict) -> dict:
    from pyspark.sql import functions as F

    from ..runtime.errors import RuntimeConfigError
    from ..runtime.rows import data_columns

    include, exclude = _options(vertex.config)
    if (include is None) == (exclude is None):
        raise RuntimeConfigError("exactly one of include_fields (or fields) and exclude_fields must be set")
    out = {}
    for table, df in single_input(inputs).items():
        require_columns(df, NAME, include if include is not None else exclude)
        if include is not None:
            keep = list(dict.fromkeys(include))
        else:
            dropped = set(exclude)
            keep = [c for c in data_columns(df) if c not in dropped]
        out[table] = df.select(*[F.col(quote(c)) for c in keep], *kind_columns(df))
    return out


CONNECTOR = Connector(
    name=NAME,
    kinds=frozenset({TRANSFORM}),
    check=_check,
    schema=schema,
    apply=apply,
    description="Keeps (include_fields) or drops (exclude_fields) fields.",
)
