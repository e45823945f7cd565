"""Helpers the built-in transforms share: SeaTunnel's missing-field messages (checked at compile
time when the input schema is known, and again at run time), the row-kind column in a select
list, Java regex checks, and the one input of a single-input transform."""

from __future__ import annotations

import difflib
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..spi.contract import Dataset
from ..spi.errors import RuntimeConfigError
from ..spi.rows import ROW_KIND, data_columns
from ..spi.sessions import is_connect

if TYPE_CHECKING:
    from ..spi.options import JobConfig, PluginConfig, Problem
    from ..spi.schema import Schema


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
    known = data_columns(df)
    missing = [n for n in dict.fromkeys(names) if n not in known]
    if missing:
        raise RuntimeConfigError(f"{missing_message(transform, missing)} ({_hint(missing, known)})")


def kind_columns(df: Any) -> list[Any]:
    """The hidden row-kind column of ``df`` as a one-item select list (empty if it has none)."""
    from pyspark.sql import functions as F

    return [F.col(ROW_KIND)] if ROW_KIND in df.columns else []


def check_regex(ctx: Any, pattern: str, what: str) -> None:
    """Raise :class:`RuntimeConfigError` unless ``pattern`` compiles as a Java regex: compiled on the
    driver's JVM (its error names the reason and the index), or on Spark Connect, where there is no
    JVM here, by the server for a one-row query."""
    from pyspark.sql import functions as F

    try:
        if is_connect(ctx.spark):
            ctx.spark.range(1).select(F.regexp_like(F.lit(""), F.lit(pattern))).collect()
        else:
            ctx.spark.sparkContext._jvm.java.util.regex.Pattern.compile(pattern)
    except Exception as e:  # py4j wraps the PatternSyntaxException; Connect names the parameter
        text = [line for line in str(getattr(e, "java_exception", e)).strip().splitlines() if line.strip()]
        raise RuntimeConfigError(f"{what} {pattern!r} is not a valid Java regex: "
                                 f"{text[0] if text else type(e).__name__}") from None


def single_input(inputs: Mapping[str, Dataset]) -> Dataset:
    """The one dataset (``{table id: DataFrame}``) of a single-input transform."""
    return next(iter(inputs.values())) if inputs else {}
