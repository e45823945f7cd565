"""Reaching the database: the connection options of a block, the driver's jar on Spark's
classpath, and ``java.sql.Connection`` objects from the Spark driver's JVM for the statements that
run on the driver (split bounds, save modes, the commit). No Python database driver is involved.

The driver (a Java class in a jar) is found by :func:`required_jars`; it reaches Spark through
``spark.jars``, or at run time through :func:`ensure_driver` when a session started without it.
A block whose Airflow connection (``jdbc_conn_id``) gives its URL gets its driver class and jar
from that connection's extras too (:func:`connection_driver_options`).
"""

from __future__ import annotations

import glob
import logging
import os
import re
from collections.abc import Iterator, Mapping
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from typing import Any

from ...settings import JDBC_DRIVER_PATH, value
from ...spi.options import option
from ...spi.sessions import is_connect, session_key
from . import SqlConnection
from .databases import DATABASES, dialect_of
from .dialects import Dialect
from .errors import StatementError, access_errors, db_error
from .options import (
    CONNECTION_SPEC,
    DEFAULT_POOL_SIZE,
    DEFAULT_TIMEOUT_SEC,
    DRIVER_PATH_OPTION,
    POOL_SIZE_OPTION,
    config_error,
    mask,
)
from .pool import Pool, borrowed, pool_for, pool_key
from .pyconnection import open_connection

log = logging.getLogger("seatunnel.jdbc")

DRIVER_PATH_ENV = JDBC_DRIVER_PATH.env
#: The option an Airflow connection's ``driver_path`` extra becomes (run time only, never in a config)
#: (family, URL prefixes, driver class prefixes, well-known jar locations) for :func:`required_jars`
KNOWN_DRIVERS = (
    ("postgresql", ("jdbc:postgresql:",), ("org.postgresql.",),
     ("/usr/share/java/postgresql.jar", "/usr/share/java/postgresql-jdbc.jar",
      "/usr/share/java/postgresql-jdbc4.jar")),
    ("mysql", ("jdbc:mysql:",), ("com.mysql.",),
     ("/usr/share/java/mysql-connector-j.jar", "/usr/share/java/mysql-connector-java.jar",
      "/usr/share/java/mysql.jar", "~/.m2/repository/com/mysql/mysql-connector-j/*/mysql-connector-j-*.jar")),
    ("mariadb", ("jdbc:mariadb:",), ("org.mariadb.",), ("/usr/share/java/mariadb-java-client.jar",)),
    ("sqlite", ("jdbc:sqlite:",), ("org.sqlite.",), ("/usr/share/java/sqlite-jdbc.jar",)),
    ("h2", ("jdbc:h2:",), ("org.h2.",), ("/usr/share/java/h2.jar",)),
    ("hsqldb", ("jdbc:hsqldb:",), ("org.hsqldb.",), ("/usr/share/java/hsqldb.jar",)),
)


