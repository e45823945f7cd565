"""Jdbc: databases through a JDBC driver, as source and sink (Spark's JDBC data source).

The data path is Spark's JDBC reader and writer; the driver (a Java class in a jar) is found
by :func:`required_jars` and reaches Spark through ``spark.jars`` (the launcher and the Airflow
hook call :func:`airflow_provider_seatunnel.runtime.jars.pipeline_jars`). Statements of the
driver side (split bounds, save modes, the commit) go through the same driver, in the Spark
driver's JVM: no Python database driver. Dialects: PostgreSQL and MySQL/MariaDB are known
(quoting, upsert, types, split hashing); other databases get ANSI SQL.

**Source** (``read``). ``query``, ``table_path`` or ``table_list`` (each item its own table),
``where_condition`` appended to each. Splits (one Spark partition each), as SeaTunnel's
splitters decide them:

* ``query`` with ``partition_column``: the fixed splitter, ``partition_num`` (default 10)
  splits. Numeric keys: ranges between ``partition_lower_bound`` and ``partition_upper_bound``
  (both set, else the key's min and max are queried); rows outside the bounds and null keys
  are not read, as in SeaTunnel. String keys: one hash-mod bucket per split.
* otherwise the dynamic splitter: the key is ``partition_column``, else the table's
  one-column primary key; ``ceil(rows / split.size)`` splits (numeric keys: even ranges
  between min and max, string keys: hash buckets; null keys go to the first split). No key,
  or a ``query`` without ``partition_column``: one split.

Columns keep the database's names; types are Spark's JDBC mapping (``timestamp`` without time
zone is ``timestamp``, with time zone ``timestamp_tz``; ``time`` columns become ``time``).
A block's own ``parallelism`` repartitions the rows when it differs from the split count.

**Sink** (``prepare``/``commit``/``abort``): exactly-once without XA, keyed by run id,
pipeline, sink and table (engine notes §3.6):

* ``prepare`` checks the commit log; a table this run already committed is skipped (its
  rows still pass once through Spark's ``noop`` sink for the counters). Otherwise the save
  modes run once per run, sink and target (a row in ``seatunnel_savemodes`` — inserted in
  the same transaction as the actions — keeps retries and split clones from repeating them),
  then ONE Spark JDBC write (``batch_size`` rows per batch) replaces the staging table
  ``st_stage_<table>_<hash of run, pipeline, sink, table>``, next to the target. With
  ``primary_keys`` the staging holds the last change per key (UPDATE_BEFORE rows dropped,
  as SeaTunnel's buffered executor does), ordered as the rows arrived.
* ``commit`` runs one database transaction on the driver: if ``seatunnel_commits`` holds the
  (run, pipeline, sink, table) row, nothing; else it moves the staged rows into the target
  (``INSERT … SELECT``; with ``primary_keys`` an upsert — PostgreSQL ``ON CONFLICT … DO
  UPDATE``, MySQL ``ON DUPLICATE KEY UPDATE``, else delete-then-insert — and DELETE rows
  deleted), inserts the commit-log row and commits; then drops the staging table. A kill
  anywhere before the database commit rolls everything back; a retry of the same run
  rewrites the staging and commits once; a retry after the commit finds the log row.
* ``abort`` drops the staging table.

The sink's explicit ``query`` (``INSERT … VALUES (?, ?)`` or ``(:name, …)``) runs set-based: the
``VALUES`` list becomes ``SELECT … FROM <staging>`` (placeholders bound to the staged
columns, positionally or by name), in the same commit transaction.

Errors: data the database refuses (a value too long, a constraint) is a deterministic
:class:`~..runtime.errors.DataError`; a database that cannot be reached a retryable
:class:`~..runtime.errors.PipelineError`; a missing driver, a bad table or statement, an
authentication failure a :class:`~..runtime.errors.RuntimeConfigError`. Passwords never
appear in messages (URLs are masked).

Deviations from SeaTunnel are listed in :data:`DEVIATIONS`.
"""

from __future__ import annotations

import difflib
import glob
import hashlib
import logging
import math
import os
import re
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from typing import TYPE_CHECKING, Any

from ..spi import (
    SINK,
    SOURCE,
    BatchSource,
    Connector,
    Dataset,
    InsertOnly,
    Lineage,
    NeedsJars,
    RetiresCommits,
    RunContext,
    SchemaInference,
    TwoPhaseSink,
    Vertex,
)
from ..spi.options import MISSING, as_bool, as_int, as_list, checked_bool, checked_int, lookup
from ..spi.secrets import mask_credentials

if TYPE_CHECKING:
    from ..spi.options import JobConfig, PluginConfig, Problem
    from ..spi.schema import Schema

log = logging.getLogger("seatunnel.jdbc")

DEVIATIONS = """\
* Exactly-once is always on and needs no XA: rows are staged in a table and moved into the target in
  one transaction with a commit-log row (seatunnel_commits). is_exactly_once, xa_data_source_class_name,
  max_commit_attempts and transaction_timeout_sec are accepted and not needed; auto_commit, max_retries
  and use_copy_statement are accepted and ignored (Spark's writer batches the staging rows).
* The sink's query must be an INSERT ... VALUES (...) statement (any trailing clause, e.g. ON CONFLICT,
  is kept): it runs set-based as INSERT ... SELECT from the staging table. Other statements cannot run.
* With primary_keys, the last change per key over the whole input wins (SeaTunnel keeps the last change
  per key per batch and applies the batches in order: the final table is the same).
* primary_keys are not taken from the upstream table's primary key: set them.
* Save modes run once per run, sink and target table inside the pipeline (a database row keeps retries
  and clones from repeating them); Zeta runs them once per job before any pipeline.
* CREATE_SCHEMA_WHEN_NOT_EXIST creates missing PostgreSQL schemas and databases and MySQL databases;
  column types come from Spark's types (no lengths: strings are text); create_index = false creates the
  table without its primary key.
* The source's dynamic splitter makes ceil(rows / split.size) even splits over the key's range;
  SeaTunnel's sampling and distribution-factor options are accepted and not needed.
* Source time columns are read through Spark as timestamps and converted to time (microseconds).
* Map, row, and (outside PostgreSQL) array values are stored as JSON text (jsonb/json in created tables).
* use_kerberos is not supported; compatible_mode and decimal_type_narrowing are accepted and ignored.
* A source without query/table_path/table_list and a sink without query or generate_sink_sql = true still
  plan (SeaTunnel rejects them), so that existing DAGs parse; validate and run fail on them.
"""

SCHEMA_SAVE_MODES = ("RECREATE_SCHEMA", "CREATE_SCHEMA_WHEN_NOT_EXIST", "ERROR_WHEN_SCHEMA_NOT_EXIST", "IGNORE")
DATA_SAVE_MODES = ("DROP_DATA", "APPEND_DATA", "ERROR_WHEN_DATA_EXISTS", "CUSTOM_PROCESSING")
FIELD_IDE = ("ORIGINAL", "UPPERCASE", "LOWERCASE")

COMMITS_TABLE = "seatunnel_commits"
SAVEMODES_TABLE = "seatunnel_savemodes"
STAGING_PREFIX = "st_stage_"
KIND_COLUMN = "__st_row_kind"
SEQ_COLUMN = "__st_seq"
DRIVER_PATH_ENV = "SEATUNNEL_JDBC_DRIVER_PATH"

DEFAULT_PARTITION_NUM = 10
DEFAULT_SPLIT_SIZE = 8096
DEFAULT_BATCH_SIZE = 1000

#: (family, URL prefixes, driver class prefixes, well-known jar locations) for :func:`required_jars`
KNOWN_DRIVERS = (
    ("postgresql", ("jdbc:postgresql:",), ("org.postgresql.",),
     ("/usr/share/java/postgresql.jar", "/usr/share/java/postgresql-jdbc.jar",
      "/usr/share/java/postgresql-jdbc4.jar")),
    ("mysql", ("jdbc:mysql:",), ("com.mysql.",),
     ("/usr/share/java/mysql-connector-j.jar", "/usr/share/java/mysql-connector-java.jar",
      "/usr/share/java/mysql.jar")),
    ("mariadb", ("jdbc:mariadb:",), ("org.mariadb.",), ("/usr/share/java/mariadb-java-client.jar",)),
    ("sqlite", ("jdbc:sqlite:",), ("org.sqlite.",), ("/usr/share/java/sqlite-jdbc.jar",)),
    ("h2", ("jdbc:h2:",), ("org.h2.",), ("/usr/share/java/h2.jar",)),
    ("hsqldb", ("jdbc:hsqldb:",), ("org.hsqldb.",), ("/usr/share/java/hsqldb.jar",)),
)

# java.sql.Types
_INTEGER_TYPES = {-6, 5, 4, -5}  # TINYINT, SMALLINT, INTEGER, BIGINT
_DECIMAL_TYPES = {2, 3}  # NUMERIC, DECIMAL
_FLOAT_TYPES = {6, 7, 8}  # FLOAT, REAL, DOUBLE
_STRING_TYPES = {1, 12, -1, -15, -9, -16}  # CHAR, VARCHAR, LONGVARCHAR, NCHAR, NVARCHAR, LONGNVARCHAR
_TIME_TYPES = {92, 2013}  # TIME, TIME_WITH_TIMEZONE

#: SQLSTATE classes: transient (retrying may help) and data errors (the same rows fail again)
_TRANSIENT_STATES = ("08", "53", "57", "58", "40", "HY", "55P03", "57014")
_DATA_STATES = ("21", "22", "23", "27", "44")
_CONFIG_STATES = ("28", "3D", "3F", "42", "0A", "2B", "3B", "25", "26", "34")


# ---------------------------------------------------------------------------------------------
# Options
# ---------------------------------------------------------------------------------------------

def _opt(config: Mapping[str, Any], key: str, default: Any = None) -> Any:
    value = lookup(config, key)
    return default if value is MISSING or value is None else value


def _text(config: Mapping[str, Any], key: str) -> str | None:
    value = _opt(config, key)
    if value is None:
        return None
    text = str(value).strip()
    return text or None


def _config_error(message: str) -> Exception:
    from ..spi.errors import RuntimeConfigError

    return RuntimeConfigError(message)


