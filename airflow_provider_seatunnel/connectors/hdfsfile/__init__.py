"""HdfsFile: LocalFile's formats and options on a Hadoop file system (HDFS), on S3File's code with
Hadoop's FileSystem as the store (:mod:`.store`).

SeaTunnel's options: ``fs.defaultFS`` (required), ``path``, ``hdfs_site_path``, ``remote_user``,
the Kerberos options (``krb5_path``, ``kerberos_principal``, ``kerberos_keytab_path``: planned,
not runnable here), and LocalFile's file options. Spark reads and writes the files on the
executors; the sink stages per attempt and commits behind the fence record whose
compare-and-swap is a rename that refuses an existing target (:mod:`..files.filestore`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...spi import (
    SINK,
    SOURCE,
    BatchSource,
    Capabilities,
    Connector,
    Lineage,
    SaveModes,
    SchemaInference,
    TableLineage,
    Unnamed,
    Vertex,
)
from ...spi.options import JobConfig, PluginConfig, Problem
from ..files import checks as file_checks
from ..files.onstore import OnStoreFile
from ..files.options import written
from ..files.optionspec import HDFS_SPEC
from ..files.placeholders import store_assets
from ..files.s3options import Dialect
from . import store

__all__ = ["CONNECTOR", "HdfsFile"]

_KERBEROS = ("kerberos_principal", "kerberos_keytab_path")

DIALECT = Dialect(store.PLUGIN, store.settings, store.SHARED,  # type: ignore[arg-type]
                  reach_with=store.reach, open_with=store.open_store)


def _server_problems(plugin: PluginConfig, job: JobConfig) -> list[Problem]:
    problems: list[Problem] = []
    options = plugin.options
    fs = written(options, "fs.defaultFS")
    if fs is None:
        problems.append(job.problem("the option 'fs.defaultFS' is required", plugin, key="fs.defaultFS",
                                    hint='set fs.defaultFS = "hdfs://namenode:8020"'))
    elif "://" not in str(fs):
        problems.append(job.problem(f"fs.defaultFS '{fs}' is not a Hadoop URI", plugin, key="fs.defaultFS",
                                    hint='set fs.defaultFS = "hdfs://namenode:8020"'))
    for key in _KERBEROS:
        if written(options, key) is not None:
            problems.append(job.cannot_run("Kerberos logins are not supported by this package", plugin, key=key,
                                           hint="run Spark with a Kerberos ticket of its own and drop the option"))
    if written(options, "remote_user") is not None:
        problems.append(job.problem("remote_user is not applied: Spark reaches HDFS as the user it runs as "
                                    "(set HADOOP_USER_NAME for spark-submit)", plugin, key="remote_user",
                                    severity="warning"))
    return problems


class HdfsFile(OnStoreFile, Connector, SchemaInference, Lineage, TableLineage, SaveModes, BatchSource):
    name = "HdfsFile"
    capabilities = Capabilities(sections=frozenset({SOURCE, SINK}), committer=True, inserts_only=True)
    option_spec = HDFS_SPEC
    description = "Reads or writes text, csv, json, parquet, orc, xml and excel files on HDFS."
    dialect = DIALECT

    def check(self, plugin: PluginConfig, job: JobConfig) -> list[Problem]:
        return file_checks.check(plugin, job) + _server_problems(plugin, job)

    schema = staticmethod(file_checks.schema)

    def assets(self, options: Mapping[str, Any]) -> list[str | Unnamed]:
        """``<fs.defaultFS>/<path>`` (``hdfs://nn:8020/data/out``)."""
        return store_assets(options, "fs.defaultFS", lambda fs, path: f"{str(fs).rstrip('/')}/{str(path).strip('/')}")

    def save_mode(self, run_id: str, vertex: Vertex) -> list[str] | None:
        """None: the file system is reached through Spark's JVM, which the worker that applies
        save modes before the pipelines run has not; ``prepare`` applies them, once per run."""
        return None


CONNECTOR = HdfsFile()
