"""The Hive connector's options, read the same way at compile time and at run time.

* ``table_name``: ``database.table`` (both parts: SeaTunnel refuses a name without a database); a
  sink's may hold the upstream table's placeholders (``${database_name}.${table_name}``).
* ``metastore_uri``: the metastore's thrift URI(s), comma-separated. It is a property of the Spark
  session (Hive support is chosen when the session starts): :func:`session_conf` gives the settings
  the runtime builds the pipeline's session with, so every Hive block of a job must name the same
  metastore.
* ``hive.hadoop.conf`` (a map), ``hive.hadoop.conf-path`` (a directory holding ``core-site.xml``,
  ``hdfs-site.xml``, ``hive-site.xml``), ``hive_site_path`` and ``hdfs_site_path`` (one file each):
  Hadoop and Hive settings, given to the session as ``spark.hadoop.*``. The files are read when the
  session is built (on the machine that launches the pipeline and on the driver).
* ``read_partitions`` (``k=v`` or ``k=v/k2=v2`` paths, all of one depth), ``read_columns``: source.
* ``overwrite`` (false), ``abort_drop_partition_metadata`` (false, as in SeaTunnel's code; its
  docs say true): sink.
* ``compress_codec``: ``none`` (SeaTunnel's ``lzo`` is not run here); ORC and Parquet tables
  compress as their table properties say.
* Kerberos (``kerberos_principal``, ``kerberos_keytab_path``, ``krb5_path``): not run here.
"""

from __future__ import annotations

import logging
import os
import re
import xml.etree.ElementTree as ET
from collections.abc import Mapping
from typing import Any

from ...spi import SINK, SOURCE
from ...spi.errors import RuntimeConfigError
from ...spi.options import as_list
from ...spi.optionspec import Option, OptionSpec

log = logging.getLogger("seatunnel.connectors.hive")

NAME = "Hive"
KERBEROS = ("kerberos_principal", "kerberos_keytab_path", "krb5_path")
CODECS = ("none",)
#: SeaTunnel's codecs of this connector: ``lzo`` plans but cannot run here
KNOWN_CODECS = ("none", "lzo")
#: options of later SeaTunnel versions' Hive sink that create or empty tables: not run here
SAVE_MODE_OPTIONS = ("schema_save_mode", "data_save_mode", "save_mode_create_template")
_NOT_HERE = "plans but cannot run here."

SPEC = OptionSpec((
    Option("table_name", required=True, identity=True, description="database.table; a sink's may hold the "
           "upstream table's placeholders (${database_name}.${table_name})."),
    Option("metastore_uri", required=True, identity=True, description="The metastore's thrift:// URI(s), "
           "comma-separated; a setting of the Spark session: one metastore per job."),
    Option("hive.hadoop.conf", "map", description="Hadoop and Hive settings given to the session (spark.hadoop.*)."),
    Option("hive.hadoop.conf-path", description="A directory holding core-site.xml, hdfs-site.xml, hive-site.xml."),
    Option("hdfs_site_path", description="An hdfs-site.xml read into the session's settings."),
    Option("hive_site_path", description="A hive-site.xml read into the session's settings."),
    *(Option(key, description="Kerberos: " + _NOT_HERE) for key in KERBEROS),
    Option("compress_codec", "enum", "none", "none; lzo " + _NOT_HERE + " ORC and Parquet tables compress as "
           "their table properties say.", choices=KNOWN_CODECS),
    Option("read_partitions", "list", description="Partitions read, k=v or k=v/k2=v2 paths, all of one depth.",
           sections=(SOURCE,)),
    Option("read_columns", "list", description="The columns read (all when unset).", sections=(SOURCE,)),
    Option("tables_configs", "any", description="Several tables in one source: " + _NOT_HERE, sections=(SOURCE,)),
    Option("overwrite", "bool", False, "Replace the written partitions (the whole table if unpartitioned) in the "
           "same commit.", sections=(SINK,)),
    Option("abort_drop_partition_metadata", "bool", False, "An aborted commit drops the partitions it added.",
           sections=(SINK,)),
    *(Option(key, "any", description="A later SeaTunnel version's save mode: " + _NOT_HERE, sections=(SINK,))
      for key in SAVE_MODE_OPTIONS),
))
#: the session settings of Hive support
CATALOG_KEY = "spark.sql.catalogImplementation"
METASTORE_KEY = "spark.hadoop.hive.metastore.uris"
SITE_FILES = ("core-site.xml", "hdfs-site.xml", "hive-site.xml")
#: SeaTunnel's Hive formats: the table's InputFormat class -> format
INPUT_FORMATS = {
    "org.apache.hadoop.mapred.TextInputFormat": "text",
    "org.apache.hadoop.hive.ql.io.parquet.MapredParquetInputFormat": "parquet",
    "org.apache.hadoop.hive.ql.io.orc.OrcInputFormat": "orc",
}
_PART = re.compile(r"^[^=/]+=[^/]*$")


