"""How LocalFile reads and writes excel workbooks (``.xlsx``), with openpyxl in Spark's Python workers.

Spark does the file I/O on both sides, through Hadoop's file systems, so excel works wherever the
other formats do (local paths, ``s3a://``, ``sftp://``, FtpFile's spools); only the workbook itself
is read or built in Python (the ``excel`` extra: openpyxl, on the driver and the executors).

**Reading**: Spark's ``binaryFile`` source hands each file's bytes to a Python worker
(``mapInArrow``), which opens the workbook read-only and reads the sheet ``sheet_name`` names (the
first one by default). Row numbers up to ``skip_header_row_number`` are skipped, and so are rows
with no value in the schema's columns. The schema's fields are the sheet's columns in order (A,
B, ...). A cell becomes the field's value as SeaTunnel converts it: a number cell gives an integer
field its integral part, a floating-point field the number, a decimal field its digits; a date
cell gives a date, timestamp or time field its part; a boolean cell ``true``/``false``; a text
cell is parsed (numbers; dates, timestamps and times in ``date_format``/``datetime_format``/
``time_format`` first, then the patterns text files accept; booleans as Java's
``Boolean.parseBoolean``); a string field gets any cell as Java's ``String.valueOf`` writes it
(``1.0``, ``1.0E7``, ``2024-01-02T03:04``). Arrays and maps are read from JSON text, rows from
text split by ``field_delimiter``, bytes from the text's UTF-8. An empty, blank or error cell
(``#N/A``) is null; a formula gives its cached value. ``.xls`` (Excel 97-2003) files are refused:
openpyxl reads only the zip-based format.

**Writing**: each write task turns its rows into workbooks in a Python worker (``mapInArrow``): one per
partition directory, a new one past ``batch_size`` rows or a sheet's 1,048,576 rows. The sheet is
``sheet_name`` (default ``Sheet<random int>``, as SeaTunnel), its first row the written column names
unless ``enable_header_write = false``. Numbers are number cells holding doubles, as SeaTunnel's
(integers and decimals too: ``1.0``; their text Java's ``Double.toString``; an integer beyond 2^53 its
digits; NaN and infinities ``#NUM!``), booleans boolean cells, dates, timestamps and times date cells
formatted by ``date_format``/``datetime_format``/``time_format`` (a time on 1970-01-01), arrays and maps
JSON text, rows their fields joined by ``field_delimiter``, bytes Java's list of signed bytes (``[104,
105]``), an empty string an empty text cell, null an empty cell (a row of nulls is a row). Characters
XML cannot hold are written as ``_xHHHH_`` (and read back). Each workbook travels to Spark's text writer
as one row (one file per row: ``maxRecordsPerFile`` = 1); the newline that writer ends a row with
becomes the workbook's one-byte zip comment, so the staged file is a valid ``.xlsx`` as it is.
"""

from __future__ import annotations

import datetime as dt
import functools
import io
import math
import random
import re
from collections.abc import Iterator, Mapping
from decimal import Decimal, InvalidOperation
from typing import Any

from ...spi.errors import DataError, RuntimeConfigError
from ...spi.rows import quote
from ...spi.schema import DataType, Schema
from .. import temporal
from ..javatext import java_double
from .options import FILE, config_error, java_regex_literal

#: rows a sheet holds (Excel's limit, the header row included)
SHEET_ROWS = 1_048_576
#: characters a sheet name cannot hold (Excel's rule), and its longest length
_SHEET_FORBIDDEN = set("[]:*?/\\")
_SHEET_MAX = 31
#: control characters XML 1.0 cannot hold: written as _xHHHH_ escapes
_ILLEGAL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f]")
_ESCAPED = re.compile(r"_x([0-9A-Fa-f]{4})_")
_OLE2 = b"\xd0\xcf\x11\xe0"  # the header of an .xls (compound document) file
_ZIP = b"PK"
_EOCD = b"PK\x05\x06"  # a zip's end-of-central-directory record: 22 bytes (+ comment) at the end
#: the schema types read from a cell's text (or written as it), by how a cell converts to them
_INTEGRAL = ("tinyint", "smallint", "int", "bigint")
_FRACTIONAL = ("float", "double")
_OUT_BATCH = 4096
#: the integers a double holds exactly
_EXACT_INTEGERS = 2**53


