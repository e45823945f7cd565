"""Replace transform: replaces text in one field, in place.

``replace_field``, ``pattern`` and ``replacement`` are required; ``is_regex`` (default
false) picks a literal replace-all (Java ``String.replace``) or a Java regex
``replaceAll`` / ``replaceFirst`` with ``$1`` back-references; ``replace_first`` has no
default and is required when ``is_regex`` is true. Null stays null. The value is converted
with toString and the column keeps its type: a non-string field's result is cast back
(a result that does not parse as the type fails the row). Rows keep their row kind.

Everything is Spark's ``regexp_replace`` (Java regex, Java replacement syntax):
literal mode quotes the pattern (``Pattern.quote``) and the replacement
(``Matcher.quoteReplacement``); replace-first anchors the pattern as
``^((?s:.*?))(pattern)`` and replaces with ``$1`` + the replacement, whose group references
(and the pattern's own back-references) are renumbered by two. Java regex comments mode
(``(?x)`` with ``#`` comments) is not supported in replace-first patterns.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from ..spi import TRANSFORM, Capabilities, Connector, Dataset, RunContext, SchemaInference, Transform, Vertex
from ..spi.optionspec import Option, OptionSpec
from ..spi.rows import quote
from .common import check_regex, field_problems, kind_columns, require_columns, single_input

if TYPE_CHECKING:
    from ..spi.options import JobConfig, PluginConfig, Problem
    from ..spi.schema import Schema

NAME = "Replace"
_NOT_TEXT = ("array", "map", "row", "bytes")  # types whose toString is no text to replace in


# ---------------------------------------------------------------- Java regex helpers (pure Python)

def java_quote(text: str) -> str:
    """Java's ``Pattern.quote``: a regex matching ``text`` literally."""
    parts, current = ["\\Q"], 0
    while (at := text.find("\\E", current)) != -1:
        parts += [text[current:at], "\\E\\\\E\\Q"]
        current = at + 2
    parts += [text[current:], "\\E"]
    return "".join(parts)


def quote_replacement(text: str) -> str:
    """Java's ``Matcher.quoteReplacement``: a replacement inserting ``text`` literally."""
    return "".join("\\" + c if c in "\\$" else c for c in text)


def shift_pattern(pattern: str, shift: int) -> tuple[str, int]:
    """``(pattern with numbered back-references moved up by shift, its capturing group count)``.

    Follows Java's parser: ``\\Q...\\E`` quoting, escapes, nested character classes, named
    groups ``(?<name>...)`` (which count), non-capturing ``(?...)`` constructs (which do
    not), and multi-digit references taken only while such a group exists so far.
    """
    out: list[str] = []
    i, n, groups, depth = 0, len(pattern), 0, 0
    while i < n:
        c = pattern[i]
        if c == "\\":
            if i + 1 >= n:
                out.append(c)
                break
            d = pattern[i + 1]
            if d == "Q":
                end = pattern.find("\\E", i + 2)
                stop = n if end == -1 else end + 2
                out.append(pattern[i:stop])
                i = stop
                continue
            if depth == 0 and "1" <= d <= "9":
                num, j = int(d), i + 2
                while j < n and pattern[j].isdigit() and num * 10 + int(pattern[j]) <= groups:
                    num, j = num * 10 + int(pattern[j]), j + 1
                out.append(f"(?:\\{num + shift})")
                i = j
                continue
            out.append(pattern[i:i + 2])
            i += 2
            continue
        if depth:
            depth += 1 if c == "[" else -1 if c == "]" else 0
        elif c == "[":
            depth = 1
            if pattern.startswith("[^]", i) or pattern.startswith("[]", i):  # a leading ']' is literal
                out.append(pattern[i:i + (3 if pattern[i + 1] == "^" else 2)])
                i += 3 if pattern[i + 1] == "^" else 2
                continue
        elif c == "(" and (not pattern.startswith("(?", i)
                           or (pattern.startswith("(?<", i) and i + 3 < n and pattern[i + 3] not in "=!")):
            groups += 1  # a capturing group: plain, or named (?<name>...)
        out.append(c)
        i += 1
    return "".join(out), groups


def shift_replacement(replacement: str, groups: int, shift: int) -> str:
    """A Java replacement string with its ``$n`` references moved up by ``shift``.

    Raises ValueError where Java's ``appendReplacement`` would (a trailing backslash, a
    ``$`` not followed by a group, a group the pattern does not have).
    """
    out: list[str] = []
    i, n = 0, len(replacement)
    while i < n:
        c = replacement[i]
        if c == "\\":
            if i + 1 >= n:
                raise ValueError("character to be escaped is missing at the end of the replacement")
            out.append(replacement[i:i + 2])
            i += 2
            continue
        if c != "$":
            out.append(c)
            i += 1
            continue
        if i + 1 >= n:
            raise ValueError("illegal group reference: '$' at the end of the replacement")
        d = replacement[i + 1]
        if d == "{":
            end = replacement.find("}", i + 2)
            if end == -1 or not replacement[i + 2:end].isalnum() or not replacement[i + 2].isalpha():
                raise ValueError("illegal named group reference in the replacement (write ${name})")
            out.append(replacement[i:end + 1])
            i = end + 1
            continue
        if not d.isdigit():
            raise ValueError(f"illegal group reference '${d}' in the replacement (write \\$ for a literal $)")
        num, j = int(d), i + 2
        while j < n and replacement[j].isdigit() and num * 10 + int(replacement[j]) <= groups:
            num, j = num * 10 + int(replacement[j]), j + 1
        if num > groups:
            raise ValueError(f"no group {num} in the pattern (it has {groups})")
        out.append(f"${num + shift}")
        if j < n and replacement[j].isdigit():  # keep a following digit literal after renumbering
            out.append("\\" + replacement[j])
            j += 1
        i = j
    return "".join(out)


