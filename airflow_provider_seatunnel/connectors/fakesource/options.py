"""FakeSource's options, read the same way at compile time (``check``, ``schema``) and at run time.

A block generates one table, or one per ``tables_configs`` item (each a full config: nothing is
inherited from the block). Every option keeps SeaTunnel's key and default: ``schema`` (``fields``
or ``columns`` with ``columnLength``/``columnScale``/``defaultValue``; ``table`` names the table),
``rows``, ``row.num`` (5, rows per parallel reader), ``split.num`` (1), ``split.read-interval``
(1 ms), ``string.length``/``bytes.length``/``array.size``/``map.size`` (5), the ``*.template``
lists, the half-open ``*.min``/``*.max`` ranges and ``*.fake.mode``. Reading collects every
problem instead of stopping at the first.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import date, datetime
from typing import Any

from ...spi.options import MISSING, JobConfig, PluginConfig, Problem, as_int, as_list, lookup
from ...spi.rows import ROW_KINDS
from ...spi.schema import DataType, Schema, TableKeys, TypeError_, keys_from_options, schema_from_options
from .values import FLOAT_RANGES, INT_RANGES, BadValue, convert, number_of, row_values, text_of

#: option -> (default, smallest allowed)
SIZES = {"row.num": (5, 0), "split.num": (1, 1), "split.read-interval": (1, 0), "map.size": (5, 0),
         "array.size": (5, 0), "bytes.length": (5, 0), "string.length": (5, 0)}
#: date/time part templates -> allowed values
PART_TEMPLATES = {"date.year.template": (1, 9999), "date.month.template": (1, 12), "date.day.template": (1, 31),
                  "time.hour.template": (0, 23), "time.minute.template": (0, 59),
                  "time.second.template": (0, 59)}
MODE_TYPES = ("string", "tinyint", "smallint", "int", "bigint", "float", "double")
SCHEMA_HINT = "schema { fields { id = bigint, name = string } }"


@dataclass(frozen=True)
class Issue:
    """A problem of the options at config path ``key``."""

    message: str
    key: str
    hint: str | None = None
    schema: bool = False  # reported by the schema hook (the others by check)


@dataclass(frozen=True)
class Column:
    """What a column adds to its type (``columns`` form); passed down to elements and subfields."""

    length: int | None = None  # string length (``columnLength``: 0 in the columns form unless set)
    scale: int | None = None  # float/double rounding (``columnScale``)
    default: Any = None  # ``defaultValue`` as written (None: generate)
    has_default: bool = False


@dataclass
class Table:
    """One table a FakeSource generates."""

    key: str
    schema: Schema
    columns: dict[str, Column]
    prefix: str  # "" or "tables_configs[i]." for the problem keys
    sizes: dict[str, int] = field(default_factory=dict)
    templates: dict[str, list] = field(default_factory=dict)
    ranges: dict[str, tuple] = field(default_factory=dict)
    rows: list[Mapping] | None = None

    @property
    def row_num(self) -> int:
        """Rows each parallel reader generates (SeaTunnel's ``row.num`` is per reader)."""
        return self.sizes["row.num"]

    @property
    def splits_per_reader(self) -> int:
        """How many splits each reader gets (each emits the whole ``rows`` list)."""
        rows, split_num = self.sizes["row.num"], self.sizes["split.num"]
        if rows <= 0:
            return 0
        per_split = math.ceil(rows / split_num)
        return math.ceil(rows / per_split)



def walk_types(dt: DataType) -> list[DataType]:
    out = [dt]
    for inner in (dt.key, dt.element):
        if inner is not None:
            out.extend(walk_types(inner))
    for f in dt.fields:
        out.extend(walk_types(f.type))
    return out


def leaf_types(dt: DataType) -> list[DataType]:
    return [t for t in walk_types(dt) if t.name not in ("array", "map", "row")]


def _read_schema(opts: Mapping, prefix: str, issues: list[Issue]) -> tuple[Schema | None, dict[str, Column]]:
    raw = lookup(opts, "schema")
    key = f"{prefix}schema"
    if raw is MISSING or raw is None:
        issues.append(Issue("FakeSource needs a schema: schema { fields { ... } }", key, SCHEMA_HINT, True))
        return None, {}
    if not isinstance(raw, Mapping):
        issues.append(Issue("the schema must be an object: schema { fields { ... } }", key, SCHEMA_HINT, True))
        return None, {}
    try:
        schema = schema_from_options({"schema": raw})
    except TypeError_ as e:
        issues.append(Issue(str(e), key, "see the type strings in the README", True))
        return None, {}
    if schema is None:
        issues.append(Issue("the schema needs fields { name = type, ... } or columns = [{ name, type }, ...]",
                            key, SCHEMA_HINT, True))
        return None, {}
    bad = False
    for f in schema.fields:
        for t in walk_types(f.type):
            if t.name == "decimal" and not ((t.precision or 0) >= 1 and (t.scale or 0) <= min(t.precision or 0, 38)):
                issues.append(Issue(f"field '{f.name}': {t} needs 1 <= precision and scale <= precision "
                                    "(Spark holds at most 38 digits)", key, None, True))
                bad = True
    names = [f.name for f in schema.fields]
    for name in sorted({n for n in names if names.count(n) > 1}):
        issues.append(Issue(f"the field '{name}' is declared twice", key, None, True))
        bad = True
    try:
        keys_from_options(raw)
    except TypeError_ as e:
        issues.append(Issue(str(e), key, 'primaryKey { name = "pk", columnNames = [id] }', True))
    columns = {f.name: Column() for f in schema.fields}
    if isinstance(raw.get("columns"), list):
        for i, col in enumerate(raw["columns"]):
            ckey = f"{key}.columns[{i}]"
            length, scale = col.get("columnLength", 0), col.get("columnScale")
            meta = Column(length=as_int(length) if length is not None else None,
                          scale=as_int(scale) if scale is not None else None,
                          default=col.get("defaultValue"), has_default=col.get("defaultValue") is not None)
            if length is not None and (meta.length is None or meta.length < 0):
                issues.append(Issue(f"columnLength must be a whole number >= 0, not {text_of(length)!r}", ckey))
            if scale is not None and (meta.scale is None or meta.scale < 0):
                issues.append(Issue(f"columnScale must be a whole number >= 0, not {text_of(scale)!r}", ckey))
            columns[str(col["name"])] = meta
    return (None if bad else schema), columns


def _table_key(opts: Mapping, prefix: str, fallback: str, issues: list[Issue]) -> str:
    table = lookup(opts, "schema.table")
    if table is MISSING or table is None:
        return fallback
    text = text_of(table).strip()
    parts = text.split(".")
    if not text or len(parts) > 3 or any(not p.strip() for p in parts):
        issues.append(Issue(f"the table name {text!r} must be table, database.table or database.schema.table",
                            f"{prefix}schema.table"))
    return text


def _read_sizes(opts: Mapping, prefix: str, issues: list[Issue]) -> dict[str, int]:
    sizes = {}
    for key, (default, smallest) in SIZES.items():
        raw = lookup(opts, key)
        value = default if raw is MISSING else as_int(raw)
        if value is None or value < smallest:
            issues.append(Issue(f"{key} must be a whole number >= {smallest}, not {text_of(raw)!r}", prefix + key))
            value = default
        sizes[key] = value
    return sizes


def _read_templates(opts: Mapping, prefix: str, issues: list[Issue]) -> dict[str, list]:
    templates: dict[str, list] = {}
    kinds = {**{f"{t}.template": t for t in MODE_TYPES}, **{k: "int" for k in PART_TEMPLATES}}
    for key, kind in kinds.items():
        raw = lookup(opts, key)
        if raw is MISSING or raw is None:
            continue
        values = []
        for i, item in enumerate(as_list(raw)):
            try:
                value = convert(item, DataType(kind))
                if value is None:
                    raise BadValue("null is not a template value")
            except BadValue as e:
                issues.append(Issue(f"item {i}: {e}", prefix + key))
                continue
            if key in PART_TEMPLATES:
                low, high = PART_TEMPLATES[key]
                if not low <= value <= high:
                    issues.append(Issue(f"item {i}: {value} is not in [{low}, {high}]", prefix + key))
                    continue
            values.append(value)
        if values:
            templates[key] = values
    for t in MODE_TYPES:
        key = f"{t}.fake.mode"
        raw = lookup(opts, key)
        if raw is MISSING:
            continue
        mode = text_of(raw).strip().upper()
        if mode not in ("RANGE", "TEMPLATE"):
            issues.append(Issue(f"unknown mode {text_of(raw)!r}: use RANGE or TEMPLATE", prefix + key))
        elif mode == "TEMPLATE" and f"{t}.template" not in templates:
            issues.append(Issue(f"{t}.template is required because {key} is TEMPLATE", prefix + key,
                                f"set {t}.template = [...]"))
    return templates


def _read_ranges(opts: Mapping, prefix: str, issues: list[Issue]) -> dict[str, tuple]:
    ranges: dict[str, tuple] = {}
    for kind, (low, high) in {**INT_RANGES, **FLOAT_RANGES}.items():
        bounds: list[float] = []
        for end, default in (("min", low), ("max", high)):
            key = f"{kind}.{end}"
            raw = lookup(opts, key)
            value: float | None = default if raw is MISSING else (as_int(raw) if kind in INT_RANGES else number_of(raw))
            if value is None or not low <= value <= high:
                issues.append(Issue(f"{key} should >= {low} and <= {text_of(high)}, not {text_of(raw)!r}",
                                    prefix + key))
                value = default
            bounds.append(value)
        if bounds[0] > bounds[1]:
            issues.append(Issue(f"{kind}.min ({text_of(bounds[0])}) is greater than {kind}.max ({text_of(bounds[1])})",
                                f"{prefix}{kind}.min", "values are drawn from [min, max)"))
            bounds = [low, high]
        ranges[kind] = tuple(bounds)
    return ranges


def _check_dates(table: Table, issues: list[Issue]) -> None:
    """Every date the templates can make must exist (SeaTunnel fails at run time otherwise)."""
    days = table.templates.get("date.day.template")
    if not days or max(days) <= 28 or not any(
            f.name in ("date", "timestamp") for c in table.schema.fields for f in leaf_types(c.type)):
        return
    years = table.templates.get("date.year.template") or [datetime.now().year]
    months = table.templates.get("date.month.template") or list(range(1, 13))
    for y in sorted(set(years)):
        for m in sorted(set(months)):
            for d in sorted(set(days)):
                try:
                    date(y, m, d)
                except ValueError:
                    issues.append(Issue(f"the templates can make the date {y}-{m:02d}-{d:02d}, which does not exist",
                                        f"{table.prefix}date.day.template",
                                        "keep date.day.template within the days of every month it can meet"))
                    return


def _check_defaults(table: Table, issues: list[Issue]) -> None:
    for i, f in enumerate(table.schema.fields):
        meta = table.columns.get(f.name, Column())
        if not meta.has_default:
            continue
        for leaf in leaf_types(f.type):
            try:
                convert(text_of(meta.default), leaf, base64_bytes=False)
            except BadValue as e:
                issues.append(Issue(f"column '{f.name}': defaultValue: {e}",
                                    f"{table.prefix}schema.columns[{i}].defaultValue"))
                break


def _check_rows(table: Table, raw: Any, issues: list[Issue]) -> list[Mapping] | None:
    key = f"{table.prefix}rows"
    if not isinstance(raw, list):
        issues.append(Issue("rows must be a list of { kind = INSERT, fields = [...] }", key))
        return None
    for i, row in enumerate(raw):
        where = f"{key}[{i}]"
        if not isinstance(row, Mapping):
            issues.append(Issue(f"row {i} must be an object {{ kind = INSERT, fields = [...] }}", where))
            continue
        kind = row.get("kind")
        if kind is None:
            issues.append(Issue(f"row {i} needs a kind ({', '.join(ROW_KINDS)})", f"{where}.kind"))
        elif text_of(kind) not in ROW_KINDS:
            issues.append(Issue(f"row {i}: unknown kind {text_of(kind)!r}: use one of {', '.join(ROW_KINDS)} "
                                "(upper case)", f"{where}.kind"))
        if row.get("fields") is None:
            issues.append(Issue(f"row {i} needs fields = [...] or {{...}}", f"{where}.fields"))
            continue
        try:
            row_values(row["fields"], table.schema.fields)
        except BadValue as e:
            path = e.path.lstrip(".")
            name = re.split(r"[.\[]", path, maxsplit=1)[0] if path else ""
            what = f"row {i}, field '{name}'" + (f" ({path})" if path != name else "") if name else f"row {i}"
            issues.append(Issue(f"{what}: {e}", f"{where}.fields" + (f".{name}" if name else "")))
    return raw


def _read_table(opts: Mapping, prefix: str, fallback: str, issues: list[Issue]) -> Table | None:
    if not isinstance(opts, Mapping):
        issues.append(Issue("each tables_configs item must be a FakeSource config object", prefix.rstrip(".")))
        return None
    schema, columns = _read_schema(opts, prefix, issues)
    key = _table_key(opts, prefix, fallback, issues)
    sizes = _read_sizes(opts, prefix, issues)
    templates = _read_templates(opts, prefix, issues)
    ranges = _read_ranges(opts, prefix, issues)
    if schema is None:
        return None
    table = Table(key=key, schema=schema, columns=columns, prefix=prefix, sizes=sizes, templates=templates,
                  ranges=ranges)
    _check_dates(table, issues)
    _check_defaults(table, issues)
    raw_rows = lookup(opts, "rows")
    if raw_rows is not MISSING and raw_rows is not None:
        table.rows = _check_rows(table, raw_rows, issues)
    return table


def _output_name(opts: Mapping) -> str | None:
    for key in ("plugin_output", "result_table_name"):
        value = opts.get(key)
        if isinstance(value, str) and value.strip():
            return value.strip()
    return None


def read_tables(options: Mapping, output: str | None = None) -> tuple[list[Table], list[Issue]]:
    """The tables a FakeSource config generates, and what is wrong with it."""
    issues: list[Issue] = []
    configs = lookup(options, "tables_configs")
    if configs is MISSING or configs is None:
        table = _read_table(options, "", output or _output_name(options) or "default", issues)
        return ([table] if table else []), issues
    if not isinstance(configs, list) or not configs:
        issues.append(Issue("tables_configs must be a non-empty list of FakeSource configs", "tables_configs",
                            "tables_configs = [ { schema { table = \"db.t1\", fields { ... } } }, ... ]", True))
        return [], issues
    tables: list[Table] = []
    seen: dict[str, int] = {}
    for i, item in enumerate(configs):
        prefix = f"tables_configs[{i}]."
        fallback = (_output_name(item) if isinstance(item, Mapping) else None) or "default"
        table = _read_table(item, prefix, fallback, issues)
        if table is None:
            continue
        if table.key in seen:
            issues.append(Issue(f"table name: [{table.key}] must be unique (tables_configs[{seen[table.key]}] "
                                "has it too)", f"{prefix}schema.table", "give every table its own schema.table"))
            continue
        seen[table.key] = i
        tables.append(table)
    return tables, issues


def _problem(job: JobConfig, plugin: PluginConfig, issue: Issue) -> Problem:
    found = job.problem(issue.message, plugin, key=issue.key, hint=issue.hint)
    if "[" in issue.key:
        found = replace(found, line=plugin.line_of(issue.key.split("[", 1)[0]))
    return found


def option_problems(plugin: PluginConfig, job: JobConfig) -> list[Problem]:
    """Option problems: sizes, ranges, templates, modes, table names, rows, defaults."""
    _, issues = read_tables(plugin.options)
    return [_problem(job, plugin, i) for i in issues if not i.schema]


def output_schema(plugin: PluginConfig, job: JobConfig) -> tuple[Schema | None, list[Problem]]:
    """The output schema from ``schema`` (None for a multi-table source), with schema problems."""
    tables, issues = read_tables(plugin.options)
    problems = [_problem(job, plugin, i) for i in issues if i.schema]
    if problems or len(tables) != 1 or lookup(plugin.options, "tables_configs") is not MISSING:
        return None, problems
    return tables[0].schema, problems


def table_keys(options: Mapping, output: Any = None) -> dict[str, TableKeys] | None:
    """Each table's id with the primary and constraint keys its ``schema`` declares; None when the
    block is not readable (its problems are reported by :func:`option_problems`)."""
    tables, _ = read_tables(options, output.strip() if isinstance(output, str) and output.strip() else None)
    configs = lookup(options, "tables_configs")
    items = configs if isinstance(configs, list) else [options]
    if not tables:
        return None
    out: dict[str, TableKeys] = {}
    for table in tables:
        at = int(table.prefix[len("tables_configs["):].split("]")[0]) if table.prefix else 0
        raw = lookup(items[at], "schema") if isinstance(items[at], Mapping) else None
        try:
            out[table.key] = keys_from_options(raw)
        except TypeError_:
            out[table.key] = TableKeys()
    return out