def require_openpyxl() -> None:
    """Fail clearly (on the driver, before any task) when openpyxl is not installed."""
    try:
        import openpyxl  # noqa: F401
    except ImportError:
        raise config_error("file_format_type excel needs openpyxl: install airflow-provider-seatunnel[excel] "
                           "(on the driver and the executors)") from None


def sheet_name_problem(name: str) -> str | None:
    """Why ``name`` cannot name a sheet (Excel's rules), or None."""
    if not name or len(name) > _SHEET_MAX:
        return f"a sheet name has 1 to {_SHEET_MAX} characters; {name!r} has {len(name)}"
    bad = sorted(set(name) & _SHEET_FORBIDDEN)
    if bad:
        return f"a sheet name cannot hold {' '.join(bad)}; found {name!r}"
    if name.startswith("'") or name.endswith("'"):
        return f"a sheet name cannot begin or end with an apostrophe; found {name!r}"
    return None


# ---------------------------------------------------------------------------------------------
# Java's renderings (a cell read into a string field is its value as String.valueOf writes it)
# ---------------------------------------------------------------------------------------------

def java_datetime(value: dt.datetime) -> str:
    """``value`` as Java's ``LocalDateTime.toString`` (seconds and fraction only when set)."""
    text = f"{value.year:04d}-{value.month:02d}-{value.day:02d}T{value.hour:02d}:{value.minute:02d}"
    if value.second or value.microsecond:
        text += f":{value.second:02d}"
    if value.microsecond:
        text += f".{value.microsecond // 1000:03d}" if value.microsecond % 1000 == 0 else f".{value.microsecond:06d}"
    return text


def _as_datetime(value: Any) -> dt.datetime:
    """A date cell's value as a date and time (a time alone, or a duration, counts from Excel's day 0)."""
    if isinstance(value, dt.datetime):
        return value
    if isinstance(value, dt.date):
        return dt.datetime(value.year, value.month, value.day)
    day0 = dt.datetime(1899, 12, 31)
    if isinstance(value, dt.time):
        return dt.datetime.combine(day0.date(), value)
    return day0 + value  # a timedelta ([h]:mm:ss cells)


def _java_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return java_double(float(value))
    return java_datetime(_as_datetime(value))


# ---------------------------------------------------------------------------------------------
# Reading
# ---------------------------------------------------------------------------------------------

def _kind(dtype: DataType) -> str:
    """How a cell converts to a field of ``dtype``."""
    if dtype.name in _INTEGRAL:
        return "int"
    if dtype.name in _FRACTIONAL:
        return "float"
    if dtype.name in ("decimal", "date", "timestamp", "time"):
        return dtype.name
    if dtype.name == "boolean":
        return "bool"
    return "text"  # string, bytes, arrays, maps and rows: the cell's text


class _CellError(ValueError):
    pass


def _number(value: Any) -> float | int:
    """A number cell's value, or a text cell's as Java's ``Double.parseDouble`` reads it (integers kept exact)."""
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise _CellError("a number")
    if not isinstance(value, str):
        return value
    text = value.strip()
    try:
        return int(text) if re.fullmatch(r"[+-]?\d+", text) else float(text)
    except ValueError:
        raise _CellError("a number") from None