@dataclass
class Conn:
    """How to reach the database (``password`` stays out of ``repr`` and messages)."""

    url: str
    driver: str
    user: str | None = None
    password: str | None = field(default=None, repr=False)
    properties: dict[str, str] = field(default_factory=dict)
    timeout: int = DEFAULT_TIMEOUT_SEC
    dialect_name: str | None = None  # the ``dialect`` option: overrides the URL's
    compatible_mode: str | None = None  # the ``compatible_mode`` option: refines the dialect
    pool_size: int = DEFAULT_POOL_SIZE  # ``connection.pool.size``: the job's pool of this database

    @property
    def dialect(self) -> Dialect:
        return dialect_of(self.url, self.dialect_name, self.compatible_mode)

    @property
    def safe_url(self) -> str:
        return mask(self.url, self.password)

    def connection_properties(self) -> dict[str, str]:
        """What the driver gets: ``properties``, the credentials, and the driver's defaults (each
        unless ``properties`` sets it): PostgreSQL's timeouts (seconds); MySQL's connect timeout
        (milliseconds) and ``rewriteBatchedStatements`` (SeaTunnel's MySQL dialect sets it: the
        staging write's batches become multi-row INSERTs); SQLite's ``busy_timeout`` (milliseconds:
        parallel writers of one database file wait for each other's lock)."""
        props = dict(self.properties)
        if self.user is not None:
            props["user"] = self.user
        if self.password is not None:
            props["password"] = self.password
        url = self.url.strip().lower()  # the driver's properties: the URL's driver
        if url.startswith(("jdbc:postgresql:", "jdbc:pgsql:")):
            props.setdefault("connectTimeout", str(self.timeout))
            props.setdefault("loginTimeout", str(self.timeout))
        elif url.startswith(("jdbc:mysql:", "jdbc:mariadb:")):
            props.setdefault("connectTimeout", str(self.timeout * 1000))
            props.setdefault("rewriteBatchedStatements", "true")
        elif url.startswith("jdbc:sqlite:"):
            props.setdefault("busy_timeout", str(self.timeout * 1000))
        return props

    @property
    def spark_url(self) -> str:
        """The URL Spark's JDBC reader and writer get. Spark picks its SQL dialect (how it quotes
        column names) by the URL's scheme and knows MySQL's only as ``jdbc:mysql:``: a
        ``jdbc:mariadb:`` URL becomes ``jdbc:mysql:…`` with ``permitMysqlScheme``, which MariaDB
        Connector/J needs to accept that scheme (its driver class still serves the connection)."""
        if not self.url.lower().startswith("jdbc:mariadb:"):
            return self.url
        rest = self.url[len("jdbc:mariadb:"):]
        return f"jdbc:mysql:{rest}{'&' if '?' in rest else '?'}permitMysqlScheme"

    def spark_options(self, **extra: Any) -> dict[str, str]:
        return {"url": self.spark_url, "driver": self.driver, **self.connection_properties(),
                **{k: str(v) for k, v in extra.items()}}

    def with_url(self, url: str) -> Conn:
        return Conn(url, self.driver, self.user, self.password, dict(self.properties), self.timeout,
                    self.dialect_name, self.compatible_mode, self.pool_size)


def connection_of(config: Mapping[str, Any]) -> Conn:
    """The connection a block's options describe (:data:`.options.CONNECTION_SPEC`); RuntimeConfigError when
    they are incomplete or wrong."""
    o = CONNECTION_SPEC.run_time(config)
    url, driver = (o["url"] or "").strip(), (o["driver"] or "").strip()
    if not url:
        raise config_error("url is required")
    if not driver:
        raise config_error("driver is required (the JDBC driver class, e.g. org.postgresql.Driver)")
    if o["use_kerberos"]:
        raise config_error("use_kerberos is not supported by this package")
    return Conn(url=url, driver=driver, user=o["user"], password=o["password"],
                properties={str(k): str(v) for k, v in (o["properties"] or {}).items()},
                timeout=o["connection_check_timeout_sec"], dialect_name=(o["dialect"] or "").strip() or None,
                compatible_mode=(o["compatible_mode"] or "").strip() or None, pool_size=o[POOL_SIZE_OPTION])


def _family(conn_url: str, driver: str) -> tuple | None:
    url, driver = conn_url.strip().lower(), driver.strip()
    for entry in KNOWN_DRIVERS:
        if driver.startswith(entry[2]) or url.startswith(entry[1]):
            return entry
    return None


#: The usual driver class of each JDBC URL scheme (``jdbc:<scheme>:``) of :data:`.databases.DATABASES`
#: (the drivers SeaTunnel's Jdbc documentation names): what a block whose connection names none loads
DEFAULT_DRIVER_CLASSES = {prefix.split(":")[1]: db.driver for db in reversed(DATABASES) for prefix in db.prefixes
                          if db.driver}


def default_driver_class(url: str) -> str | None:
    """The usual driver class for a ``jdbc:<scheme>:`` URL, None for a scheme not in
    :data:`DEFAULT_DRIVER_CLASSES`."""
    found = re.match(r"jdbc:([a-z0-9-]+):", url.strip().lower())
    return DEFAULT_DRIVER_CLASSES.get(found.group(1)) if found else None