def _flag(config: Mapping[str, Any], key: str, default: bool) -> bool:
    return checked_bool(_opt(config, key), key, default, _config_error)


def _count(config: Mapping[str, Any], key: str, default: int, minimum: int) -> int:
    return checked_int(_opt(config, key), key, default, minimum, _config_error)


def _decimal(value: Any) -> Decimal | None:
    if value is None or isinstance(value, bool):
        return None
    try:
        parsed = Decimal(str(value).strip())
    except InvalidOperation:
        return None
    return parsed if parsed.is_finite() else None


def _mode(config: Mapping[str, Any], key: str, default: str, allowed: tuple[str, ...]) -> str:
    value = str(_opt(config, key, default)).strip().upper()
    if value not in allowed:
        raise _config_error(f"unknown {key} {value!r}: use one of {', '.join(allowed)}")
    return value


# ---------------------------------------------------------------------------------------------
# Secrets: never in messages or logs
# ---------------------------------------------------------------------------------------------



def mask(text: str, password: str | None = None) -> str:
    """``text`` without secrets: URL ``password=``/``user=`` parameters, ``user:password@``
    user info, and the literal ``password`` wherever it appears."""
    text = mask_credentials(text)
    if password:
        text = text.replace(password, "******")
    return text


# ---------------------------------------------------------------------------------------------
# Dialects
# ---------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Dialect:
    """What differs between databases in the SQL this module writes."""

    name: str  # "postgresql", "mysql" or "generic"
    quote: str  # identifier quote character

    def column(self, name: str) -> str:
        """A column name, quoted (names come from Spark schemas: exact)."""
        return f"{self.quote}{name.replace(self.quote, self.quote * 2)}{self.quote}"

    def part(self, name: str) -> str:
        """A table, schema or database name from the config: quoted where SeaTunnel quotes it."""
        return name if self.name == "generic" else self.column(name)

    def table(self, *parts: str | None) -> str:
        return ".".join(self.part(p) for p in parts if p)

    def hash_mod(self, column: str, buckets: int) -> str:
        """SeaTunnel's ``hashModForField``: the split bucket of a string key."""
        if self.name == "postgresql":
            return f"(ABS(HASHTEXT({self.column(column)}::text)) % {buckets})"
        if self.name == "mysql":
            return f"MOD(ABS(CRC32({self.column(column)})), {buckets})"
        return f"ABS(MD5({self.column(column)}) % {buckets})"

    @property
    def json_type(self) -> str | None:
        return {"postgresql": "JSONB", "mysql": "JSON"}.get(self.name)

    def sql_type(self, dtype: Any, key: bool = False) -> str:
        """The column type a created table gets for a Spark type (SeaTunnel's type converters)."""
        from pyspark.sql import types as T

        pg, my = self.name == "postgresql", self.name == "mysql"
        if isinstance(dtype, (T.StringType, T.VarcharType, T.CharType, T.NullType)):
            return "VARCHAR(255)" if key and not pg else ("LONGTEXT" if my else "TEXT")
        if isinstance(dtype, T.BooleanType):
            return "BOOLEAN"
        if isinstance(dtype, T.ByteType):
            return "TINYINT" if my else "SMALLINT"
        if isinstance(dtype, T.ShortType):
            return "SMALLINT"
        if isinstance(dtype, T.IntegerType):
            return "INTEGER"
        if isinstance(dtype, T.LongType):
            return "BIGINT"
        if isinstance(dtype, T.FloatType):
            return "REAL" if pg else "FLOAT"
        if isinstance(dtype, T.DoubleType):
            return "DOUBLE PRECISION" if not my else "DOUBLE"
        if isinstance(dtype, T.DecimalType):
            return f"{'NUMERIC' if pg else 'DECIMAL'}({dtype.precision},{dtype.scale})"
        if isinstance(dtype, T.BinaryType):
            return "BYTEA" if pg else "LONGBLOB" if my else "BLOB"
        if isinstance(dtype, T.DateType):
            return "DATE"
        if isinstance(dtype, T.TimestampNTZType):
            return "TIMESTAMP" if pg else "DATETIME(6)" if my else "TIMESTAMP"
        if isinstance(dtype, T.TimestampType):
            return "TIMESTAMPTZ" if pg else "TIMESTAMP(6)" if my else "TIMESTAMP WITH TIME ZONE"
        if type(dtype).__name__ == "TimeType":
            return "TIME(6)" if my else "TIME"
        if isinstance(dtype, T.ArrayType) and pg and _flat(dtype.elementType):
            return self.sql_type(dtype.elementType) + "[]"
        return self.json_type or "TEXT"  # maps, rows, arrays as JSON


def _flat(dtype: Any) -> bool:
    from pyspark.sql import types as T

    return not isinstance(dtype, (T.ArrayType, T.MapType, T.StructType, T.NullType)) \
        and type(dtype).__name__ != "TimeType"


def dialect_of(url: str) -> Dialect:
    lowered = url.strip().lower()
    if lowered.startswith(("jdbc:postgresql:", "jdbc:pgsql:")):
        return Dialect("postgresql", '"')
    if lowered.startswith(("jdbc:mysql:", "jdbc:mariadb:")):
        return Dialect("mysql", "`")
    return Dialect("generic", '"')


_PG_URL = re.compile(r"^(jdbc:postgresql://[^/?]*)(?:/([^?]*))?(\?.*)?$", re.I)


def url_database(url: str) -> str | None:
    """The database a PostgreSQL or MySQL URL names (its path), if any."""
    m = re.match(r"^jdbc:(?:postgresql|mysql|mariadb)://[^/?]*/([^?;]*)", url.strip(), re.I)
    return m.group(1) or None if m else None


def _url_with_database(url: str, database: str) -> str:
    m = _PG_URL.match(url.strip())
    if not m:
        return url
    return f"{m.group(1)}/{database}{m.group(3) or ''}"


# ---------------------------------------------------------------------------------------------
# Connections
# ---------------------------------------------------------------------------------------------

@dataclass
class Conn:
    """How to reach the database (``password`` stays out of ``repr`` and messages)."""

    url: str
    driver: str
    user: str | None = None
    password: str | None = field(default=None, repr=False)
    properties: dict[str, str] = field(default_factory=dict)
    timeout: int = 30

    @property
    def dialect(self) -> Dialect:
        return dialect_of(self.url)

    @property
    def safe_url(self) -> str:
        return mask(self.url, self.password)

    def connection_properties(self) -> dict[str, str]:
        """What the driver gets: ``properties``, the credentials, and (PostgreSQL) timeouts."""
        props = dict(self.properties)
        if self.user is not None:
            props["user"] = self.user
        if self.password is not None:
            props["password"] = self.password
        if self.dialect.name == "postgresql":
            props.setdefault("connectTimeout", str(self.timeout))
            props.setdefault("loginTimeout", str(self.timeout))
        return props

    def spark_options(self, **extra: Any) -> dict[str, str]:
        return {"url": self.url, "driver": self.driver, **self.connection_properties(),
                **{k: str(v) for k, v in extra.items()}}

    def with_url(self, url: str) -> Conn:
        return Conn(url, self.driver, self.user, self.password, dict(self.properties), self.timeout)


def connection_of(config: Mapping[str, Any]) -> Conn:
    url, driver = _text(config, "url"), _text(config, "driver")
    if not url:
        raise _config_error("url is required")
    if not driver:
        raise _config_error("driver is required (the JDBC driver class, e.g. org.postgresql.Driver)")
    if _flag(config, "use_kerberos", False):
        raise _config_error("use_kerberos is not supported by this package")
    props = _opt(config, "properties", {})
    if not isinstance(props, Mapping):
        raise _config_error("properties must be a map of JDBC connection properties")
    user, password = _opt(config, "user"), _opt(config, "password")
    return Conn(url=url, driver=driver, user=None if user is None else str(user),
                password=None if password is None else str(password),
                properties={str(k): str(v) for k, v in props.items()},
                timeout=_count(config, "connection_check_timeout_sec", 30, 1))


def _family(conn_url: str, driver: str) -> tuple | None:
    url, driver = conn_url.strip().lower(), driver.strip()
    for entry in KNOWN_DRIVERS:
        if driver.startswith(entry[2]) or url.startswith(entry[1]):
            return entry
    return None


def required_jars(config: Mapping[str, Any], env: Mapping[str, Any] | None = None) -> list[str]:
    """The jars holding the JDBC driver of a Jdbc block, to put on Spark's classpath.

    In order: ``$SEATUNNEL_JDBC_DRIVER_PATH`` (jar files or directories of jars, separated by
    ``:`` or ``,``) when set; else nothing when the job's ``env.spark.jars`` already names a jar
    of the driver's family (``postgresql``, ``mysql``...); else the first existing well-known
    system location for the driver class or URL scheme (Debian's ``/usr/share/java/postgresql.jar``...).
    """
    explicit = os.environ.get(DRIVER_PATH_ENV, "").strip()
    if explicit:
        found: list[str] = []
        for item in re.split(r"[,:]", explicit):
            item = os.path.abspath(os.path.expanduser(item.strip())) if item.strip() else ""
            if os.path.isdir(item):
                found.extend(sorted(glob.glob(os.path.join(item, "*.jar"))))
            elif item:
                found.append(item)
        return found
    url, driver = str(_opt(config, "url", "")), str(_opt(config, "driver", ""))
    family = _family(url, driver)
    if family is None:
        return []
    configured = [os.path.basename(j).lower() for j in str((env or {}).get("spark.jars", "")).split(",") if j.strip()]
    if any(family[0] in name for name in configured):
        return []
    return next(([path] for path in family[3] if os.path.isfile(path)), [])