def _converted(value: Any, kind: str) -> str | None:
    """A cell's value as the text the field's conversion takes (:func:`.formats.parse_value`)."""
    if kind == "text":
        return _java_text(value)
    if kind == "bool":
        return "true" if _java_text(value).lower() == "true" else "false"
    temporal = isinstance(value, (dt.date, dt.time, dt.timedelta))
    if kind in ("date", "timestamp", "time"):
        if isinstance(value, str):
            return value  # parsed in date_format (or datetime_format, time_format), then the usual patterns
        if not temporal:
            raise _CellError(f"a {kind}")
        moment = _as_datetime(value)
        return {"date": moment.date().isoformat(), "time": moment.time().isoformat(),
                "timestamp": moment.isoformat(sep=" ")}[kind]
    if temporal:
        raise _CellError("a number")
    number = _number(value)
    if kind == "int":
        if isinstance(number, float) and not math.isfinite(number):
            raise _CellError("an integer")
        return str(math.trunc(number))
    if kind == "float":
        return repr(float(number))
    if isinstance(number, float) and not math.isfinite(number):
        raise _CellError("a decimal")
    if isinstance(value, str):
        try:
            exact = Decimal(value.strip())
        except InvalidOperation:
            raise _CellError("a decimal") from None
        if not exact.is_finite():
            raise _CellError("a decimal")
        return format(exact, "f")
    return repr(number) if isinstance(number, float) else str(number)


def _unescaped(text: str) -> str:
    return _ESCAPED.sub(lambda m: chr(int(m.group(1), 16)), text) if "_x" in text else text


def _open_sheet(content: bytes, path: str, sheet: str | None) -> Any:
    import openpyxl

    if content.startswith(_OLE2):
        raise RuntimeConfigError(f"LocalFile: {path} is an .xls (Excel 97-2003) workbook: only .xlsx workbooks "
                                 "can be read here (openpyxl); save it as .xlsx")
    if not content.startswith(_ZIP):
        raise RuntimeConfigError(f"LocalFile: {path} is not an excel (.xlsx) workbook")
    try:
        book = openpyxl.load_workbook(io.BytesIO(content), read_only=True, data_only=True)
    except Exception as e:
        raise RuntimeConfigError(f"LocalFile: cannot open {path} as an excel workbook: {e}") from None
    if sheet is None:
        found = book.worksheets[0]
    elif sheet in book.sheetnames:
        found = book[sheet]
    else:
        raise RuntimeConfigError(f"LocalFile: {path} has no sheet named {sheet!r} (sheets: "
                                 f"{', '.join(book.sheetnames)})")
    found.reset_dimensions()  # read every row, whatever the file's recorded dimension says
    return found


def sheet_rows(content: bytes, path: str, spec: Mapping[str, Any]) -> Iterator[list[str | None]]:
    """The rows of a workbook's sheet as the text of each field (None: null)."""
    sheet = _open_sheet(content, path, spec["sheet"])
    try:
        yield from _rows_of(sheet, path, spec)
    finally:
        sheet.parent.close()


def _rows_of(sheet: Any, path: str, spec: Mapping[str, Any]) -> Iterator[list[str | None]]:
    """The rows of ``sheet`` after row ``skip`` with a value in the schema's columns, converted."""
    from openpyxl.utils import get_column_letter

    kinds: list[str] = spec["kinds"]
    width, skip = len(kinds), int(spec["skip"])
    for cells in sheet.iter_rows(max_col=width):
        values: list[Any] = [None] * width
        row = 0
        for cell in cells:
            column = getattr(cell, "column", None)
            if column is None or cell.value is None or cell.data_type == "e":
                continue  # an empty, blank or error cell: null
            row = cell.row
            values[column - 1] = _unescaped(cell.value) if isinstance(cell.value, str) else cell.value
        if row <= skip:  # no value in the schema's columns (row 0), or a header row
            continue
        out: list[str | None] = []
        for i, (value, kind) in enumerate(zip(values, kinds, strict=True)):
            try:
                out.append(None if value is None else _converted(value, kind))
            except _CellError as e:
                raise DataError(f"LocalFile: {path} sheet {sheet.title!r} cell {get_column_letter(i + 1)}{row}: "
                                f"cannot read {e} from {value!r} (field {spec['names'][i]})") from None
        yield out


