"""Paimon's Hive catalog (``catalog_type = hive``): a table's files are a file-system catalog's, in the
warehouse's layout (``<warehouse>/<database>.db/<table>``); the Hive metastore ``catalog_uri`` names records
the database and the table, as Paimon's own Hive catalog records them, so Hive, Spark and Flink find it there.

* **The database** is created in the metastore when missing, at ``<warehouse>/<database>.db`` (an HDFS
  warehouse written ``hdfs:///p`` is recorded under ``fs.defaultFS``).
* **The table** (:func:`register`) is a ``MANAGED_TABLE`` at the table's directory, with the table parameters
  ``table_type = PAIMON`` and ``storage_handler = org.apache.paimon.hive.PaimonStorageHandler``, the input and
  output formats ``org.apache.paimon.hive.mapred.PaimonInputFormat`` / ``PaimonOutputFormat``, the serde
  ``org.apache.paimon.hive.PaimonSerDe``, and the table's columns in Hive's types (no Hive partition columns:
  Paimon keeps its partitions itself unless ``metastore.partitioned-table`` is set, which is not done here).
  A table found in the warehouse and not in the metastore (a run stopped between the two) is registered then.
* **Reads and writes** find the table's directory in the metastore (:func:`location`): a table a
  metastore records elsewhere than the warehouse is read and written there; one the metastore records
  that is not a Paimon table is refused.
* **Schema changes** a CDC source's rows carry (:mod:`.evolve`) are committed to the table's files first,
  then the metastore's column list is made the table's (:func:`update_columns`), as Paimon's Hive catalog
  alters the metastore's table after the files.
* **RECREATE_SCHEMA** drops the metastore's table (never its data: the catalog drops the files) before the
  catalog drops and creates it.

The metastore is reached over Thrift (``hmsclient``), from the driver only: Spark's tasks open the table's
directory with pypaimon's file-system catalog.
"""

from __future__ import annotations

import contextlib
import getpass
import time
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlparse

from ...spi.errors import RuntimeConfigError

INPUT_FORMAT = "org.apache.paimon.hive.mapred.PaimonInputFormat"
OUTPUT_FORMAT = "org.apache.paimon.hive.mapred.PaimonOutputFormat"
SERDE = "org.apache.paimon.hive.PaimonSerDe"
STORAGE_HANDLER = "org.apache.paimon.hive.PaimonStorageHandler"
PARAMETERS = {"table_type": "PAIMON", "storage_handler": STORAGE_HANDLER}


@contextlib.contextmanager
def client(uri: str) -> Iterator[Any]:
    """A Thrift client of the first metastore of ``uri`` that answers."""
    try:
        from hmsclient import hmsclient
    except ImportError as e:
        raise RuntimeConfigError("catalog_type hive needs hmsclient: pip install "
                                 "'airflow-provider-seatunnel[paimon]'") from e
    errors = []
    for one in uri.split(","):
        parsed = urlparse(one.strip())
        hms = hmsclient.HMSClient(host=parsed.hostname, port=parsed.port or 9083)
        try:
            hms.open()
        except Exception as e:
            errors.append(f"{one.strip()}: {e}")
            continue
        try:
            yield hms
        finally:
            hms.close()
        return
    raise RuntimeError(f"no Hive metastore of {uri} answers ({'; '.join(errors)})")


def _ttypes() -> Any:
    from hmsclient.genthrift.hive_metastore import ttypes

    return ttypes


def location(uri: str, database: str, table: str) -> str | None:
    """The directory the metastore records for ``database.table``; None when it records no such table; a
    :class:`RuntimeConfigError` when the table is not a Paimon table."""
    t = _ttypes()
    with client(uri) as hms:
        try:
            found = hms.get_table(database, table)
        except t.NoSuchObjectException:
            return None
    if found.sd is None or found.sd.inputFormat != INPUT_FORMAT:
        raise RuntimeConfigError(f"the Hive metastore's table {database}.{table} is not a Paimon table (input format "
                                 f"{getattr(found.sd, 'inputFormat', None)})")
    return str(found.sd.location)


def _hive_type(field_type: Any) -> str:
    """A Paimon field's type in Hive's words (Spark's SQL names are Hive's, but for TIMESTAMP_NTZ)."""
    from pypaimon.schema.data_types import PyarrowFieldParser
    from pyspark.sql.pandas.types import from_arrow_type

    name = str(from_arrow_type(PyarrowFieldParser.from_paimon_type(field_type)).simpleString())
    return name.replace("timestamp_ntz", "timestamp")


def ensure_database(uri: str, database: str, directory: str) -> None:
    t = _ttypes()
    with client(uri) as hms:
        try:
            hms.get_database(database)
            return
        except t.NoSuchObjectException:
            pass
        with contextlib.suppress(t.AlreadyExistsException):
            hms.create_database(t.Database(name=database, locationUri=directory, parameters={}))


def _columns(table: Any) -> list[Any]:
    t = _ttypes()
    return [t.FieldSchema(str(f.name), _hive_type(f.type), f.description) for f in table.table_schema.fields]


def register(uri: str, database: str, name: str, directory: str, table: Any) -> None:
    """Record the Paimon table ``table`` (a pypaimon table) at ``directory`` in the metastore, unless it is."""
    t = _ttypes()
    columns = _columns(table)
    serde = t.SerDeInfo(serializationLib=SERDE, parameters={})
    sd = t.StorageDescriptor(cols=columns, location=directory, inputFormat=INPUT_FORMAT, outputFormat=OUTPUT_FORMAT,
                             serdeInfo=serde, parameters={}, bucketCols=[], sortCols=[], numBuckets=-1,
                             compressed=False)
    now = int(time.time())
    hive_table = t.Table(tableName=name, dbName=database, owner=getpass.getuser(), createTime=now,
                         lastAccessTime=now, retention=2**31 - 1, sd=sd, partitionKeys=[],
                         parameters=dict(PARAMETERS), tableType="MANAGED_TABLE")
    with client(uri) as hms, contextlib.suppress(t.AlreadyExistsException):
        hms.create_table(hive_table)


def update_columns(uri: str, database: str, name: str, table: Any) -> None:
    """The metastore's column list of the table made the Paimon table's (after a schema change)."""
    with client(uri) as hms:
        found = hms.get_table(database, name)
        found.sd.cols = _columns(table)
        hms.alter_table(database, name, found)


def unregister(uri: str, database: str, name: str) -> None:
    """Drop the metastore's record of the table, never its files."""
    t = _ttypes()
    with client(uri) as hms, contextlib.suppress(t.NoSuchObjectException):
        hms.drop_table(database, name, False)
