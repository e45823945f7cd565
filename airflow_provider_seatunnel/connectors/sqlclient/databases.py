"""The databases SeaTunnel's Jdbc connector has dialects for, as facts: which URL picks which
dialect, the names SeaTunnel's ``dialect`` option accepts, each dialect's quoting, upsert, split
hash and created column types, and per database its usual driver class, default port and the
scheme of its datasets (lineage). :func:`dialect_of` reads these tables.

Dialects. PostgreSQL, MySQL/MariaDB and SQLite run against real servers in the tests; every other
dialect here is SQL generation only: it plans, validates and writes what SeaTunnel's dialect of
that database writes, but no such server runs on the test machines.

* **URL.** A URL picks the dialect of the first database whose prefix it starts with
  (case-insensitive), as SeaTunnel's dialect factories do; no match is the ``generic`` dialect.
  Greenplum (``jdbc:pivotal:greenplum:``), openGauss and HighGo use PostgreSQL's dialect, as in
  SeaTunnel; a ``jdbc:postgresql:`` URL to Greenplum is PostgreSQL anyway.
* **Names.** The ``dialect`` option is one of SeaTunnel's dialect names (:data:`OPTION_NAMES`,
  case-insensitive); it wins over the URL. ``compatible_mode`` refines a dialect as SeaTunnel's
  factories do: OceanBase ``oracle`` is Oracle (else OceanBase's MySQL mode), MySQL ``starrocks``
  is StarRocks, PostgreSQL ``postgresLow`` has no upsert (PostgreSQL 9.4 and older), Hive
  ``inceptor`` is Inceptor (Hive's rules).
* **Types.** A dialect's created columns (:data:`TYPES`, by kind: :data:`.dialects.TYPE_KINDS`)
  follow SeaTunnel's type converter of that database for a column of unknown length, except:
  ``key_string``, the type of a string primary-key column, is bounded where the unbounded type
  cannot be a key (SQL Server, DB2, Dameng, Xugu, IRIS, as the generic dialect and MySQL); a byte
  is ``SMALLINT`` where ``TINYINT`` is unsigned (SQL Server, SAP HANA); SAP HANA timestamps are
  ``TIMESTAMP`` (``SECONDDATE`` drops the fraction); Snowflake bytes are ``BINARY`` and Phoenix
  bytes ``VARBINARY``; timestamps with a time zone get the database's zoned type. Where SeaTunnel
  has no converter (Vertica, Teradata, Gbase 8a, Tablestore) the ANSI types are used, Hive gets
  Hive's. A ``time`` of None: the database has no TIME type (Oracle).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from types import MappingProxyType
from typing import Any

from .dialects import Dialect

#: the ANSI column types (the generic dialect, SQLite, and databases without a SeaTunnel converter)
_ANSI = {"string": "TEXT", "key_string": "VARCHAR(255)", "boolean": "BOOLEAN", "tinyint": "SMALLINT",
         "smallint": "SMALLINT", "int": "INTEGER", "bigint": "BIGINT", "float": "FLOAT",
         "double": "DOUBLE PRECISION", "decimal": "DECIMAL({p},{s})", "bytes": "BLOB", "date": "DATE",
         "time": "TIME", "timestamp": "TIMESTAMP", "timestamp_tz": "TIMESTAMP WITH TIME ZONE"}


def _types(base: dict[str, Any], **changes: Any) -> MappingProxyType:
    return MappingProxyType({**base, **changes})


_PG = {**_ANSI, "string": "TEXT", "key_string": "TEXT", "float": "REAL", "decimal": "NUMERIC({p},{s})",
       "bytes": "BYTEA", "timestamp_tz": "TIMESTAMPTZ", "json": "JSONB",
       # a source's declared length is kept (SeaTunnel's engine creates varchar(40) for a varchar(40) column)
       "varchar": "VARCHAR({n})", "char": "CHAR({n})", "max_length": "10485760"}

#: dialect -> Spark type kind -> column type (``{p}``/``{s}``: a decimal's precision and scale)
TYPES: dict[str, MappingProxyType] = {
    "generic": _types(_ANSI),
    "sqlite": _types(_ANSI),
    "postgresql": _types(_PG),
    "mysql": _types(_ANSI, string="LONGTEXT", tinyint="TINYINT", double="DOUBLE", bytes="LONGBLOB",
                    time="TIME(6)", timestamp="DATETIME(6)", timestamp_tz="TIMESTAMP(6)", json="JSON"),
    "oracle": _types(_ANSI, string="VARCHAR2(4000)", key_string="VARCHAR2(4000)", boolean="NUMBER(1)",
                     tinyint="INTEGER", smallint="INTEGER", bigint="INTEGER", float="BINARY_FLOAT",
                     double="BINARY_DOUBLE", decimal="NUMBER({p},{s})", time=None,
                     timestamp="TIMESTAMP WITH LOCAL TIME ZONE"),
    # TINYINT is unsigned on SQL Server and SAP HANA: a Spark byte needs SMALLINT
    "sqlserver": _types(_ANSI, string="NVARCHAR(MAX)", key_string="NVARCHAR(255)", boolean="BIT", int="INT",
                        float="REAL", double="FLOAT", bytes="VARBINARY(MAX)", timestamp="DATETIME2",
                        timestamp_tz="DATETIMEOFFSET"),
    "db2": _types(_ANSI, string="VARCHAR(32672)", int="INT", float="REAL", double="DOUBLE",
                  bytes="VARBINARY(32672)", timestamp_tz="TIMESTAMP"),
    "dameng": _types(_ANSI, boolean="BIT", tinyint="TINYINT", int="INT", float="REAL", double="DOUBLE",
                     bytes="LONGVARBINARY"),
    "redshift": _types(_PG, string="CHARACTER VARYING(65535)", key_string="CHARACTER VARYING(65535)",
                       bytes="BINARY VARYING(1024000)", time="TIME WITHOUT TIME ZONE",
                       timestamp="TIMESTAMP WITHOUT TIME ZONE", timestamp_tz="TIMESTAMP WITH TIME ZONE",
                       json="SUPER", varchar=None, char=None),
    "snowflake": _types(_ANSI, string="STRING", key_string="STRING", float="FLOAT4", bytes="BINARY",
                        timestamp="TIMESTAMP_NTZ", timestamp_tz="TIMESTAMP_TZ"),
    "saphana": _types(_ANSI, string="NVARCHAR(5000)", key_string="NVARCHAR(5000)", double="DOUBLE",
                      float="REAL", timestamp_tz="TIMESTAMP"),
    "xugu": _types(_ANSI, string="VARCHAR(60000)", tinyint="TINYINT", double="DOUBLE", decimal="NUMERIC({p},{s})",
                   timestamp_tz="TIMESTAMP"),
    "iris": _types(_ANSI, string="VARCHAR(2147483647)", boolean="BIT", tinyint="TINYINT", double="DOUBLE",
                   bytes="LONG BINARY", timestamp="TIMESTAMP2", timestamp_tz="TIMESTAMP2"),
    "phoenix": _types(_ANSI, string="VARCHAR", key_string="VARCHAR", tinyint="TINYINT", double="DOUBLE",
                      bytes="VARBINARY", timestamp_tz="TIMESTAMP"),
    "hive": _types(_ANSI, string="STRING", key_string="STRING", tinyint="TINYINT", int="INT", double="DOUBLE",
                   bytes="BINARY", time="STRING", timestamp_tz="TIMESTAMP"),
}
TYPES["kingbase"] = TYPES["postgresql"]  # SeaTunnel's Kingbase converter is PostgreSQL's
TYPES["oceanbase"] = TYPES["starrocks"] = TYPES["mysql"]
TYPES["inceptor"] = TYPES["hive"]
TYPES["vertica"] = TYPES["teradata"] = TYPES["gbase8a"] = TYPES["tablestore"] = TYPES["generic"]  # no converter

_MD5 = "ABS(MD5({col}) % {n})"  # SeaTunnel's default split hash

#: SeaTunnel's dialects by this package's name for them
DIALECTS: dict[str, Dialect] = {d.name: d for d in (
    # SeaTunnel's engine sets a created PostgreSQL table's replica identity to FULL (logical decoding
    # then carries every column of an updated or deleted row)
    Dialect("postgresql", '"', family="postgresql", upsert="on_conflict",
            hash="(ABS(HASHTEXT({col}::text)) % {n})", after_create=("ALTER TABLE {table} REPLICA IDENTITY FULL",)),
    # MySQL: CRC32, not SeaTunnel's MD5 (its hex text reads as a number by its leading digits)
    Dialect("mysql", "`", family="mysql", upsert="duplicate_key", hash="MOD(ABS(CRC32({col})), {n})"),
    Dialect("sqlite", '"', family="sqlite", upsert="on_conflict",
            hash="((LENGTH({col}) + COALESCE(UNICODE(SUBSTR({col}, -1, 1)), 0)) % {n})"),
    Dialect("generic", '"', family="generic", folds=True, hash=_MD5),
    Dialect("oracle", '"', upsert="merge", merge_as=False, hash="MOD(ORA_HASH({col}), {n})", catalogs=False,
            bookkeeping=("NUMBER(19)", "TIMESTAMP"), own_staging=True),
    Dialect("sqlserver", "[", close="]", upsert="merge", merge_end=";", hash="ABS(HASHBYTES('MD5', {col}) % {n})",
            row_values=False, database_option="catalog", bookkeeping=("BIGINT", "DATETIME2")),
    Dialect("db2", '"', folds=True, upsert="merge", hash=_MD5, catalogs=False, database_option="schema",
            max_precision=31),
    Dialect("dameng", '"', database_option="schema", upsert="merge", merge_as=False, hash=_MD5, catalogs=False),
    Dialect("xugu", '"', upsert="merge", merge_as=False, hash=_MD5, catalogs=False),
    Dialect("vertica", '"', database_option="catalog", upsert="merge", merge_as=False, hash=_MD5),
    Dialect("saphana", '"', database_option="schema", upsert="merge", hash=_MD5, row_values=False),
    Dialect("iris", '"', upsert="insert_or_update", hash=None, catalogs=False, row_values=False),
    Dialect("kingbase", '"', family="postgresql", folds=True, upsert="on_conflict", hash=_MD5),
    Dialect("redshift", '"', family="postgresql", hash="(ABS(MURMUR3_32_HASH({col})) % {n})"),
    Dialect("oceanbase", "`", family="mysql", upsert="duplicate_key", hash="MOD(ABS(CRC32({col})), {n})"),
    Dialect("starrocks", "`", family="mysql", upsert="duplicate_key", hash="ABS(murmur_hash3_32({col}) % {n})"),
    Dialect("snowflake", '"', database_option="catalog", folds=True, hash=_MD5),
    Dialect("hive", "`", database_option="schema", folds=True, hash=_MD5, row_values=False),
    Dialect("inceptor", "`", database_option="schema", folds=True, hash=_MD5, row_values=False),
    Dialect("teradata", '"', database_option="schema", folds=True, hash=_MD5, own_staging=True),
    Dialect("phoenix", '"', database_option="schema", folds=True, hash=_MD5, row_values=False),
    Dialect("gbase8a", "`", database_option="schema", folds=True, hash=_MD5),
    Dialect("tablestore", "`", database_option="schema", folds=True, hash=_MD5),
)}
DIALECTS = {name: replace(d, types=TYPES[name]) for name, d in DIALECTS.items()}
#: PostgreSQL 9.4 and older (``compatible_mode = "postgresLow"``): no ON CONFLICT, so no native upsert
POSTGRES_LOW = replace(DIALECTS["postgresql"], upsert=None)

#: SeaTunnel's ``dialect`` option names (lower case) -> dialect; ``postgresql``, ``mariadb``,
#: ``sqlserver``/``mssql`` spellings are accepted too
OPTION_NAMES = {
    "postgres": "postgresql", "postgresql": "postgresql", "greenplum": "postgresql", "opengauss": "postgresql",
    "highgo": "postgresql", "mysql": "mysql", "mariadb": "mysql", "sqlite": "sqlite", "generic": "generic",
    "oracle": "oracle", "sqlserver": "sqlserver", "db2": "db2", "dameng": "dameng", "xugu": "xugu",
    "vertica": "vertica", "saphana": "saphana", "iris": "iris", "kingbase": "kingbase", "redshift": "redshift",
    "oceanbase": "oceanbase", "starrocks": "starrocks", "snowflake": "snowflake", "hive": "hive",
    "inceptor": "inceptor", "teradata": "teradata", "phoenix": "phoenix", "gbase8a": "gbase8a",
    "tablestore": "tablestore",
}

#: (dialect, ``compatible_mode`` in lower case) -> the dialect SeaTunnel's factory creates instead
COMPATIBLE_MODES = {("oceanbase", "oracle"): "oracle", ("mysql", "starrocks"): "starrocks",
                    ("hive", "inceptor"): "inceptor", ("postgresql", "postgreslow"): "postgres_low"}


@dataclass(frozen=True)
class Database:
    """One database SeaTunnel's Jdbc connector names: how its URLs start, its dialect, its usual
    driver class, the port a URL without one means, and the scheme of its datasets."""

    title: str
    prefixes: tuple[str, ...]  # lower case
    dialect: str
    driver: str | None
    port: int | None
    scheme: str  # OpenLineage's namespace scheme (Airflow's providers' where they have one)
    sqlglot: str | None = None  # the sqlglot dialect its queries are read with (lineage, tests)


DATABASES: tuple[Database, ...] = (
    Database("PostgreSQL", ("jdbc:postgresql:", "jdbc:pgsql:"), "postgresql", "org.postgresql.Driver", 5432,
             "postgres", "postgres"),
    Database("Greenplum", ("jdbc:pivotal:greenplum:",), "postgresql", "com.pivotal.jdbc.GreenplumDriver", 5432,
             "greenplum", "postgres"),
    Database("openGauss", ("jdbc:opengauss:",), "postgresql", "org.opengauss.Driver", 5432, "opengauss", "postgres"),
    Database("HighGo", ("jdbc:highgo:",), "postgresql", "com.highgo.jdbc.Driver", 5866, "highgo", "postgres"),
    Database("MySQL", ("jdbc:mysql:",), "mysql", "com.mysql.cj.jdbc.Driver", 3306, "mysql", "mysql"),
    Database("MariaDB", ("jdbc:mariadb:",), "mysql", "org.mariadb.jdbc.Driver", 3306, "mysql", "mysql"),
    Database("SQLite", ("jdbc:sqlite:",), "sqlite", "org.sqlite.JDBC", None, "sqlite", "sqlite"),
    Database("Oracle", ("jdbc:oracle:thin:",), "oracle", "oracle.jdbc.OracleDriver", 1521, "oracle", "oracle"),
    Database("SQL Server", ("jdbc:sqlserver:",), "sqlserver", "com.microsoft.sqlserver.jdbc.SQLServerDriver", 1433,
             "mssql", "tsql"),
    Database("DB2", ("jdbc:db2:",), "db2", "com.ibm.db2.jcc.DB2Driver", 50000, "db2"),
    Database("Dameng", ("jdbc:dm:",), "dameng", "dm.jdbc.driver.DmDriver", 5236, "dameng", "oracle"),
    Database("Kingbase", ("jdbc:kingbase8:",), "kingbase", "com.kingbase8.Driver", 54321, "kingbase", "postgres"),
    Database("OceanBase", ("jdbc:oceanbase:",), "oceanbase", "com.oceanbase.jdbc.Driver", 2881, "oceanbase",
             "mysql"),
    Database("Vertica", ("jdbc:vertica:",), "vertica", "com.vertica.jdbc.Driver", 5433, "vertica"),
    Database("Redshift", ("jdbc:redshift:",), "redshift", "com.amazon.redshift.jdbc42.Driver", 5439, "redshift",
             "redshift"),
    Database("Snowflake", ("jdbc:snowflake:",), "snowflake", "net.snowflake.client.jdbc.SnowflakeDriver", 443,
             "snowflake", "snowflake"),
    Database("Hive", ("jdbc:hive2:",), "hive", "org.apache.hive.jdbc.HiveDriver", 10000, "hive", "hive"),
    Database("Xugu", ("jdbc:xugu:",), "xugu", "com.xugu.cloudjdbc.Driver", 5138, "xugu", "oracle"),
    Database("SAP HANA", ("jdbc:sap://",), "saphana", "com.sap.db.jdbc.Driver", 30015, "hana"),
    Database("Teradata", ("jdbc:teradata:",), "teradata", "com.teradata.jdbc.TeraDriver", 1025, "teradata",
             "teradata"),
    Database("Phoenix", ("jdbc:phoenix:",), "phoenix", "org.apache.phoenix.queryserver.client.Driver", 8765,
             "phoenix"),
    Database("InterSystems IRIS", ("jdbc:iris:",), "iris", "com.intersystems.jdbc.IRISDriver", 1972, "iris"),
    Database("GBase 8a", ("jdbc:gbase:",), "gbase8a", "com.gbase.jdbc.Driver", 5258, "gbase", "mysql"),
    Database("Tablestore", ("jdbc:ots:",), "tablestore", "com.alicloud.openservices.tablestore.jdbc.OTSDriver", 443,
             "tablestore", "mysql"),
    # no SeaTunnel dialect: the generic one
    Database("Informix", ("jdbc:informix-sqli:",), "generic", "com.informix.jdbc.IfxDriver", 9088, "informix"),
    Database("Presto", ("jdbc:presto:",), "generic", "com.facebook.presto.jdbc.PrestoDriver", None, "presto",
             "presto"),
    Database("Trino", ("jdbc:trino:",), "generic", "io.trino.jdbc.TrinoDriver", None, "trino", "trino"),
    Database("H2", ("jdbc:h2:",), "generic", "org.h2.Driver", None, "h2"),
    Database("HSQLDB", ("jdbc:hsqldb:",), "generic", "org.hsqldb.jdbc.JDBCDriver", None, "hsqldb"),
)


def database_of(url: str) -> Database | None:
    """The database a JDBC URL names (by its prefix, case-insensitive), None for an unknown one."""
    lowered = url.strip().lower()
    return next((db for db in DATABASES if lowered.startswith(db.prefixes)), None)


def by_scheme(scheme: str) -> Database | None:
    """The database whose datasets have the scheme ``scheme``."""
    return next((db for db in DATABASES if db.scheme == scheme), None)


def dialect_of(url: str, name: str | None = None, compatible_mode: str | None = None) -> Dialect:
    """The dialect the ``dialect`` option ``name`` selects (one of SeaTunnel's dialect names,
    case-insensitive; another name falls back to the URL), else the one of the URL's database,
    refined by ``compatible_mode`` (see the module docstring)."""
    key = OPTION_NAMES.get((name or "").strip().lower())
    if key is None:
        found = database_of(url)
        key = found.dialect if found else "generic"
    refined = COMPATIBLE_MODES.get((key, (compatible_mode or "").strip().lower()))
    if refined == "postgres_low":
        return POSTGRES_LOW
    return DIALECTS[refined or key]