def ensure_driver(spark: Any, conn: Conn, env: Mapping[str, Any] | None = None,
                  config: Mapping[str, Any] | None = None) -> None:
    """Make the driver class loadable in this Spark application: when it is not on the
    classpath (a session started without the jar), add :func:`required_jars` to the driver's
    class loader and ship them to the executors."""
    from py4j.protocol import Py4JError

    jvm = spark._jvm
    loader = jvm.java.lang.Thread.currentThread().getContextClassLoader()
    try:
        jvm.java.lang.Class.forName(conn.driver, False, loader)
        return
    except Py4JError:
        pass
    jars = required_jars(config if config is not None else {"url": conn.url, "driver": conn.driver}, env)
    if not jars:
        family = _family(conn.url, conn.driver)
        where = f" (looked in {', '.join(family[3])})" if family else ""
        raise _config_error(f"the JDBC driver class {conn.driver} is not on Spark's classpath and no jar was "
                            f"found{where}: add its jar to env spark.jars or set {DRIVER_PATH_ENV}")
    for jar in jars:
        if not os.path.isfile(jar):
            raise _config_error(f"the JDBC driver jar {jar} does not exist")
        try:
            loader.addURL(jvm.java.io.File(jar).toURI().toURL())
            spark._jsc.sc().addJar(jar)
        except Py4JError:
            spark.sql(f"ADD JAR '{jar}'")
        log.info("Jdbc: added the driver jar %s to Spark", jar)
    try:
        jvm.java.lang.Class.forName(conn.driver, False, jvm.java.lang.Thread.currentThread().getContextClassLoader())
    except Py4JError:
        raise _config_error(f"the JDBC driver class {conn.driver} is not in {', '.join(jars)}: add the jar that "
                            f"holds it to env spark.jars or set {DRIVER_PATH_ENV}") from None


@contextmanager
def connect(spark: Any, conn: Conn, autocommit: bool = True) -> Iterator[Any]:
    """A ``java.sql.Connection`` from the Spark driver's JVM (the driver class instantiated
    through the context class loader, so that jars added at run time work too)."""
    from py4j.protocol import Py4JError

    jvm = spark._jvm
    gateway = spark.sparkContext._gateway
    try:
        loader = jvm.java.lang.Thread.currentThread().getContextClassLoader()
        cls = jvm.java.lang.Class.forName(conn.driver, True, loader)
        driver = cls.getDeclaredConstructor(gateway.new_array(jvm.java.lang.Class, 0)).newInstance(
            gateway.new_array(jvm.java.lang.Object, 0))
        props = jvm.java.util.Properties()
        for key, value in conn.connection_properties().items():
            props.setProperty(key, value)
        connection = driver.connect(conn.url, props)
    except Py4JError as e:
        raise db_error(e, f"cannot connect to {conn.safe_url}", conn) from None
    if connection is None:
        raise _config_error(f"the driver {conn.driver} does not accept the url {conn.safe_url}")
    try:
        connection.setAutoCommit(autocommit)
        yield connection
    finally:
        with suppress(Py4JError):
            connection.close()


def _execute(connection: Any, sql: str, params: tuple = ()) -> int:
    """Run one statement; its update count (0 for DDL)."""
    statement = connection.prepareStatement(sql)
    try:
        for i, value in enumerate(params, 1):
            _bind(statement, i, value)
        statement.execute()
        return max(int(statement.getUpdateCount()), 0)
    finally:
        statement.close()


def _bind(statement: Any, index: int, value: Any) -> None:
    if value is None:
        statement.setNull(index, 12)
    elif isinstance(value, bool):
        statement.setBoolean(index, value)
    elif isinstance(value, int):
        statement.setLong(index, value)
    else:
        statement.setString(index, str(value))


def _query(connection: Any, sql: str, params: tuple = (), limit: int = 0) -> list[list[str | None]]:
    """The rows of a small query, values as strings."""
    statement = connection.prepareStatement(sql)
    try:
        for i, value in enumerate(params, 1):
            _bind(statement, i, value)
        if limit:
            statement.setMaxRows(limit)
        result = statement.executeQuery()
        width = result.getMetaData().getColumnCount()
        rows = []
        while result.next():
            rows.append([result.getString(i) for i in range(1, width + 1)])
        result.close()
        return rows
    finally:
        statement.close()


def _columns_of(connection: Any, sql: str) -> list[tuple[str, int, int]]:
    """(name, java.sql.Types code, scale) of each column ``sql`` returns (no row is read)."""
    statement = connection.prepareStatement(f"SELECT * FROM ({sql}) st_jdbc_meta WHERE 1 = 0")
    try:
        meta = statement.executeQuery().getMetaData()
        return [(meta.getColumnLabel(i), int(meta.getColumnType(i)), int(meta.getScale(i)))
                for i in range(1, meta.getColumnCount() + 1)]
    finally:
        statement.close()


# ---------------------------------------------------------------------------------------------
# Errors
# ---------------------------------------------------------------------------------------------

def _java_chain(error: BaseException) -> list[Any]:
    """The Java throwables behind a Py4J or PySpark error: causes and SQL next-exceptions."""
    from py4j.protocol import Py4JError

    start = getattr(error, "java_exception", None) or getattr(error, "_origin", None)
    out: list[Any] = []
    todo = [start] if start is not None else []
    try:
        while todo and len(out) < 30:
            current = todo.pop(0)
            if current is None or any(current.equals(seen) for seen in out):
                continue
            out.append(current)
            todo.append(current.getCause())
            with suppress(Py4JError):  # java.sql.SQLException only
                todo.append(current.getNextException())
    except Py4JError:
        pass
    return out


def _sql_state(throwable: Any) -> str | None:
    """The SQLSTATE of a ``java.sql.SQLException`` (None for other throwables)."""
    from py4j.protocol import Py4JError

    try:
        return throwable.getSQLState()
    except Py4JError:
        return None


def db_error(error: BaseException, what: str, conn: Conn | None = None) -> Exception:
    """A PipelineError for a failed database operation, classified by SQLSTATE: data errors
    (22, 23) deterministic, unreachable databases (08, 53, 57…) retryable, bad statements,
    objects and credentials (42, 3D, 28…) RuntimeConfigError. The text never holds a password."""
    from py4j.protocol import Py4JError

    from ..spi.errors import PipelineError

    if isinstance(error, PipelineError):
        return error
    password = conn.password if conn else None
    chain = _java_chain(error)
    state, cause, names = None, None, []
    try:
        for throwable in chain:
            names.append(throwable.getClass().getName())
            found = _sql_state(throwable)
            if found:
                state, cause = found, throwable.getMessage()
    except Py4JError:
        pass
    if cause is None:
        text = str(error).strip()
        lines = [ln for ln in text.splitlines() if ln.strip() and not ln.lstrip().startswith("at ")]
        cause = next((ln for ln in lines if "Exception: " in ln or ln.startswith(": ")),
                     lines[0] if lines else type(error).__name__)
        cause = cause.split("Exception: ", 1)[-1].lstrip(": ")
    cause = mask(" ".join(str(cause).split()), password)[:600]
    message = f"{what}: {cause}" + (f" (SQLSTATE {state})" if state else "")
    cls = _classify(state, names, str(error))
    wrapped = cls(message)
    wrapped.sql_state = state  # type: ignore[attr-defined]
    return wrapped


def _classify(state: str | None, names: list[str], text: str) -> type:
    from ..spi.errors import DataError, PipelineError, RuntimeConfigError

    if state and state.startswith(_DATA_STATES):
        return DataError
    if state and state.startswith(_CONFIG_STATES):
        return RuntimeConfigError
    if state and state.startswith(_TRANSIENT_STATES):
        return PipelineError
    if any(n.endswith(("ConnectException", "UnknownHostException", "SocketTimeoutException", "NoRouteToHostException"))
           for n in names):
        return PipelineError
    if "java.lang.ClassNotFoundException" in names:
        return RuntimeConfigError
    from ..spi.errors import DETERMINISTIC_SPARK_ERRORS

    if any(code in text for code in (*DETERMINISTIC_SPARK_ERRORS, "UNSUPPORTED_DATA_TYPE")):
        return DataError
    return PipelineError


def _reraise(error: BaseException, what: str, conn: Conn | None) -> Exception:
    """``db_error`` for raising ``from`` the original unless its text could hold a secret."""
    wrapped = db_error(error, what, conn)
    raw = str(error)
    wrapped.__cause__ = None if conn is None or mask(raw, conn.password) != raw else error
    wrapped.__suppress_context__ = True
    return wrapped


# ---------------------------------------------------------------------------------------------
# Table placeholders (§9), as the LocalFile sink expands them
# ---------------------------------------------------------------------------------------------

def _table_config(config: Mapping[str, Any], table_key: str, field_names: list[str] | None = None) -> dict:
    from .localfile import expand_table_placeholders

    out = {k: expand_table_placeholders(v, table_key, field_names) if isinstance(v, str) else v
           for k, v in config.items()}
    keys = as_list(out.get("primary_keys"))
    if len(keys) == 1 and str(keys[0]).strip() == "${field_names}" and field_names is not None:
        out["primary_keys"] = list(field_names)
    return out


# ---------------------------------------------------------------------------------------------
# Source
# ---------------------------------------------------------------------------------------------

@dataclass
class _SourceTable:
    table_id: str
    query: str | None
    table_path: str | None
    partition_column: str | None
    partition_num: int | None
    lower: Decimal | None
    upper: Decimal | None


def _source_tables(config: Mapping[str, Any], output: str | None, conn: Conn) -> list[_SourceTable]:
    items = _opt(config, "table_list")
    if items is not None:
        if _text(config, "table_path") or _text(config, "query"):
            raise _config_error("Please configure either table_list or table_path/query, not both")
        if not isinstance(items, list) or not items or not all(isinstance(i, Mapping) for i in items):
            raise _config_error("table_list must be a non-empty list of {table_path, query, partition_*} blocks")
    else:
        items = [config]
    tables: list[_SourceTable] = []
    for i, item in enumerate(items):
        query, path = _text(item, "query"), _text(item, "table_path")
        if not query and not path:
            raise _config_error("one of query, table_path or table_list is required")
        if path:
            table_id = _table_id(path, conn)
        elif len(items) > 1:
            table_id = f"{output or 'default'}_{i}"
        else:
            table_id = output or "default"
        num = _opt(item, "partition_num")
        num_value = None
        if num is not None:
            num_value = as_int(num)
            if num_value is None or num_value < 1:
                raise _config_error(f"partition_num must be an integer >= 1, found {num!r}")
        bounds = []
        for key in ("partition_lower_bound", "partition_upper_bound"):
            raw = _opt(item, key)
            value = _decimal(raw)
            if raw is not None and value is None:
                raise _config_error(f"{key} must be a number, found {raw!r}")
            bounds.append(value)
        tables.append(_SourceTable(table_id, query, path, _text(item, "partition_column"), num_value, *bounds))
    ids = [t.table_id for t in tables]
    if len(set(ids)) != len(ids):
        twice = sorted({i for i in ids if ids.count(i) > 1})
        raise _config_error(f"table_list names a table twice: {', '.join(twice)}")
    return tables