#: the JDBC subprotocol of an Airflow connection type (None: the connection holds a jdbc: URL)
JDBC_SCHEMES = {"postgres": "postgresql", "postgresql": "postgresql", "mysql": "mysql", "mssql": "sqlserver",
                "oracle": "oracle", "sqlite": "sqlite", "jdbc": None}
#: the URL an Airflow connection of a JDBC subprotocol builds, where it is not ``jdbc:<scheme>://host:port/schema``
#: (Oracle's thin driver takes ``thin:@//host:port/service``, SQL Server's a ``databaseName`` parameter)
_URL_FORMS = {"oracle": "jdbc:oracle:thin:@//{host}{port}/{schema}",
              "sqlserver": "jdbc:sqlserver://{host}{port}{schema}"}


def options_from_connection(conn: Any) -> dict[str, str]:
    """``url``, ``user``, ``password`` (and ``driver``, ``driver_path``) of a Jdbc block from an
    Airflow connection (:class:`...spi.ConnectionInfo`): a ``jdbc:`` URL in its host or its extra
    ``url``, else one built from its type, host, port and schema (database); the driver from its
    extras where the deployment's switches allow (:func:`connection_driver_options`)."""
    extra = conn.extra or {}
    url = extra.get("url") or (conn.host if str(conn.host or "").startswith("jdbc:") else None)
    if not url:
        scheme = JDBC_SCHEMES.get(str(conn.conn_type).lower()) or str(conn.conn_type).lower()
        port = f":{conn.port}" if conn.port else ""
        schema = conn.schema or ""
        if scheme == "sqlserver" and schema:
            schema = f";databaseName={schema}"
        url = _URL_FORMS.get(scheme, "jdbc:" + scheme + "://{host}{port}/{schema}").format(
            host=conn.host, port=port, schema=schema)
    out = {"url": str(url)}
    if conn.login:
        out["user"] = str(conn.login)
    if conn.password:
        out["password"] = str(conn.password)
    out.update(connection_driver_options(out["url"], extra,
                                         allow_driver_path=bool(conn.settings.get("allow_driver_path_in_extra")),
                                         allow_driver_class=bool(conn.settings.get("allow_driver_class_in_extra"))))
    return out


def connection_driver_options(url: str, extra: Mapping[str, Any], *, allow_driver_path: bool,
                              allow_driver_class: bool) -> dict[str, str]:
    """``driver`` (and ``driver_path``) for a Jdbc block from its Airflow connection: the extras
    ``driver_class`` and ``driver_path`` as the Jdbc provider reads them (case-insensitive keys),
    each only where its switch allows it (the Jdbc provider's ``[providers.jdbc]
    allow_driver_class_in_extra`` and ``allow_driver_path_in_extra``: whoever edits connections
    would otherwise choose the code the Spark JVM loads; a refused one is logged); without a
    ``driver_class``, the usual class of the URL's database (:func:`default_driver_class`). Options
    the block sets itself win over these (the caller merges them underneath)."""
    lower = {str(k).lower(): v for k, v in extra.items()}
    out: dict[str, str] = {}
    for key, allowed, target in (("driver_class", allow_driver_class, "driver"),
                                 ("driver_path", allow_driver_path, DRIVER_PATH_OPTION)):
        given = str(lower.get(key) or "").strip()
        if given and allowed:
            out[target] = given
        elif given:
            log.warning("Jdbc: the connection's extra %s is ignored: set allow_%s_in_extra = True in the "
                        "[providers.jdbc] section of Airflow's configuration to use it", key, key)
    if "driver" not in out and (default := default_driver_class(url)):
        out["driver"] = default
    return out