def config_error(message: str) -> RuntimeConfigError:
    return RuntimeConfigError(message)


def split_table(name: Any) -> tuple[str, str]:
    """(database, table) of ``table_name``; ValueError when it is not ``database.table``."""
    text = str(name).strip()
    parts = text.split(".")
    if len(parts) != 2 or not all(p.strip() for p in parts):
        raise ValueError(f"table_name '{text}' must be database.table (SeaTunnel's Hive connector needs both)")
    return parts[0].strip(), parts[1].strip()


def metastore_uris(value: Any) -> str:
    """``metastore_uri`` normalised (comma-separated URIs, blanks dropped); ValueError when one is not thrift://."""
    uris = [u.strip() for u in str(value).split(",") if u.strip()]
    if not uris:
        raise ValueError("metastore_uri is empty")
    for uri in uris:
        if not re.match(r"^thrift://[^/:]+(:\d+)?/?$", uri):
            raise ValueError(f"metastore_uri '{uri}' is not a thrift://host:port URI")
    return ",".join(uris)


def partition_specs(value: Any) -> list[list[tuple[str, str]]]:
    """``read_partitions`` as lists of (key, value); ValueError when a path is not ``k=v[/k=v...]``
    or the paths are not all of one depth (SeaTunnel's rule)."""
    specs: list[list[tuple[str, str]]] = []
    for item in as_list(value):
        segments = str(item).replace("\\", "/").strip("/").split("/")
        if not all(_PART.match(s) for s in segments):
            raise ValueError(f"read_partitions: '{item}' is not a partition path such as par1=a/par2=b")
        specs.append([(k.strip(), v) for k, v in (s.split("=", 1) for s in segments)])
    if not specs:
        raise ValueError("read_partitions is empty")
    if len({len(s) for s in specs}) > 1:
        raise ValueError("read_partitions: every partition in the list must have the same directory depth")
    return specs


def _site_properties(path: str) -> dict[str, str]:
    """The name/value pairs of a Hadoop ``*-site.xml``."""
    try:
        root = ET.parse(path).getroot()
    except (OSError, ET.ParseError) as e:
        raise config_error(f"cannot read the Hadoop configuration file {path}: {e}") from None
    out: dict[str, str] = {}
    for prop in root.iter("property"):
        name, value = prop.findtext("name"), prop.findtext("value")
        if name:
            out[name.strip()] = (value or "").strip()
    return out


def hadoop_settings(options: Mapping[str, Any]) -> dict[str, str]:
    """The Hadoop/Hive settings the block gives: the files of ``hive.hadoop.conf-path``, then
    ``hdfs_site_path``, ``hive_site_path``, then the ``hive.hadoop.conf`` map (last wins)."""
    out: dict[str, str] = {}
    o = SPEC.run_time(options)
    folder = o["hive.hadoop.conf-path"]
    if folder is not None:
        found = [os.path.join(str(folder), n) for n in SITE_FILES if os.path.isfile(os.path.join(str(folder), n))]
        if not os.path.isdir(str(folder)):
            raise config_error(f"hive.hadoop.conf-path {folder} is not a directory")
        for path in found:
            out.update(_site_properties(path))
    for key in ("hdfs_site_path", "hive_site_path"):
        if o[key] is not None:
            out.update(_site_properties(o[key]))
    out.update({str(k): str(v) for k, v in (o["hive.hadoop.conf"] or {}).items()})
    return out


def session_conf(options: Mapping[str, Any], env: Mapping[str, Any] | None = None) -> dict[str, str]:
    """The session settings a Hive block needs: Hive support, its metastore, its Hadoop settings (a wrong or
    missing option is the deterministic ``RuntimeConfigError``); the job's ``env`` adds nothing to them."""
    try:
        uris = metastore_uris(SPEC.run_time(options)["metastore_uri"])
    except ValueError as e:
        raise config_error(str(e)) from None
    out = {f"spark.hadoop.{k}": v for k, v in hadoop_settings(options).items()}
    out.update({CATALOG_KEY: "hive", METASTORE_KEY: uris})
    return out


def quote_ident(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def sql_string(value: str) -> str:
    """A Spark SQL string literal."""
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


def unescape_path_name(text: str) -> str:
    """A partition value from its directory name (Hive escapes with ``%XX``)."""
    return re.sub(r"%([0-9A-Fa-f]{2})", lambda m: chr(int(m.group(1), 16)), text)


def partition_values(directory: str) -> list[tuple[str, str]]:
    """(key, value) of a partition directory path ``k=v/k2=v2`` (values unescaped)."""
    out = []
    for segment in directory.strip("/").split("/"):
        key, _, value = segment.partition("=")
        out.append((unescape_path_name(key), unescape_path_name(value)))
    return out


def partition_clause(values: list[tuple[str, str]]) -> str:
    return "PARTITION (" + ", ".join(f"{quote_ident(k)} = {sql_string(v)}" for k, v in values) + ")"