def _table_id(path: str, conn: Conn) -> str:
    """The table id (``database.schema.table``) of a ``table_path``, the URL's database filling in."""
    parts = path.split(".")
    database = url_database(conn.url)
    if conn.dialect.name == "postgresql" and len(parts) < 3 and database:
        return ".".join([database, *parts])
    if conn.dialect.name == "mysql" and len(parts) == 1 and database:
        return f"{database}.{path}"
    return path


_ASSET_SCHEMES = {"postgresql": "postgres", "mysql": "mysql", "sqlserver": "mssql", "oracle": "oracle"}


def assets(options: Mapping[str, Any]) -> list[str]:
    """Airflow asset URIs of the tables read or written, ``<scheme>://host:port/database/schema/table``
    (the scheme as Airflow's providers name it: ``postgres``, ``mysql``...). A query without a
    table, or a table named by placeholders, has none."""
    url = _text(options, "url") or ""
    found = re.match(r"jdbc:([a-z0-9]+):(?://)?([^/;?]*)/?([^;?]*)", url)
    if not found:
        return []
    kind, authority, database = found.groups()
    authority = authority.rsplit("@", 1)[-1]  # never credentials
    scheme = _ASSET_SCHEMES.get(kind, kind)
    items = lookup(options, "table_list")
    paths = [_text(i, "table_path") for i in items if isinstance(i, Mapping)] if isinstance(items, list) else []
    paths.append(_text(options, "table_path"))
    table, db = _text(options, "table"), _text(options, "database")
    if table:
        paths.append(f"{db}.{table}" if db and "." not in table else table)
    out = []
    for path in filter(None, paths):
        if "${" in path or "{{" in path:
            continue
        parts = path.split(".")
        if kind == "postgresql" and len(parts) < 3:
            parts = [database, *(["public"] if len(parts) == 1 else []), *parts]
        elif kind != "postgresql" and len(parts) == 1 and database:
            parts = [database, *parts]
        out.append(f"{scheme}://{authority}/{'/'.join(p for p in parts if p)}")
    return sorted(dict.fromkeys(out))


def _table_sql(path: str, dialect: Dialect) -> str:
    parts = path.split(".")
    if dialect.name == "postgresql" and len(parts) == 3:
        parts = parts[1:]  # a connection reads one database: schema.table
    if dialect.name == "mysql" and len(parts) == 3:
        parts = [parts[0], parts[2]]
    return dialect.table(*parts)


def _ranges(low: Decimal, high: Decimal, count: int, integral: bool) -> list[tuple[Decimal, Decimal]]:
    """``count`` consecutive ranges covering [low, high] (SeaTunnel's numeric-between splits)."""
    if integral:
        low, high = low.to_integral_value(rounding="ROUND_FLOOR"), high.to_integral_value(rounding="ROUND_CEILING")
        span = high - low + 1
        count = max(1, min(count, int(span)))
        size, extra = divmod(int(span), count)
        out, start = [], low
        for i in range(count):
            end = start + size - 1 + (1 if i < extra else 0)
            out.append((start, end))
            start = end + 1
        return out
    count = max(1, count)
    step = (high - low) / count
    edges = [low + step * i for i in range(count)] + [high]
    return [(edges[i], edges[i + 1]) for i in range(count)]


def _predicates(dialect: Dialect, column: str, kind: str, count: int, low: Decimal | None, high: Decimal | None,
                integral: bool, with_nulls: bool) -> list[str]:
    """One WHERE condition per split."""
    col = dialect.column(column)
    if kind == "string":
        out = [f"{dialect.hash_mod(column, count)} = {i}" for i in range(count)]
    else:
        assert low is not None and high is not None
        ranges = _ranges(low, high, count, integral)
        out = []
        for i, (start, end) in enumerate(ranges):
            last = i == len(ranges) - 1
            if integral:
                out.append(f"{col} >= {start} AND {col} <= {end}")
            else:
                out.append(f"{col} >= {start} AND {col} {'<=' if last else '<'} {end}")
    if with_nulls and out:
        out[0] = f"({out[0]}) OR {col} IS NULL"
    return out


def _key_kind(type_code: int, scale: int) -> tuple[str | None, bool]:
    """('numeric'|'string'|None, integral) of a key column."""
    if type_code in _INTEGER_TYPES:
        return "numeric", True
    if type_code in _DECIMAL_TYPES:
        return "numeric", scale <= 0
    if type_code in _FLOAT_TYPES:
        return "numeric", False
    if type_code in _STRING_TYPES:
        return "string", False
    return None, False


def _primary_key(connection: Any, path: str, dialect: Dialect) -> str | None:
    """The table's primary key column when it has exactly one."""
    parts = path.split(".")
    table = parts[-1]
    schema = parts[-2] if len(parts) >= 2 and dialect.name != "mysql" else None
    catalog = parts[0] if dialect.name == "mysql" and len(parts) >= 2 else None
    result = connection.getMetaData().getPrimaryKeys(catalog, schema, table)
    names = []
    while result.next():
        names.append(result.getString("COLUMN_NAME"))
    result.close()
    return names[0] if len(names) == 1 else None


def _splits(connection: Any, conn: Conn, spec: _SourceTable, base: str, config: Mapping[str, Any],
            columns: list[tuple[str, int, int]]) -> list[str] | None:
    """The WHERE condition of each split (None: one split reading everything)."""
    dialect = conn.dialect
    fixed = bool(spec.query and spec.partition_column)
    key = spec.partition_column
    if key is None and spec.table_path and not spec.query:
        key = _primary_key(connection, spec.table_path, dialect)
        if key is None:
            return None
    if key is None:
        return None
    by_name = {c[0].lower(): c for c in columns}
    column = by_name.get(key.lower())
    if column is None:
        close = difflib.get_close_matches(key.lower(), list(by_name), n=1)
        raise _config_error(f"partition_column '{key}' is not a column of the source"
                            + (f"; did you mean '{by_name[close[0]][0]}'?" if close else ""))
    name, code, scale = column
    kind, integral = _key_kind(code, scale)
    if kind is None:
        if fixed:
            raise _config_error(f"partition_column '{name}' must be a numeric or string column")
        return None
    if fixed and code in _DECIMAL_TYPES and scale > 0:
        raise _config_error(f"partition_column '{name}' is a decimal with {scale} decimal places: the split key "
                            "must be an integer or a string")
    col = dialect.column(name)
    if fixed:
        count = spec.partition_num or DEFAULT_PARTITION_NUM
        if kind == "string":
            return _predicates(dialect, name, kind, count, None, None, False, False)
        low, high = spec.lower, spec.upper
        if low is None or high is None:
            (low_text, high_text), = _query(connection, f"SELECT MIN({col}), MAX({col}) FROM ({base}) st_jdbc_bounds")
            low, high = _decimal(low_text), _decimal(high_text)
            if low is None or high is None:
                return None
        if low > high:
            raise _config_error(f"partition_lower_bound {low} is greater than partition_upper_bound {high}")
        return _predicates(dialect, name, kind, count, low, high, integral, False)
    split_size = _count(config, "split.size", DEFAULT_SPLIT_SIZE, 1)
    (rows_text, low_text, high_text), = _query(
        connection, f"SELECT COUNT(*), MIN({col}), MAX({col}) FROM ({base}) st_jdbc_bounds")
    count = max(1, math.ceil(int(rows_text or 0) / split_size))
    if count == 1:
        return None
    if kind == "string":
        return _predicates(dialect, name, kind, count, None, None, False, True)
    low, high = _decimal(low_text), _decimal(high_text)
    if low is None or high is None:
        return None
    return _predicates(dialect, name, kind, count, low, high, integral, True)


def _read_table(ctx: Any, conn: Conn, spec: _SourceTable, config: Mapping[str, Any]) -> tuple[Any, int]:
    """One table's DataFrame (with the row kind) and its number of splits (= partitions)."""
    from pyspark.sql import functions as F

    from ..spi.rows import with_kind

    dialect = conn.dialect
    if spec.query:
        base = spec.query.strip().rstrip(";").strip()
    else:
        base = f"SELECT * FROM {_table_sql(str(spec.table_path), dialect)}"
    where = _text(config, "where_condition")
    if where:
        if not where.lower().startswith("where"):
            raise _config_error(f"where_condition must start with 'where', found {where!r}")
        base = f"SELECT * FROM ({base}) st_jdbc_where {where}"
    what = f"cannot read {spec.table_path or 'the query'} from {conn.safe_url}"
    try:
        with connect(ctx.spark, conn) as connection:
            columns = _columns_of(connection, base)
            predicates = _splits(connection, conn, spec, base, config, columns)
    except Exception as e:
        raise _reraise(e, what, conn) from None
    fetch = _count(config, "fetch_size", 0, 0)
    options = conn.spark_options(preferTimestampNTZ="true", **({"fetchsize": fetch} if fetch else {}))
    table = f"({base}) st_jdbc_src"
    try:
        if predicates:
            props = {k: v for k, v in options.items() if k != "url"}
            df = ctx.spark.read.jdbc(conn.url, table, predicates=predicates, properties=props)
        else:
            df = ctx.spark.read.format("jdbc").options(**options, dbtable=table).load()
    except Exception as e:
        raise _reraise(e, what, conn) from None
    times = {name for name, code, _ in columns if code in _TIME_TYPES}
    if times:
        df = df.select(*[F.date_format(F.col(dialect_col(c)), "HH:mm:ss.SSSSSS").cast("time").alias(c)
                         if c in times else F.col(dialect_col(c)) for c in df.columns])
    splits = len(predicates) if predicates else 1
    log.info("Jdbc: reading %s from %s in %d split(s)", spec.table_path or "a query", conn.safe_url, splits)
    return with_kind(df), splits