def _read_batches(spec: Mapping[str, Any], batches: Iterator[Any]) -> Iterator[Any]:
    """mapInArrow: the rows of each file of a batch of (content, path) rows, as text columns."""
    import pyarrow as pa

    names = [f"_{i}" for i in range(len(spec["kinds"]))]
    schema = pa.schema([pa.field(n, pa.string()) for n in names] + [pa.field(FILE, pa.string())])
    for batch in batches:
        contents, paths = batch.column(0), batch.column(1)
        buffer: list[list[str | None]] = []
        for i in range(batch.num_rows):  # one file's bytes in Python at a time
            content, path = contents[i].as_py(), paths[i].as_py()
            for values in sheet_rows(content, path, spec):
                buffer.append([*values, path])
                if len(buffer) >= _OUT_BATCH:
                    yield pa.RecordBatch.from_arrays([pa.array(c, pa.string()) for c in zip(*buffer, strict=True)],
                                                     schema=schema)
                    buffer = []
        if buffer:
            yield pa.RecordBatch.from_arrays([pa.array(c, pa.string()) for c in zip(*buffer, strict=True)],
                                             schema=schema)


def _field_value(column: Any, dtype: DataType, how: Mapping[str, Any], delimiter: str) -> Any:
    """A field from its text: arrays and maps from JSON, rows split by ``delimiter``, the rest by
    :func:`.formats.parse_value`."""
    from pyspark.sql import functions as F

    from .formats import parse_value

    if dtype.name in ("array", "map"):
        return F.from_json(F.when(F.trim(column) != "", column), dtype.to_spark())
    if dtype.name == "row":
        parts = F.split(column, java_regex_literal(delimiter), -1)
        fields = [_field_value(F.get(parts, i), f.type, how, delimiter).alias(f.name)
                  for i, f in enumerate(dtype.fields)]
        return F.when(column.isNull(), F.lit(None).cast(dtype.to_spark())).otherwise(F.struct(*fields))
    return parse_value(column, dtype, 0, how)


def read_excel(r: Any, schema: Schema, how: Mapping[str, Any]) -> Any:
    """The rows of the files' sheets with the schema's fields (and ``__st_file`` when wanted)."""
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    from .formats import field_delimiter, plain_path

    require_openpyxl()
    o = r.options
    spec = {"kinds": [_kind(f.type) for f in schema.fields], "names": list(schema.names),
            "sheet": o["sheet_name"], "skip": o["skip_header_row_number"]}
    text = T.StructType([T.StructField(f"_{i}", T.StringType()) for i in range(len(schema.fields))]
                        + [T.StructField(FILE, T.StringType())])
    files = r.spark.read.format("binaryFile").load(r.files)
    cells = (files.select(F.col("content"), plain_path(F.col("path"), encoded=False).alias(FILE))
             .mapInArrow(functools.partial(_read_batches, spec), text))
    delimiter = field_delimiter(o, "\u0001")
    return cells.select(*[_field_value(F.col(f"_{i}"), f.type, how, delimiter).alias(f.name)
                          for i, f in enumerate(schema.fields)], *r.carry_file)


# ---------------------------------------------------------------------------------------------
# Writing
# ---------------------------------------------------------------------------------------------

def _escaped(text: str) -> str:
    """``text`` as a cell can hold it: XML's forbidden characters as ``_xHHHH_`` (a literal
    ``_xHHHH_`` kept by escaping its underscore)."""
    if "_x" in text:
        text = _ESCAPED.sub(lambda m: "_x005F" + m.group(0), text)
    return _ILLEGAL.sub(lambda m: f"_x{ord(m.group(0)):04X}_", text)


def _java_bytes(value: bytes) -> str:
    return "[" + ", ".join(str(b - 256 if b > 127 else b) for b in value) + "]"