def _jar_list(paths: str) -> list[str]:
    """Jar files, and the jars of directories, of a ``:``- or ``,``-separated list (made absolute)."""
    found: list[str] = []
    for item in re.split(r"[,:]", paths):
        item = os.path.abspath(os.path.expanduser(item.strip())) if item.strip() else ""
        if os.path.isdir(item):
            found.extend(sorted(glob.glob(os.path.join(item, "*.jar"))))
        elif item:
            found.append(item)
    return found


def required_jars(options: Mapping[str, Any], env: Mapping[str, Any] | None = None) -> list[str]:
    """The jars holding the JDBC driver of a Jdbc block, to put on Spark's classpath.

    The explicit ones, when there are any: the block's connection's ``driver_path`` (see
    :func:`connection_driver_options`), then Airflow's ``[seatunnel] jdbc_driver_path``, else
    ``$SEATUNNEL_JDBC_DRIVER_PATH`` (:mod:`...settings`) (jar files or directories of jars,
    separated by ``:`` or ``,``). Else nothing when the job's ``env.spark.jars`` already names a jar
    of the driver's family (``postgresql``, ``mysql``...); else the first existing well-known
    system location for the driver class or URL scheme (Debian's ``/usr/share/java/postgresql.jar``...).
    """
    explicit = _jar_list(str(option(options, DRIVER_PATH_OPTION, ""))) + _jar_list(value(JDBC_DRIVER_PATH) or "")
    if explicit:
        return list(dict.fromkeys(explicit))
    url, driver = str(option(options, "url", "")), str(option(options, "driver", ""))
    family = _family(url, driver)
    if family is None:
        return []
    configured = [os.path.basename(j).lower() for j in str((env or {}).get("spark.jars", "")).split(",") if j.strip()]
    if any(family[0] in name for name in configured):
        return []
    return next(([path] for path in map(_located, family[3]) if path), [])


def _located(location: str) -> str | None:
    """A well-known jar location that exists: a path, or a pattern (Maven's local repository:
    the newest version there)."""
    if not glob.has_magic(location):
        return location if os.path.isfile(location) else None
    found = [p for p in glob.glob(os.path.expanduser(location)) if not p.endswith(("-sources.jar", "-javadoc.jar"))]
    return max(found, key=_version_key) if found else None


def _version_key(path: str) -> list[int]:
    return [int(n) for n in re.findall(r"\d+", os.path.basename(path))]


def ensure_driver(spark: Any, conn: Conn, env: Mapping[str, Any] | None = None,
                  config: Mapping[str, Any] | None = None) -> None:
    """Make the driver class loadable in this Spark application: when it is not on the
    classpath (a session started without the jar), add :func:`required_jars` to the driver's
    class loader and ship them to the executors. A Spark Connect session has them as artifacts
    already (the connector's :meth:`jars`); its server's own ``spark.jars`` may hold the driver too."""
    if is_connect(spark):
        return
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
        raise config_error(f"the JDBC driver class {conn.driver} is not on Spark's classpath and no jar was "
                           f"found{where}: add its jar to env spark.jars, set [seatunnel] {JDBC_DRIVER_PATH.option} "
                           f"in Airflow's configuration or {DRIVER_PATH_ENV}")
    for jar in jars:
        if not os.path.isfile(jar):
            raise config_error(f"the JDBC driver jar {jar} does not exist")
        try:
            loader.addURL(jvm.java.io.File(jar).toURI().toURL())
            spark._jsc.sc().addJar(jar)
        except Py4JError:
            spark.sql(f"ADD JAR '{jar}'")
        log.info("Jdbc: added the driver jar %s to Spark", jar)
    try:
        jvm.java.lang.Class.forName(conn.driver, False, jvm.java.lang.Thread.currentThread().getContextClassLoader())
    except Py4JError:
        raise config_error(f"the JDBC driver class {conn.driver} is not in {', '.join(jars)}: add the jar that "
                           f"holds it to env spark.jars, set [seatunnel] "
                           f"{JDBC_DRIVER_PATH.option} in Airflow's configuration or {DRIVER_PATH_ENV}") from None