def dialect_col(name: str) -> str:
    """A Spark column reference to ``name`` (backquoted)."""
    return "`" + name.replace("`", "``") + "`"


def read(ctx: Any, vertex: Any) -> dict[str, Any]:
    """``query``, ``table_path`` or each ``table_list`` item as ``{table id: DataFrame}``, split
    as SeaTunnel's splitters do (one Spark partition per split)."""
    config = vertex.config
    conn = connection_of(config)
    ensure_driver(ctx.spark, conn, ctx.plan.env, config)
    own = as_int(lookup(config, "parallelism"))
    out: dict[str, Any] = {}
    for spec in _source_tables(config, vertex.output, conn):
        df, splits = _read_table(ctx, conn, spec, config)
        out[spec.table_id] = df.repartition(own) if own and own != splits else df
    return out


# ---------------------------------------------------------------------------------------------
# Sink: the target, its bookkeeping tables, save modes
# ---------------------------------------------------------------------------------------------

@dataclass
class _Target:
    """Where a sink writes one table: a table (generated SQL) or an explicit ``query``."""

    conn: Conn
    database: str | None
    schema: str | None
    table: str | None  # None: query mode
    query: str | None
    primary_keys: list[str]
    field_ide: str
    base_conn: Conn | None = None  # the configured URL, when ``database`` switched a PostgreSQL URL

    @property
    def dialect(self) -> Dialect:
        return self.conn.dialect

    @property
    def home(self) -> tuple[str | None, ...]:
        """Where staging and bookkeeping tables live: the target's schema (MySQL: database)."""
        return (self.database,) if self.dialect.name == "mysql" else (self.schema,)

    def qualified(self, name: str) -> str:
        return self.dialect.table(*self.home, name)

    @property
    def ident(self) -> str:
        assert self.table is not None
        return self.qualified(self.ide(self.table))

    @property
    def label(self) -> str:
        if self.table is None:
            return "the sink query"
        return ".".join(p for p in (*self.home, self.table) if p)

    def ide(self, name: str) -> str:
        """``field_ide``: names of the created table and its columns as written, upper or lower case."""
        if self.field_ide == "UPPERCASE":
            return name.upper()
        return name.lower() if self.field_ide == "LOWERCASE" else name


def _sink_config(config: Mapping[str, Any], table_key: str, field_names: list[str] | None) -> dict:
    """The sink's options for one table: ``table``/``database`` default to the table's own
    names, then every top-level string has its table placeholders expanded."""
    raw = dict(config)
    if lookup(raw, "table") is MISSING:
        raw["table"] = "${table_name}"
    if lookup(raw, "database") is MISSING:
        raw["database"] = "${database_name}"
    return _table_config(raw, table_key, field_names)


def _sink_target(config: Mapping[str, Any]) -> _Target:
    conn = connection_of(config)
    dialect = conn.dialect
    query = _text(config, "query")
    if not query and not _flag(config, "generate_sink_sql", False):
        raise _config_error("query is required when generate_sink_sql is false (set generate_sink_sql = true to "
                            "write the table named by database and table)")
    keys = [str(k).strip() for k in as_list(_opt(config, "primary_keys")) if str(k).strip()]
    ide = _mode(config, "field_ide", "ORIGINAL", FIELD_IDE)
    if query:
        return _Target(conn, None, None, None, query, keys, ide)
    table, database = _text(config, "table"), _text(config, "database")
    if not table:
        raise _config_error("table is required (the upstream table has no name to default to)")
    parts = table.split(".")
    schema = None
    if dialect.name == "mysql":
        database = parts[0] if len(parts) >= 2 else database
    elif dialect.name == "postgresql":
        if len(parts) >= 3:
            database = parts[0]
        schema = parts[-2] if len(parts) >= 2 else None
    else:
        schema = ".".join(parts[:-1]) or None
    base_conn = None
    if dialect.name == "postgresql" and database and database != url_database(conn.url):
        base_conn, conn = conn, conn.with_url(_url_with_database(conn.url, database))
    return _Target(conn, database, schema, parts[-1], None, keys, ide, base_conn)


def _table_exists(connection: Any, target: _Target, name: str) -> bool:
    meta = connection.getMetaData()
    if target.dialect.name == "mysql":
        catalog, schema = target.database or connection.getCatalog(), None
    else:
        catalog, schema = None, target.schema or connection.getSchema()
    candidates = [name] if target.dialect.name != "generic" else list(dict.fromkeys([name, name.upper(), name.lower()]))
    for candidate in candidates:
        result = meta.getTables(catalog, schema, candidate, None)
        try:
            while result.next():
                if result.getString("TABLE_NAME") == candidate and (
                        schema is None or result.getString("TABLE_SCHEM") in (schema, None)):
                    return True
        finally:
            result.close()
    return False


_BOOKKEEPING = {
    COMMITS_TABLE: "(commit_id VARCHAR(64) NOT NULL PRIMARY KEY, run_id VARCHAR(512) NOT NULL, "
                   "pipeline VARCHAR(512) NOT NULL, sink VARCHAR(255) NOT NULL, table_name VARCHAR(1024) NOT NULL, "
                   "attempt INTEGER, rows_moved BIGINT, committed_at TIMESTAMP)",
    SAVEMODES_TABLE: "(savemode_id VARCHAR(64) NOT NULL PRIMARY KEY, run_id VARCHAR(512) NOT NULL, "
                     "sink VARCHAR(255) NOT NULL, table_name VARCHAR(1024) NOT NULL, actions VARCHAR(4000), "
                     "done_at TIMESTAMP)",
}


def _ensure_bookkeeping(connection: Any, target: _Target) -> None:
    """Create the commit log and the save-mode markers next to the target when missing."""
    from py4j.protocol import Py4JJavaError

    for name, columns in _BOOKKEEPING.items():
        if _table_exists(connection, target, name):
            continue
        try:
            _execute(connection, f"CREATE TABLE {target.qualified(name)} {columns}")
        except Py4JJavaError:
            if not _table_exists(connection, target, name):  # else a concurrent pipeline created it
                raise


def _digest(*parts: Any) -> str:
    return hashlib.sha256("\x00".join(str(p) for p in parts).encode()).hexdigest()


def _staging_name(ctx: Any, vertex: Any, table_key: str) -> str:
    """The staging table of (run, pipeline, sink, table): the same for every attempt, so that a
    retry replaces what a failed attempt left; lower case, at most 51 characters."""
    readable = re.sub(r"[^a-z0-9]+", "_", table_key.split(".")[-1].lower()).strip("_")[:24]
    digest = _digest(ctx.run_id, ctx.pipeline_key, vertex.ref, table_key)[:16]
    return f"{STAGING_PREFIX}{readable + '_' if readable else ''}{digest}"


def _is_committed(connection: Any, target: _Target, commit_id: str) -> bool:
    return bool(_query(connection, f"SELECT 1 FROM {target.qualified(COMMITS_TABLE)} WHERE commit_id = ?",
                       (commit_id,)))


def _drop_quietly(connection: Any, ident: str) -> None:
    from py4j.protocol import Py4JError

    with suppress(Py4JError):  # it may not exist (or be gone already)
        _execute(connection, f"DROP TABLE {ident}")


def _create_table(connection: Any, target: _Target, schema: Any, config: Mapping[str, Any]) -> str:
    """CREATE TABLE for the target from the data's Spark schema (primary key from primary_keys)."""
    from ..spi.rows import HIDDEN

    dialect = target.dialect
    if schema is None:
        raise _config_error(f"cannot create {target.label}: its columns are not known")
    if dialect.name == "postgresql" and target.schema:
        _execute(connection, f"CREATE SCHEMA IF NOT EXISTS {dialect.part(target.schema)}")
    if dialect.name == "mysql" and target.database:
        _execute(connection, f"CREATE DATABASE IF NOT EXISTS {dialect.part(target.database)}")
    fields = [f for f in schema.fields if f.name not in HIDDEN]
    keys = _resolve_keys(target.primary_keys, [f.name for f in fields])
    columns = [f"{dialect.column(target.ide(f.name))} {dialect.sql_type(f.dataType, key=f.name in keys)}"
               + (" NOT NULL" if f.name in keys else "") for f in fields]
    if keys and _flag(config, "create_index", True):
        columns.append(f"PRIMARY KEY ({', '.join(dialect.column(target.ide(k)) for k in keys)})")
    _execute(connection, f"CREATE TABLE {target.ident} ({', '.join(columns)})")
    return f"created {target.label}"


def _apply_save_modes(connection: Any, target: _Target, config: Mapping[str, Any], schema: Any) -> list[str]:
    """``schema_save_mode`` then ``data_save_mode`` on the target table; what was done."""
    schema_mode = _mode(config, "schema_save_mode", "CREATE_SCHEMA_WHEN_NOT_EXIST", SCHEMA_SAVE_MODES)
    data_mode = _mode(config, "data_save_mode", "APPEND_DATA", DATA_SAVE_MODES)
    assert target.table is not None
    exists = _table_exists(connection, target, target.ide(target.table))
    done: list[str] = []
    if schema_mode == "RECREATE_SCHEMA":
        if exists:
            _execute(connection, f"DROP TABLE {target.ident}")
            done.append(f"dropped {target.label}")
        done.append(_create_table(connection, target, schema, config))
        exists = True
    elif schema_mode == "CREATE_SCHEMA_WHEN_NOT_EXIST" and not exists:
        done.append(_create_table(connection, target, schema, config))
        exists = True
    elif schema_mode == "ERROR_WHEN_SCHEMA_NOT_EXIST" and not exists:
        raise _config_error(f"The sink table not exist: {target.label} "
                            "(schema_save_mode = ERROR_WHEN_SCHEMA_NOT_EXIST)")
    if data_mode == "DROP_DATA" and exists:
        statement = "DELETE FROM" if target.dialect.name == "generic" else "TRUNCATE TABLE"
        _execute(connection, f"{statement} {target.ident}")
        done.append(f"truncated {target.label}")
    elif data_mode == "ERROR_WHEN_DATA_EXISTS" and exists:
        if _query(connection, f"SELECT 1 FROM {target.ident}", limit=1):
            raise _config_error(f"The target data source already has data: {target.label} "
                                "(data_save_mode = ERROR_WHEN_DATA_EXISTS)")
    elif data_mode == "CUSTOM_PROCESSING":
        custom = _text(config, "custom_sql")
        if not custom:
            raise _config_error("custom_sql is required when data_save_mode is CUSTOM_PROCESSING")
        _execute(connection, custom)
        done.append("ran custom_sql")
    return done


