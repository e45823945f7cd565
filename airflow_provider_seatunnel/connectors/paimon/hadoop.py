"""The Hadoop settings of an HDFS warehouse, as SeaTunnel's Paimon connector gathers them, handed to pypaimon's
HDFS client (``hdfs-native``: Hadoop's RPC and data-transfer protocols in Rust, no JVM, no libhdfs).

:func:`settings` merges, later winning: the ``core-site.xml``, ``hdfs-site.xml`` and ``hive-site.xml`` of
``paimon.hadoop.conf-path``, the file ``hdfs_site_path``, then ``paimon.hadoop.conf``. The files are read on
the driver, each at most :data:`MAX_XML_BYTES`, as plain ``<property><name/><value/></property>`` entries
(no entity is expanded, nothing else is read).

:func:`file_io_options` are the catalog options pypaimon's HDFS client takes from them: the keys under
``fs.``, ``dfs.``, ``hadoop.``, ``ipc.`` and ``io.`` (hdfs-native reads ``fs.defaultFS``, the name services
and their NameNodes: ``dfs.nameservices``, ``dfs.ha.namenodes.<ns>``, ``dfs.namenode.rpc-address.<ns>.<nn>``,
and viewfs mount tables; the failover proxy provider is its own, so that key is accepted and not used), and
no fall-back to pypaimon's libhdfs client (it needs a JVM and a Hadoop install in every Spark task).

An HDFS warehouse needs ``fs.defaultFS`` (SeaTunnel's rule). Kerberos (``hadoop.security.authentication =
kerberos`` or a ``security.kerberos.login.*`` key) is refused: it is untested here.
"""

from __future__ import annotations

import os
import xml.etree.ElementTree as ET
from collections.abc import Mapping

from ...spi.errors import RuntimeConfigError
from .options import Table

#: the files of ``paimon.hadoop.conf-path`` read, in this order
CONF_FILES = ("core-site.xml", "hdfs-site.xml", "hive-site.xml")
#: the largest Hadoop XML file read
MAX_XML_BYTES = 1 << 20
DEFAULT_FS = "fs.defaultFS"
#: the prefixes of the keys hdfs-native reads
NATIVE_PREFIXES = ("fs.", "dfs.", "hadoop.", "ipc.", "io.")
KERBEROS_KEYS = ("security.kerberos.login.principal", "security.kerberos.login.keytab")


def kerberos(settings: Mapping[str, str]) -> bool:
    """Whether the settings ask for Kerberos."""
    return (str(settings.get("hadoop.security.authentication", "")).strip().lower() == "kerberos"
            or any(str(settings.get(k, "")).strip() for k in KERBEROS_KEYS))


def read_xml(path: str) -> dict[str, str]:
    """The properties of one Hadoop XML file; a :class:`RuntimeConfigError` naming it when it cannot be read, is
    larger than :data:`MAX_XML_BYTES` or is not Hadoop's XML."""
    try:
        with open(path, "rb") as f:
            data = f.read(MAX_XML_BYTES + 1)
    except OSError as e:
        raise RuntimeConfigError(f"the Hadoop settings file {path} cannot be read: {e.strerror or e}") from e
    if len(data) > MAX_XML_BYTES:
        raise RuntimeConfigError(f"the Hadoop settings file {path} is larger than {MAX_XML_BYTES} bytes")
    if b"<!ENTITY" in data or b"<!DOCTYPE" in data:
        raise RuntimeConfigError(f"the Hadoop settings file {path} declares a DOCTYPE or entities: refused")
    try:
        root = ET.fromstring(data)
    except ET.ParseError as e:
        raise RuntimeConfigError(f"the Hadoop settings file {path} is not XML: {e}") from e
    found: dict[str, str] = {}
    for prop in root.iter("property"):
        name, value = prop.findtext("name"), prop.findtext("value")
        if name and name.strip():
            found[name.strip()] = (value or "").strip()
    return found


def settings(table: Table) -> dict[str, str]:
    """The warehouse's Hadoop settings (see the module docstring)."""
    merged: dict[str, str] = {}
    if table.conf_path:
        for name in CONF_FILES:
            path = os.path.join(table.conf_path, name)
            if os.path.isfile(path):
                merged.update(read_xml(path))
    if table.hdfs_site_path:
        merged.update(read_xml(table.hdfs_site_path))
    merged.update(table.hadoop)
    return merged


def file_io_options(table: Table) -> dict[str, str]:
    """The catalog options of an HDFS warehouse's client (none for a local one); a
    :class:`RuntimeConfigError` without ``fs.defaultFS`` or with Kerberos."""
    if not table.is_hdfs():
        return {}
    found = settings(table)
    if not str(found.get(DEFAULT_FS, "")).strip():
        raise RuntimeConfigError(f"warehouse '{table.warehouse}': fs.defaultFS is required in paimon.hadoop.conf "
                                 "(or the files of hdfs_site_path and paimon.hadoop.conf-path)")
    if kerberos(found):
        raise RuntimeConfigError("Kerberos is not supported by the Paimon connector here (docs/paimon.md)")
    options = {k: v for k, v in found.items() if k.startswith(NATIVE_PREFIXES)}
    options["hdfs.client.impl"] = "native"
    options["hdfs.client.fallback-to-pyarrow"] = "false"
    return options


def qualified(uri: str, options: Mapping[str, str]) -> str:
    """``hdfs:///p`` as ``<fs.defaultFS>/p`` (what a metastore records); other URIs as they are."""
    for scheme in ("hdfs", "viewfs"):
        bare = f"{scheme}:///"
        if uri.startswith(bare):
            default = str(options.get(DEFAULT_FS, "")).rstrip("/")
            if default.startswith(f"{scheme}://"):
                return f"{default}/{uri[len(bare):]}"
    return uri