def replace_first_regex(pattern: str, replacement: str) -> tuple[str, str]:
    """``(regex, replacement)`` with which a replace-all does Java's ``replaceFirst(pattern, replacement)``."""
    shifted, groups = shift_pattern(pattern, 2)
    return f"^((?s:.*?))({shifted})", "$1" + shift_replacement(replacement, groups, 2)


# ---------------------------------------------------------------- the transform

SPEC = OptionSpec((
    Option("replace_field", required=True, description="The field whose text is replaced, in place."),
    Option("pattern", required=True, description="The text, or with is_regex a Java regex, to replace."),
    Option("replacement", required=True, description="What replaces it (with is_regex: Java's replacement "
           "syntax, $1 for group 1)."),
    Option("is_regex", "bool", False, "Whether pattern is a regex."),
    Option("replace_first", "bool", None, "With is_regex: replace the first match only (true) or every match.",
           required_if=(("is_regex", (True,)),)),
))


class Replace(Connector, SchemaInference, Transform):
    name = NAME
    capabilities = Capabilities(sections=frozenset({TRANSFORM}), connect=True)
    option_spec = SPEC
    description = "Replaces text in a field."

    def check(self, plugin: PluginConfig, job: JobConfig) -> list[Problem]:
        o = SPEC.valid(plugin.options)
        if o is None:
            return []
        if o["is_regex"] and o["pattern"] is not None and o["replacement"] is not None:
            try:
                shift_replacement(o["replacement"], shift_pattern(o["pattern"], 0)[1], 0)
            except ValueError as e:
                return [job.problem(str(e), plugin, key="replacement", hint="the replacement uses Java's syntax: "
                                    "$1 for group 1, \\$ for a literal dollar sign")]
        return []

    def schema(self, plugin: PluginConfig, job: JobConfig,
               inputs: Sequence[Schema | None]) -> tuple[Schema | None, list[Problem]]:
        source = inputs[0] if inputs else None
        field = plugin.get("replace_field")
        if source is None or field is None:
            return None, []
        problems = field_problems(plugin, job, NAME, [str(field)], source, "replace_field")
        if problems:
            return None, problems
        found = source.get(str(field))
        if found is not None and found.type.name in _NOT_TEXT:
            return None, [job.problem(f"the field '{field}' is {found.type}: Replace works on text (string) fields",
                                      plugin, key="replace_field")]
        return source, []

    def apply(self, ctx: RunContext, vertex: Vertex, inputs: Mapping[str, Dataset]) -> Dataset:
        from pyspark.sql import functions as F
        from pyspark.sql.types import ArrayType, BinaryType, MapType, StringType, StructType

        from ..spi.errors import RuntimeConfigError
        from ..spi.rows import data_columns

        o = SPEC.run_time(vertex.config)
        field, pattern, replacement, is_regex = o["replace_field"], o["pattern"], o["replacement"], o["is_regex"]
        try:
            if not is_regex:
                regex, rep = java_quote(pattern), quote_replacement(replacement)
            elif o["replace_first"]:
                regex, rep = replace_first_regex(pattern, replacement)
            else:
                regex, rep = pattern, shift_replacement(replacement, shift_pattern(pattern, 0)[1], 0)
        except ValueError as e:
            raise RuntimeConfigError(f"replacement {replacement!r}: {e}") from None
        if is_regex:
            check_regex(ctx, pattern, "the pattern")
            check_regex(ctx, regex, "the pattern")

        out = {}
        for table, df in single_input(inputs).items():
            require_columns(df, NAME, [field])
            dtype = df.schema[field].dataType
            if isinstance(dtype, (ArrayType, MapType, StructType, BinaryType)):
                raise RuntimeConfigError(f"the field '{field}' is {dtype.simpleString()}: Replace works on text fields")
            text = F.col(quote(field))
            if not isinstance(dtype, StringType):
                text = text.cast("string")
            result = F.regexp_replace(text, F.lit(regex), F.lit(rep))
            if not isinstance(dtype, StringType):
                typed = result.try_cast(dtype)
                bad = F.concat(F.lit("Replace: the result '"), result,
                               F.lit(f"' is not a valid {dtype.simpleString()} for the field '{field}'"))
                result = F.when(result.isNotNull() & typed.isNull(), F.raise_error(bad)).otherwise(typed)
            columns = [(result if c == field else F.col(quote(c))).alias(c) for c in data_columns(df)]
            out[table] = df.select(*columns, *kind_columns(df))
        return out


CONNECTOR = Replace()