def handle_save_mode(spark: Any, vertex_config: Mapping[str, Any], table_key: str, schema: Any) -> list[str]:
    """Apply the save modes of a Jdbc sink block to one upstream table (``schema``: its Spark
    StructType, used to create the table). No once-per-run marker: the caller decides when."""
    config = _sink_config(vertex_config, table_key, [f.name for f in schema.fields] if schema is not None else None)
    target = _sink_target(config)
    if target.table is None:
        return []  # SeaTunnel runs no save mode for a sink with a query
    with connect(spark, target.conn, autocommit=False) as connection:
        try:
            done = _apply_save_modes(connection, target, config, schema)
            connection.commit()
        except BaseException:
            _rollback_quietly(connection)
            raise
    return done


def _rollback_quietly(connection: Any) -> None:
    from py4j.protocol import Py4JError

    with suppress(Py4JError):
        connection.rollback()


def _save_mode_once(ctx: Any, vertex: Any, connection: Any, target: _Target, config: Mapping[str, Any],
                    schema: Any) -> None:
    """The save modes, unless this run already applied them to this sink and target (a retry,
    a split clone). The marker row is inserted first, in the transaction of the actions: a
    concurrent clone waits for it, then finds it."""
    from py4j.protocol import Py4JJavaError

    marker = target.qualified(SAVEMODES_TABLE)
    # a STREAMING micro-batch applies save modes once per stream, not per batch (runtime/streaming.py)
    key = _digest(getattr(ctx, "save_mode_run_id", ctx.run_id), vertex.ref, target.label)
    connection.setAutoCommit(False)
    try:
        if _query(connection, f"SELECT 1 FROM {marker} WHERE savemode_id = ?", (key,)):
            connection.rollback()
            return
        try:
            _execute(connection, f"INSERT INTO {marker} (savemode_id, run_id, sink, table_name, actions, done_at) "
                                 "VALUES (?, ?, ?, ?, ?, CURRENT_TIMESTAMP)",
                     (key, ctx.run_id, vertex.ref, target.label, ""))
        except Py4JJavaError as e:
            if _state_of(e).startswith("23"):  # a concurrent clone applied them
                connection.rollback()
                return
            raise
        done = _apply_save_modes(connection, target, config, schema)
        _execute(connection, f"UPDATE {marker} SET actions = ? WHERE savemode_id = ?", ("; ".join(done)[:4000], key))
        connection.commit()
        for action in done:
            log.info("Jdbc %s: save mode: %s", vertex.ref, action)
    except BaseException:
        _rollback_quietly(connection)
        raise
    finally:
        connection.setAutoCommit(True)


def _state_of(error: BaseException) -> str:
    states = [s for s in (_sql_state(t) for t in _java_chain(error)) if s]
    return states[-1] if states else ""


def _create_database(spark: Any, target: _Target) -> None:
    """CREATE DATABASE for a PostgreSQL target whose ``database`` does not exist yet."""
    from py4j.protocol import Py4JJavaError

    assert target.base_conn is not None and target.database
    with connect(spark, target.base_conn) as connection:
        try:
            _execute(connection, f"CREATE DATABASE {target.dialect.part(target.database)}")
            log.info("Jdbc: created the database %s", target.database)
        except Py4JJavaError as e:
            if _state_of(e) != "42P04":  # duplicate_database: a concurrent pipeline created it
                raise


# ---------------------------------------------------------------------------------------------
# Sink: staging, commit
# ---------------------------------------------------------------------------------------------

def _resolve_keys(keys: list[str], columns: list[str]) -> list[str]:
    by_lower = {c.lower(): c for c in columns}
    out = []
    for key in keys:
        match = key if key in columns else by_lower.get(key.lower())
        if match is None:
            close = difflib.get_close_matches(key.lower(), list(by_lower), n=1)
            raise _config_error(f"primary_keys names '{key}', which is not an input field"
                                + (f"; did you mean '{by_lower[close[0]]}'?" if close else "")
                                + f" (fields: {', '.join(columns)})")
        out.append(match)
    return out