class _Book:
    """One workbook being written: a write-only sheet, its rows counted."""

    def __init__(self, spec: Mapping[str, Any]):
        import openpyxl

        self.spec = spec
        self.book = openpyxl.Workbook(write_only=True)
        name = spec["sheet"] or f"Sheet{random.randint(-2**31, 2**31 - 1)}"
        self.sheet = self.book.create_sheet(name)
        self.rows = 0
        if spec["header"]:
            self.sheet.append([self._text(_escaped(n)) for n in spec["names"]])

    def append(self, values: tuple[Any, ...]) -> None:
        from openpyxl.cell import WriteOnlyCell

        row: list[Any] = []
        for value, kind in zip(values, self.spec["kinds"], strict=True):
            if value is None:
                row.append(self._null())
            elif kind in ("date", "timestamp", "time"):
                cell = WriteOnlyCell(self.sheet, value=value)
                cell.number_format = self.spec["formats"][kind]
                row.append(cell)
            elif kind == "string":
                row.append(self._text(_escaped(value)))
            elif kind == "number":
                row.append(self._number(value))
            elif kind == "bytes":
                row.append(_java_bytes(value))
            else:
                row.append(value)
        self.sheet.append(row)
        self.rows += 1

    def _number(self, value: Any) -> Any:
        """A number cell holding ``value`` as a double, its text Java's ``Double.toString`` (SeaTunnel's
        writer stores every number so: ``1.0``, ``-2.147483648E9``); openpyxl's own text keeps 16
        significant digits only, which would change a double (or a widened float) needing 17. An integer
        a double cannot hold (beyond 2^53) keeps its digits (SeaTunnel rounds it). NaN and infinities: the
        error cell ``#NUM!``."""
        from openpyxl.cell import WriteOnlyCell

        number = float(value)
        if not math.isfinite(number):
            return "#NUM!"
        cell = WriteOnlyCell(self.sheet, value=number)
        exact = not isinstance(value, int) or abs(value) <= _EXACT_INTEGERS
        cell._value = java_double(number) if exact else str(value)  # written as it is (a str) in the cell's <v>
        return cell

    def _null(self) -> Any:
        """An empty cell, written (SeaTunnel writes one per null field, so a row of nulls is still a row)."""
        from openpyxl.cell import WriteOnlyCell

        cell = WriteOnlyCell(self.sheet, value=None)
        cell._value, cell.data_type = "", "n"  # openpyxl skips a None cell: "" writes <c t="n"/>, read as None
        return cell

    def _text(self, value: str) -> Any:
        """A text cell: openpyxl would make "=..." a formula, "#N/A" an error cell and "" no cell at all
        (an empty string reads back as an empty string, as from SeaTunnel's sheet, not as null)."""
        from openpyxl.cell import WriteOnlyCell
        from openpyxl.cell.cell import ERROR_CODES
        from openpyxl.cell.rich_text import CellRichText

        if value == "":
            cell = WriteOnlyCell(self.sheet, value="")
            cell._value, cell.data_type = CellRichText(), "s"  # written <is/>: an empty inline string
            return cell
        if not value.startswith("=") and value not in ERROR_CODES:
            return value
        cell = WriteOnlyCell(self.sheet, value=value)
        cell.data_type = "s"
        return cell

    def content(self) -> bytes:
        """The workbook's bytes, but for the zip comment's one byte: the writer's line separator."""
        out = io.BytesIO()
        self.book.save(out)
        data = out.getvalue()
        if data[-22:-18] != _EOCD or data[-2:] != b"\x00\x00":
            raise RuntimeError("openpyxl wrote a workbook that does not end with a plain zip directory record")
        return data[:-2] + b"\x01\x00"


def _write_batches(spec: Mapping[str, Any], batches: Iterator[Any]) -> Iterator[Any]:
    """mapInArrow: rows (partition columns first, grouped) to one row per workbook: the partition
    values and the workbook's bytes."""
    import pyarrow as pa

    parts = len(spec["part_names"])
    schema = pa.schema([pa.field(n, pa.string()) for n in spec["part_names"]] + [pa.field("content", pa.binary())])
    limit = int(spec["rows_per_file"])
    book: _Book | None = None
    key: tuple[Any, ...] = ()

    def finished(b: _Book, k: tuple[Any, ...]) -> Any:
        return pa.RecordBatch.from_arrays([*[pa.array([v], pa.string()) for v in k],
                                           pa.array([b.content()], pa.binary())], schema=schema)

    for batch in batches:
        columns = [c.to_pylist() for c in batch.columns]
        for values in zip(*columns, strict=True):
            row_key = tuple(values[:parts])
            if book is not None and (row_key != key or book.rows >= limit):
                yield finished(book, key)
                book = None
            if book is None:
                book, key = _Book(spec), row_key
            book.append(values[parts:])
    if book is not None:
        yield finished(book, key)