@contextmanager
def connect(spark: Any, conn: Conn, autocommit: bool = True) -> Iterator[SqlConnection]:
    """A connection of the job's pool of ``conn``'s database (:func:`pool_of`), auto-commit as asked:
    back to the pool after the block (its open transaction rolled back, auto-commit on), closed
    instead when the block fails."""
    with borrowed(pool_of(spark, conn), _reset) as connection:
        if not autocommit:
            connection.setAutoCommit(False)
        yield connection


def pool_of(spark: Any, conn: Conn) -> Pool:
    """The job's pool of ``conn``'s database and login (:mod:`.pool`), at most ``connection.pool.size``
    connections."""
    props = conn.connection_properties()
    return pool_for(pool_key(session_key(spark), conn.url, conn.user, props), lambda: _open(spark, conn),
                    conn.pool_size, conn.timeout, _close, lambda c: c.isValid(max(1, min(conn.timeout, 5))))


def _open(spark: Any, conn: Conn) -> SqlConnection:
    """A new connection, auto-commit on: a ``java.sql.Connection`` from the Spark driver's JVM (the
    driver class instantiated through the context class loader, so that jars added at run time work
    too); on a Spark Connect session, which has no JVM here, a Python driver's connection answering
    the same calls (:mod:`.pyconnection`)."""
    if is_connect(spark):
        try:
            return open_connection(conn.url, conn.connection_properties())
        except StatementError as e:
            raise db_error(e, f"cannot connect to {conn.safe_url}", conn) from None
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
        raise config_error(f"the driver {conn.driver} does not accept the url {conn.safe_url}")
    return connection


def _reset(connection: Any) -> None:
    """A returned connection as a new one is: no open transaction, auto-commit on."""
    if not connection.getAutoCommit():
        connection.rollback()
        connection.setAutoCommit(True)


def _close(connection: Any) -> None:
    with suppress(Exception):  # a broken connection
        connection.close()


def rollback_quietly(connection: Any) -> None:
    with suppress(*access_errors()):
        connection.rollback()


@contextmanager
def transaction(connection: Any) -> Iterator[Any]:
    """``connection`` with auto-commit off for the block, which commits (or rolls back) itself: an
    exception rolls back what is open and goes on; auto-commit is on again after the block."""
    connection.setAutoCommit(False)
    try:
        yield connection
    except BaseException:
        rollback_quietly(connection)
        raise
    finally:
        connection.setAutoCommit(True)


def execute(connection: Any, sql: str, params: tuple = ()) -> int:
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


def query(connection: Any, sql: str, params: tuple = (), limit: int = 0) -> list[list[str | None]]:
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


def query_json(connection: Any, sql: str, params: tuple = ()) -> list[list[Any]]:
    """The rows of ``sql``, a query answering ONE cell: a JSON array of rows (arrays), or NULL for none.
    A listing of thousands of rows is one round trip into the JVM (:func:`query` makes one per cell).
    ValueError when the cell is no such array (a database that cut it short: MariaDB caps
    ``JSON_ARRAYAGG`` at ``group_concat_max_len``)."""
    import json

    rows = query(connection, sql, params)
    text = rows[0][0] if len(rows) == 1 and len(rows[0]) == 1 else ""
    if text is None:
        return []
    try:
        data = json.loads(text)
    except ValueError:
        raise ValueError(f"the listing is not JSON ({len(text)} characters)") from None
    if not isinstance(data, list) or not all(isinstance(row, list) for row in data):
        raise ValueError("the listing is not a JSON array of rows")
    return data


def columns_of(connection: Any, sql: str) -> list[tuple[str, int, int]]:
    """(name, java.sql.Types code, scale) of each column ``sql`` returns (no row is read)."""
    statement = connection.prepareStatement(f"SELECT * FROM ({sql}) st_jdbc_meta WHERE 1 = 0")
    try:
        meta = statement.executeQuery().getMetaData()
        return [(meta.getColumnLabel(i), int(meta.getColumnType(i)), int(meta.getScale(i)))
                for i in range(1, meta.getColumnCount() + 1)]
    finally:
        statement.close()