def _staging_frame(df: Any, target: _Target, own_parallelism: int | None) -> tuple[Any, dict[str, str]]:
    """The rows to stage: data columns (JSON text for maps and rows, text for time), the row
    kind, and with primary keys only the last change per key (UPDATE_BEFORE dropped). Also the
    casts the move applies to turn staged text back into the target's types."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    from ..spi.rows import ROW_KIND, data_columns

    dialect = target.dialect
    names = data_columns(df)
    types = {f.name: f.dataType for f in df.schema.fields}
    casts: dict[str, str] = {}
    exprs = []
    for name in names:
        column, dtype = F.col(dialect_col(name)), types[name]
        is_array = isinstance(dtype, T.ArrayType)
        if isinstance(dtype, (T.MapType, T.StructType)) or (
                is_array and not (dialect.name == "postgresql" and _flat(dtype.elementType))):
            exprs.append(F.to_json(column).alias(name))
            if dialect.json_type:
                casts[name] = dialect.json_type
        elif type(dtype).__name__ == "TimeType":
            exprs.append(column.cast("string").alias(name))
            casts[name] = "TIME(6)" if dialect.name == "mysql" else "TIME"
        elif isinstance(dtype, T.NullType):
            exprs.append(column.cast("string").alias(name))
        elif isinstance(dtype, T.ByteType):
            exprs.append(column.cast("short").alias(name))
        elif is_array and isinstance(dtype.elementType, T.ByteType):
            exprs.append(column.cast("array<short>").alias(name))
        else:
            exprs.append(column)
    kind = F.col(ROW_KIND) if ROW_KIND in df.columns else F.lit(0)
    out = df.select(*exprs, kind.cast("short").alias(KIND_COLUMN))
    if target.primary_keys and target.query is None:
        keys = _resolve_keys(target.primary_keys, names)
        window = Window.partitionBy(*[F.col(dialect_col(k)) for k in keys]).orderBy(F.col(SEQ_COLUMN).desc())
        out = (out.where(F.col(KIND_COLUMN) != 1)
               .withColumn(SEQ_COLUMN, F.monotonically_increasing_id())
               .withColumn("__st_rank", F.row_number().over(window))
               .where(F.col("__st_rank") == 1).drop("__st_rank", SEQ_COLUMN))
    elif own_parallelism:
        out = out.repartition(own_parallelism)
    return out, casts


def _scan_sql(text: str) -> Iterator[tuple[int, str]]:
    """(index, character) of ``text`` outside quoted strings and identifiers."""
    quote = None
    i = 0
    while i < len(text):
        ch = text[i]
        if quote:
            if ch == quote:
                if i + 1 < len(text) and text[i + 1] == quote:
                    i += 1
                else:
                    quote = None
        elif ch in "'\"`":
            quote = ch
        else:
            yield i, ch
        i += 1


def _values_clause(query: str) -> tuple[str, str, str]:
    """(head, values list, tail) of ``INSERT … VALUES (…) tail``; RuntimeConfigError otherwise."""
    text = query.strip().rstrip(";").strip()
    if not re.match(r"(?is)^(insert|upsert|replace)\b", text):
        raise _config_error("the sink query must be an INSERT ... VALUES (...) statement (it runs set-based over "
                            "the staged rows)")
    outside = dict(_scan_sql(text))
    for m in re.finditer(r"(?i)\bvalues\s*\(", text):
        if m.start() not in outside:
            continue
        depth, close = 0, None
        for i in range(m.end() - 1, len(text)):
            if i not in outside:
                continue
            if text[i] == "(":
                depth += 1
            elif text[i] == ")":
                depth -= 1
                if depth == 0:
                    close = i
                    break
        if close is None:
            break
        tail = text[close + 1:]
        if tail.lstrip().startswith(","):
            raise _config_error("the sink query may insert one row (one VALUES list) per input row")
        return text[:m.start()], text[m.end():close], tail
    raise _config_error("the sink query must be an INSERT ... VALUES (...) statement")


def _rewrite_query(query: str, columns: list[str], select: Any, staging: str) -> str:
    """The sink ``query`` as ``INSERT … SELECT <values with ? or :name bound to staged columns> FROM staging``."""
    head, values, tail = _values_clause(query)
    outside = [i for i, _ in _scan_sql(values)]
    marks = [i for i in outside if values[i] == "?"]
    pieces, last = [], 0
    if marks:
        if len(marks) > len(columns):
            raise _config_error(f"the sink query has {len(marks)} '?' placeholders for {len(columns)} fields")
        for n, i in enumerate(marks):
            pieces += [values[last:i], select(columns[n])]
            last = i + 1
    else:
        by_lower = {c.lower(): c for c in columns}
        allowed = set(outside)
        for m in re.finditer(r"(?<![:\w]):([A-Za-z_]\w*)", values):
            if m.start() not in allowed:
                continue
            name = m.group(1) if m.group(1) in columns else by_lower.get(m.group(1).lower())
            if name is None:
                raise _config_error(f"the sink query names :{m.group(1)}, which is not an input field")
            pieces += [values[last:m.start()], select(name)]
            last = m.end()
    pieces.append(values[last:])
    return f"{head}SELECT {''.join(pieces)} FROM {staging} s WHERE 1 = 1{tail}"


def _move_statements(target: _Target, entry: Mapping[str, Any], config: Mapping[str, Any]) -> list[str]:
    """The statements moving staged rows into the target (run in the commit transaction)."""
    dialect = target.dialect
    columns, casts = list(entry["columns"]), dict(entry.get("casts") or {})
    staging = target.qualified(entry["staging"])
    kind = f"s.{dialect.column(KIND_COLUMN)}"

    def select(name: str) -> str:
        expr = f"s.{dialect.column(name)}"
        return f"CAST({expr} AS {casts[name]})" if name in casts else expr

    if target.query is not None:
        return [_rewrite_query(target.query, columns, select, staging)]
    ident = target.ident
    names = [dialect.column(target.ide(c)) for c in columns]
    insert = f"INSERT INTO {ident} ({', '.join(names)}) SELECT {', '.join(select(c) for c in columns)} FROM {staging} s"
    if not target.primary_keys:
        return [insert]
    keys = _resolve_keys(target.primary_keys, columns)
    key_t = [dialect.column(target.ide(k)) for k in keys]
    key_s = ", ".join(f"s.{dialect.column(k)}" for k in keys)
    key_tuple = key_t[0] if len(key_t) == 1 else f"({', '.join(key_t)})"
    others = [(c, n) for c, n in zip(columns, names, strict=True) if c not in keys]
    out = [f"DELETE FROM {ident} WHERE {key_tuple} IN (SELECT {key_s} FROM {staging} s WHERE {kind} = 3)"]
    if _flag(config, "support_upsert_by_insert_only", False):
        return [*out, f"{insert} WHERE {kind} IN (0, 2)"]
    if not _flag(config, "enable_upsert", True):  # INSERT rows inserted, UPDATE_AFTER rows updated
        out.append(f"{insert} WHERE {kind} = 0")
        if others:
            match = " AND ".join(f"st_target.{t} = s.{dialect.column(k)}" for t, k in zip(key_t, keys, strict=True))
            sets = ", ".join(f"{n} = {select(c)}" for c, n in others)
            if dialect.name == "postgresql":
                out.append(f"UPDATE {ident} AS st_target SET {sets} FROM {staging} s WHERE {kind} = 2 AND {match}")
            elif dialect.name == "mysql":
                sets = ", ".join(f"st_target.{n} = {select(c)}" for c, n in others)
                out.append(f"UPDATE {ident} st_target JOIN {staging} s ON {match} SET {sets} WHERE {kind} = 2")
            else:
                match = " AND ".join(f"{ident}.{t} = s.{dialect.column(k)}" for t, k in zip(key_t, keys, strict=True))
                sets = ", ".join(f"{n} = (SELECT {select(c)} FROM {staging} s WHERE {kind} = 2 AND {match})"
                                 for c, n in others)
                out.append(f"UPDATE {ident} SET {sets} WHERE {key_tuple} IN "
                           f"(SELECT {key_s} FROM {staging} s WHERE {kind} = 2)")
        return out
    if dialect.name == "postgresql":
        action = ("UPDATE SET " + ", ".join(f"{n} = EXCLUDED.{n}" for _, n in others)) if others else "NOTHING"
        return [*out, f"{insert} WHERE {kind} IN (0, 2) ON CONFLICT ({', '.join(key_t)}) DO {action}"]
    if dialect.name == "mysql":
        update = ", ".join(f"{n} = VALUES({n})" for _, n in others) or f"{key_t[0]} = {key_t[0]}"
        return [*out, f"{insert} WHERE {kind} IN (0, 2) ON DUPLICATE KEY UPDATE {update}"]
    return [*out, f"DELETE FROM {ident} WHERE {key_tuple} IN (SELECT {key_s} FROM {staging} s WHERE {kind} IN (0, 2))",
            f"{insert} WHERE {kind} IN (0, 2)"]


def _setup(ctx: Any, vertex: Any, target: _Target, config: Mapping[str, Any], schema: Any, commit_id: str,
           staging: str) -> bool:
    """Bookkeeping tables, the commit-log check (True: already committed; leftover staging
    dropped) and the once-per-run save modes."""
    with connect(ctx.spark, target.conn) as connection:
        _ensure_bookkeeping(connection, target)
        if _is_committed(connection, target, commit_id):
            _drop_quietly(connection, target.qualified(staging))
            return True
        if target.table is not None:
            _save_mode_once(ctx, vertex, connection, target, config, schema)
    return False


def _prepare_table(ctx: Any, vertex: Any, table_key: str, df: Any) -> dict[str, Any]:
    from ..spi.errors import RuntimeConfigError
    from ..spi.rows import data_columns

    columns = data_columns(df)
    config = _sink_config(vertex.config, table_key, columns)
    target = _sink_target(config)
    conn = target.conn
    ensure_driver(ctx.spark, conn, ctx.plan.env, config)
    staging = _staging_name(ctx, vertex, table_key)
    commit_id = _digest(ctx.run_id, ctx.pipeline_key, vertex.ref, table_key)
    entry: dict[str, Any] = {"table": table_key, "target": target.label, "staging": staging, "commit_id": commit_id,
                             "columns": columns}
    what = f"cannot prepare {target.label} on {conn.safe_url}"
    try:
        try:
            committed = _setup(ctx, vertex, target, config, df.schema, commit_id, staging)
        except RuntimeConfigError as e:
            creating = _mode(config, "schema_save_mode", "CREATE_SCHEMA_WHEN_NOT_EXIST", SCHEMA_SAVE_MODES) in (
                "RECREATE_SCHEMA", "CREATE_SCHEMA_WHEN_NOT_EXIST")
            if getattr(e, "sql_state", None) != "3D000" or target.base_conn is None or not creating:
                raise
            _create_database(ctx.spark, target)
            committed = _setup(ctx, vertex, target, config, df.schema, commit_id, staging)
    except Exception as e:
        raise _reraise(e, what, conn) from None
    if committed:
        log.info("Jdbc %s: table %s of run %s already committed to %s; nothing to write", vertex.ref, table_key,
                 ctx.run_id, target.label)
        # the executor's row counters count only in an action over this DataFrame
        df.write.format("noop").mode("overwrite").save()
        return {**entry, "status": "committed"}
    staged, casts = _staging_frame(df, target, as_int(lookup(vertex.config, "parallelism")))
    staged = ctx.with_write_faults(vertex, staged)  # test-only; a no-op unless SEATUNNEL_FAULTS is set
    batch = _count(config, "batch_size", DEFAULT_BATCH_SIZE, 1)
    try:
        (staged.write.format("jdbc").options(**conn.spark_options(dbtable=target.qualified(staging), batchsize=batch))
         .mode("overwrite").save())
    except Exception as e:
        _abort_entry(ctx, target, {**entry, "status": "staged"})
        raise _reraise(e, f"cannot write the staging table of {target.label}", conn) from None
    log.info("Jdbc %s: staged table %s for %s", vertex.ref, staging, target.label)
    return {**entry, "status": "staged", "casts": casts}


def prepare(ctx: Any, vertex: Any, data: dict) -> dict[str, Any]:
    """Per table: the commit-log check, the save modes (once per run), then one Spark JDBC write
    into the table's staging table (the action that also counts the rows)."""
    entries: list[dict[str, Any]] = []
    try:
        for table, df in data.items():
            entries.append(_prepare_table(ctx, vertex, table, df))
    except BaseException:
        abort(ctx, vertex, {"tables": entries})
        raise
    return {"tables": entries}


def _record_commit(connection: Any, target: _Target, ctx: Any, vertex: Any, entry: Mapping[str, Any],
                   moved: int) -> bool:
    """Insert the commit-log row; False when a concurrent attempt recorded it first."""
    from py4j.protocol import Py4JJavaError

    try:
        _execute(connection, f"INSERT INTO {target.qualified(COMMITS_TABLE)} (commit_id, run_id, pipeline, sink, "
                             "table_name, attempt, rows_moved, committed_at) VALUES (?, ?, ?, ?, ?, ?, ?, "
                             "CURRENT_TIMESTAMP)",
                 (entry["commit_id"], ctx.run_id, ctx.pipeline_key, vertex.ref, target.label, int(ctx.attempt), moved))
    except Py4JJavaError as e:
        if _state_of(e).startswith("23"):
            return False
        raise
    return True


def commit(ctx: Any, vertex: Any, info: Mapping[str, Any]) -> None:
    """One transaction per table: unless the commit log has the row, move the staged rows into
    the target and record the commit; then drop the staging table."""
    for entry in info.get("tables", ()):
        if entry.get("status") != "staged":
            continue
        config = _sink_config(vertex.config, entry["table"], entry["columns"])
        target = _sink_target(config)
        conn = target.conn
        staging = target.qualified(entry["staging"])
        try:
            with connect(ctx.spark, conn, autocommit=False) as connection:
                try:
                    if _is_committed(connection, target, entry["commit_id"]):
                        connection.rollback()
                        log.info("Jdbc %s: %s was already committed by this run", vertex.ref, target.label)
                    else:
                        if target.query is None and not target.primary_keys:
                            (deletes,), = _query(connection, f"SELECT COUNT(*) FROM {staging} s WHERE "
                                                             f"s.{target.dialect.column(KIND_COLUMN)} IN (1, 3)")
                            if int(deletes or 0):
                                log.warning("Jdbc %s: %s DELETE/UPDATE_BEFORE rows are written as plain rows (set "
                                            "primary_keys to apply them)", vertex.ref, deletes)
                        moved = sum(_execute(connection, sql) for sql in _move_statements(target, entry, config))
                        ctx.fault_point("sink.commit", vertex)  # data moved, commit not recorded
                        if _record_commit(connection, target, ctx, vertex, entry, moved):
                            connection.commit()
                            log.info("Jdbc %s: committed %d rows into %s", vertex.ref, moved, target.label)
                        else:
                            connection.rollback()
                            log.info("Jdbc %s: a concurrent attempt committed %s first", vertex.ref, target.label)
                except BaseException:
                    _rollback_quietly(connection)
                    raise
                connection.setAutoCommit(True)
                _drop_quietly(connection, staging)
        except Exception as e:
            raise _reraise(e, f"cannot commit into {target.label}", conn) from None


def _abort_entry(ctx: Any, target: _Target, entry: Mapping[str, Any]) -> None:
    try:
        with connect(ctx.spark, target.conn) as connection:
            _drop_quietly(connection, target.qualified(entry["staging"]))
    except Exception as e:  # best effort: the next attempt replaces the staging table anyway
        log.warning("Jdbc: could not drop the staging table %s: %s", entry["staging"],
                    mask(str(e), target.conn.password))