def _row_text(column: Any, dtype: Any, opts: Mapping[str, Any]) -> Any:
    """A row as SeaTunnel's excel writer renders it: its fields' text joined by the field delimiter
    (arrays and maps JSON, dates and times in their formats, null as "")."""
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    from .writing import java_string

    def text(value: Any, of: Any) -> Any:
        if isinstance(of, (T.ArrayType, T.MapType)):
            return F.to_json(value)
        if isinstance(of, T.StructType):
            return _row_text(value, of, opts)
        if isinstance(of, T.DateType):
            return F.date_format(value, opts["date"])
        if temporal.is_timestamp(of) or temporal.is_time(of):
            return temporal.temporal_text(value, of, opts)
        return java_string(value, of)

    parts = [F.coalesce(text(column.getField(f.name), f.dataType), F.lit("")) for f in dtype.fields]
    return F.when(column.isNotNull(), F.concat_ws(opts["delimiter"], *parts))


def _prepared(column: Any, dtype: Any, opts: Mapping[str, Any]) -> tuple[Any, str]:
    """A written column as the Python worker takes it, and how it becomes a cell."""
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    if isinstance(dtype, T.TimestampType):
        return column.cast("timestamp_ntz"), "timestamp"  # the session's wall-clock time: Excel has no zones
    if isinstance(dtype, T.TimestampNTZType):
        return column, "timestamp"
    if isinstance(dtype, T.DateType):
        return column, "date"
    if type(dtype).__name__ == "TimeType":
        return temporal.on_day_zero(column), "time"
    if isinstance(dtype, (T.ArrayType, T.MapType)):
        return F.to_json(column), "string"
    if isinstance(dtype, T.StructType):
        return _row_text(column, dtype, opts), "string"
    if isinstance(dtype, T.BinaryType):
        return column, "bytes"
    if isinstance(dtype, (T.FloatType, T.DoubleType, T.DecimalType, T.ByteType, T.ShortType, T.IntegerType,
                          T.LongType)):
        return column, "number"
    if isinstance(dtype, T.BooleanType):
        return column, "plain"
    return column.cast("string"), "string"


def excel_writer(df: Any, layout: Any, opts: Mapping[str, Any]) -> Any:
    """excel: one workbook per write task and partition directory (more past ``batch_size`` rows),
    built in a Python worker and written by Spark's text writer (one row per file)."""
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    require_openpyxl()
    sheet = opts.get("sheet_name")
    if sheet is not None:
        problem = sheet_name_problem(str(sheet))
        if problem:
            raise config_error(f"sheet_name: {problem}")
    prepared = [_prepared(F.col(quote(c)), layout.types[c], opts) for c in layout.written]
    header = bool(opts.get("excel_header", True))
    spec = {"part_names": list(layout.part_cols), "kinds": [k for _, k in prepared], "names": list(layout.written),
            "header": header, "sheet": None if sheet is None else str(sheet),
            "rows_per_file": min(int(opts["batch_size"]), SHEET_ROWS - (1 if header else 0)),
            "formats": {"date": opts["date"], "timestamp": opts["datetime"], "time": opts["time"]}}
    base = df.select(*layout.part_exprs, *[e.alias(f"c{i}") for i, (e, _) in enumerate(prepared)])
    if layout.part_cols:  # each partition directory's rows together: one workbook open at a time
        base = base.sortWithinPartitions(*layout.part_cols)
    files = T.StructType([T.StructField(c, T.StringType()) for c in layout.part_cols]
                         + [T.StructField("content", T.BinaryType())])
    out = base.mapInArrow(functools.partial(_write_batches, spec), files)
    out = out.select(*layout.part_cols, F.col("content").cast("string").alias("value"))
    return out.write.format("text").option("lineSep", "\n")
