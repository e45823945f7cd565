"""OssFile, CosFile and ObsFile at compile time (no Spark, no network): LocalFile's file option
checks (:mod:`..files.checks`), then the store's options of the block (or of each source
``tables_configs`` item, which takes the store options it does not set from its block):

* ``bucket`` is required and a URI of the plugin's scheme (``oss://``, ``cosn://``, ``obs://``);
  a path after the bucket name is ignored, as by SeaTunnel (a warning);
* the options SeaTunnel requires of the plugin's sink or source (:class:`.stores.StoreSpec`),
  except those an Airflow connection (``aws_conn_id``) may give: the keys, ``endpoint``, ``region``;
* the two keys go together; ``endpoint`` is a host or an http(s) URL; ``path`` has no ``..``;
  ``hadoop_s3_properties`` is a map; ``aws_conn_id`` names a connection.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import partial

from ...spi import SINK
from ...spi.options import JobConfig, PluginConfig, Problem
from ..files.checks import StoreBlock, check_with_store
from ..files.options import written
from ..files.s3options import CONN_OPTION, key_prefix
from .stores import StoreSpec, bucket_parts


def _bucket(spec: StoreSpec, b: StoreBlock) -> None:
    bucket = b.value("bucket")
    hint = f'set bucket = "{spec.scheme}://my-bucket"'
    if bucket is None:
        b.report("the option 'bucket' is required", "bucket", hint=hint)
        return
    try:
        _, rest = bucket_parts(spec, bucket)
    except Exception:
        b.report(f"bucket '{bucket}' is not an {spec.plugin} bucket URI ({spec.scheme}://<bucket name>)", "bucket",
                 hint=hint)
        return
    if rest:
        b.report(f"bucket '{bucket}': '/{rest}' after the bucket name is ignored, as by SeaTunnel (the file "
                 "system is the URI's scheme and bucket only)", "bucket", severity="warning",
                 hint=f'write bucket = "{spec.scheme}://{str(bucket).split("://", 1)[1].split("/", 1)[0]}" and put '
                      "the folder in path")


def _required(spec: StoreSpec, b: StoreBlock) -> None:
    from_connection = b.value(CONN_OPTION) is not None
    given = {spec.key_id, spec.secret, "endpoint", "region"}
    for key in spec.requires(b.plugin.section == SINK):
        if key == "bucket" or b.value(key) is not None or (from_connection and key in given):
            continue
        example = f' (e.g. "{spec.example}")' if key == spec.place else ""
        b.report(f"the option '{b.prefix}{key}' is required by {spec.plugin}", key,
                 hint=f"set {key}{example}, or name an Airflow connection of type aws with {CONN_OPTION}")
    key_id, secret = b.value(spec.key_id), b.value(spec.secret)
    if (key_id is None) != (secret is None) and not from_connection:
        missing = spec.secret if secret is None else spec.key_id
        if missing not in spec.requires(b.plugin.section == SINK):
            b.report(f"{spec.key_id} and {spec.secret} go together: '{missing}' is missing", missing)


def _values(spec: StoreSpec, b: StoreBlock) -> None:
    endpoint = b.value("endpoint")
    if endpoint is not None and str(endpoint).strip():
        text = str(endpoint).strip()
        if re.match(r"^[A-Za-z][A-Za-z0-9+.-]*://", text) and not re.match(r"(?i)^https?://", text):
            b.report(f"endpoint '{text}' is not a host or an http(s) URL", "endpoint",
                     hint=f'set endpoint = "{spec.example if spec.place == "endpoint" else "https://host"}"')
    path = written(b.options, "path")
    if path is not None:
        try:
            key_prefix(path, spec.plugin)
        except Exception as e:
            b.report(str(e).removeprefix(f"{spec.plugin}: "), "path", hint='set path = "/folder/in/bucket"')
    props = b.value("hadoop_s3_properties")
    if props is not None and not isinstance(props, Mapping):
        b.report("hadoop_s3_properties must be a map of Hadoop settings", "hadoop_s3_properties",
                 hint='hadoop_s3_properties { "fs.s3a.connection.maximum" = "50" }')
    conn = b.value(CONN_OPTION)
    if conn is not None and (not isinstance(conn, str) or not conn.strip()):
        b.report(f"{CONN_OPTION} must name an Airflow connection of type aws", CONN_OPTION)


def _store_problems(spec: StoreSpec, b: StoreBlock) -> None:
    _bucket(spec, b)
    _required(spec, b)
    _values(spec, b)


def check(spec: StoreSpec, plugin: PluginConfig, job: JobConfig) -> list[Problem]:
    """The file options' checks, then the store options of the block or of each source ``tables_configs`` item."""
    return check_with_store(plugin, job, partial(_store_problems, spec))