def abort(ctx: Any, vertex: Any, info: Mapping[str, Any]) -> None:
    """Drop the staging tables of the tables this attempt staged."""
    for entry in (info or {}).get("tables", ()):
        if entry.get("status") != "staged":
            continue
        try:
            target = _sink_target(_sink_config(vertex.config, entry["table"], entry["columns"]))
        except Exception:  # options were valid at prepare
            continue
        _abort_entry(ctx, target, entry)


def retire(ctx: Any, vertex: Any, info: Mapping[str, Any]) -> None:
    """STREAMING: micro-batch ``ctx.batch_id`` of stream ``ctx.stream_id`` committed (``info``: its ``prepare``
    result); delete the commit-log rows of the stream's earlier micro-batches, which Spark will never replay."""
    stream = getattr(ctx, "stream_id", "")
    if not stream:
        return
    for entry in (info or {}).get("tables", ()):
        target = _sink_target(_sink_config(vertex.config, entry["table"], entry["columns"]))
        with connect(ctx.spark, target.conn) as connection:
            _execute(connection, f"DELETE FROM {target.qualified(COMMITS_TABLE)} WHERE run_id LIKE ? AND run_id <> ? "
                                 "AND pipeline = ? AND sink = ? AND table_name = ?",
                     (f"{stream}:batch-%", ctx.run_id, ctx.pipeline_key, vertex.ref, target.label))


# ---------------------------------------------------------------------------------------------
# Compile time
# ---------------------------------------------------------------------------------------------

def _enum_problem(job: JobConfig, plugin: PluginConfig, key: str, value: Any,
                  allowed: tuple[str, ...]) -> Problem | None:
    text = str(value).strip()
    if text.upper() in allowed:
        return None
    close = difflib.get_close_matches(text.upper(), list(allowed), n=1, cutoff=0.5)
    return job.problem(f"unknown {key} '{text}'", plugin, key=key,
                       hint=f"did you mean '{close[0]}'?" if close else f"use one of {', '.join(allowed)}")


def check(plugin: PluginConfig, job: JobConfig) -> list[Problem]:
    """Option checks: exclusive source options, numbers, enums, the sink's query form. What
    SeaTunnel rejects but existing configs rely on planning (no query) fails validate only."""
    from ..spi import NOT_RUNNABLE

    problems: list[Problem] = []
    options = plugin.options

    def error(key: str | None, message: str, hint: str | None = None) -> None:
        problems.append(job.problem(message, plugin, key=key, hint=hint))

    def cannot_run(key: str | None, message: str, hint: str | None = None) -> None:
        problems.append(job.problem(message + ": it plans, but validate fails", plugin, key=key, hint=hint,
                                    severity="warning", code=NOT_RUNNABLE))

    def integer(block: Mapping[str, Any], key: str, minimum: int, prefix: str = "") -> None:
        value = _opt(block, key)
        if value is not None and (as_int(value) is None or as_int(value) < minimum):
            error(prefix + key, f"{key} must be an integer >= {minimum}, found {value!r}")

    def boolean(key: str) -> None:
        value = _opt(options, key)
        if value is not None and as_bool(value) is None:
            error(key, f"{key} must be true or false, found {value!r}")

    if not plugin.has("url") and not plugin.has("jdbc_conn_id"):
        error(None, "the option 'url' is required",
              hint='set url = "jdbc:postgresql://host:5432/db", or jdbc_conn_id = "<an Airflow connection>"')
    integer(options, "connection_check_timeout_sec", 1)
    boolean("use_kerberos")
    if as_bool(_opt(options, "use_kerberos")) is True:
        cannot_run("use_kerberos", "Kerberos authentication is not supported by this package")
    if _opt(options, "properties") is not None and not isinstance(_opt(options, "properties"), Mapping):
        error("properties", "properties must be a map of JDBC connection properties")
    ide = _opt(options, "field_ide")
    if ide is not None and (found := _enum_problem(job, plugin, "field_ide", ide, FIELD_IDE)):
        problems.append(found)

    if plugin.section == SOURCE:
        integer(options, "fetch_size", 0)
        integer(options, "split.size", 1)
        where = _text(options, "where_condition")
        if where and not where.lower().startswith("where"):
            error("where_condition", f"where_condition must start with 'where', found {where!r}")
        items = _opt(options, "table_list")
        single = bool(_text(options, "table_path") or _text(options, "query"))
        blocks: list[tuple[str, Mapping[str, Any]]] = [("", options)]
        if items is not None:
            if single:
                error("table_list", "Please configure either table_list or table_path/query, not both")
            if not isinstance(items, list) or not items or not all(isinstance(i, Mapping) for i in items):
                error("table_list", "table_list must be a non-empty list of {table_path, query, partition_*} blocks")
                return problems
            blocks = [(f"table_list[{i}].", item) for i, item in enumerate(items)]
            paths = [str(_text(i, "table_path")) for i in items if _text(i, "table_path")]
            for path in sorted({p for p in paths if paths.count(p) > 1}):
                error("table_list", f"table_list names the table_path '{path}' twice")
        elif not single:
            cannot_run(None, "the Jdbc source needs query, table_path or table_list",
                       hint='set query = "SELECT ..." or table_path = "db.schema.table"')
        for prefix, block in blocks:
            if prefix and not (_text(block, "table_path") or _text(block, "query")):
                error(prefix.rstrip("."), "each table_list item needs table_path or query")
            integer(block, "partition_num", 1, prefix)
            bounds = []
            for key in ("partition_lower_bound", "partition_upper_bound"):
                raw = _opt(block, key)
                if raw is not None and _decimal(raw) is None:
                    error(prefix + key, f"{key} must be a number, found {raw!r}")
                bounds.append(_decimal(raw))
            if None not in bounds and bounds[0] > bounds[1]:
                error(prefix + "partition_lower_bound", f"partition_lower_bound {bounds[0]} is greater than "
                                                        f"partition_upper_bound {bounds[1]}")
        return problems

    for key in ("generate_sink_sql", "is_exactly_once", "enable_upsert", "support_upsert_by_insert_only",
                "is_primary_key_updated", "support_upsert_by_query_primary_key_exist", "create_index", "auto_commit",
                "use_copy_statement"):
        boolean(key)
    integer(options, "batch_size", 1)
    integer(options, "max_retries", 0)
    integer(options, "max_commit_attempts", 1)
    query = _text(options, "query")
    if query:
        try:
            _values_clause(query)
        except Exception as e:  # RuntimeConfigError: its cause is the message
            cannot_run("query", getattr(e, "cause", str(e)),
                       hint='write it as INSERT INTO t (a, b) VALUES (?, ?), or use generate_sink_sql = true')
    elif as_bool(_opt(options, "generate_sink_sql")) is not True:
        cannot_run(None, "the Jdbc sink needs query, or generate_sink_sql = true with database and table",
                   hint='set generate_sink_sql = true and table = "schema.table" (or query = "INSERT ...")')
    for key, allowed in (("schema_save_mode", SCHEMA_SAVE_MODES), ("data_save_mode", DATA_SAVE_MODES)):
        value = _opt(options, key)
        if value is not None and (found := _enum_problem(job, plugin, key, value, allowed)):
            problems.append(found)
    if str(_opt(options, "data_save_mode", "")).strip().upper() == "CUSTOM_PROCESSING" and not _text(options,
                                                                                                      "custom_sql"):
        error("custom_sql", "custom_sql is required when data_save_mode is CUSTOM_PROCESSING")
    keys = _opt(options, "primary_keys")
    if keys is not None and not isinstance(keys, (list, str)):
        error("primary_keys", "primary_keys must be a list of field names")
    return problems


def schema(plugin: PluginConfig, job: JobConfig, inputs: list[Schema | None]) -> tuple[Schema | None, list[Problem]]:
    """Source: unknown without a database (None). Sink: ``primary_keys`` must be input fields."""
    problems: list[Problem] = []
    if plugin.section != SINK:
        return None, problems
    known = inputs[0] if inputs and all(i is not None for i in inputs) else None
    if known is None:
        return None, problems
    names = {n.lower(): n for n in known.names}
    for key in as_list(plugin.get("primary_keys")):
        key = str(key).strip()
        if "${" in key or key.lower() in names:
            continue
        close = difflib.get_close_matches(key.lower(), list(names), n=1)
        problems.append(job.problem(f"primary_keys names '{key}', which is not among the input fields", plugin,
                                    key="primary_keys", hint=f"did you mean '{names[close[0]]}'?" if close
                                    else "fields: " + ", ".join(known.names)))
    return None, problems


class Jdbc(Connector, SchemaInference, NeedsJars, Lineage, BatchSource, InsertOnly, TwoPhaseSink, RetiresCommits):
    name = "Jdbc"
    kinds = frozenset({SOURCE, SINK})
    required = ("driver",)
    identity = ("url", "jdbc_conn_id", "table_path", "database", "table", "query")
    committer = True
    stores_deletes = True
    description = "Reads a query or table, or writes (upserts) a table, through JDBC."

    def check(self, plugin: PluginConfig, job: JobConfig) -> list[Problem]:
        return check(plugin, job)

    def schema(self, plugin: PluginConfig, job: JobConfig,
               inputs: Sequence[Schema | None]) -> tuple[Schema | None, list[Problem]]:
        return schema(plugin, job, list(inputs))

    def jars(self, options: Mapping[str, Any], env: Mapping[str, Any]) -> list[str]:
        return required_jars(options, env)

    def assets(self, options: Mapping[str, Any]) -> list[str]:
        return assets(options)

    def read(self, ctx: RunContext, vertex: Vertex) -> Dataset:
        return read(ctx, vertex)

    def prepare(self, ctx: RunContext, vertex: Vertex, data: Dataset) -> Any:
        return prepare(ctx, vertex, data)

    def commit(self, ctx: RunContext, vertex: Vertex, info: Any) -> None:
        return commit(ctx, vertex, info)

    def abort(self, ctx: RunContext, vertex: Vertex, info: Any) -> None:
        return abort(ctx, vertex, info)

    def retire(self, ctx: RunContext, vertex: Vertex, info: Any) -> None:
        return retire(ctx, vertex, info)


CONNECTOR = Jdbc()
