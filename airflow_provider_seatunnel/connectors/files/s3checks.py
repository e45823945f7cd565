"""S3File at compile time (no Spark, no network): LocalFile's file option checks
(:mod:`..files.checks`), then the S3 options: ``bucket`` (``s3a://name``), ``path``, the
credentials provider and its keys, ``hadoop_s3_properties``, ``aws_conn_id``."""

from __future__ import annotations

from collections.abc import Mapping

from ...spi.options import JobConfig, PluginConfig, Problem
from .checks import StoreBlock, check_with_store
from .options import written
from .s3options import CONN_OPTION, SIMPLE_PROVIDER, TEMPORARY_PROVIDER, V1_PROVIDERS, bucket_name, key_prefix

_KNOWN_PROVIDERS = (SIMPLE_PROVIDER, TEMPORARY_PROVIDER, *V1_PROVIDERS,
                    "org.apache.hadoop.fs.s3a.auth.IAMInstanceCredentialsProvider",
                    "org.apache.hadoop.fs.s3a.auth.AssumedRoleCredentialProvider",
                    "org.apache.hadoop.fs.s3a.AnonymousAWSCredentialsProvider")


def _s3_problems(b: StoreBlock) -> None:
    report, value, options = b.report, b.value, b.options
    bucket = value("bucket")
    if bucket is None:
        report("the option 'bucket' is required", "bucket", hint='set bucket = "s3a://my-bucket"')
    else:
        try:
            bucket_name(bucket)
        except Exception:
            report(f"bucket '{bucket}' is not an S3 bucket URI", "bucket", hint='set bucket = "s3a://my-bucket"')
    path = written(options, "path")
    if path is not None:
        try:
            key_prefix(path)
        except Exception as e:
            report(str(e).removeprefix("S3File: "), "path", hint='set path = "/folder/in/bucket"')
    provider = value("fs.s3a.aws.credentials.provider")
    keys = {"access_key": value("access_key"),
            "secret_key": value("secret_key") if value("secret_key") is not None else value("access_secret")}
    if provider is not None and str(provider) not in _KNOWN_PROVIDERS and "." not in str(provider):
        report(f"fs.s3a.aws.credentials.provider '{provider}' is not a Java class name",
               "fs.s3a.aws.credentials.provider",
               hint=f"use {SIMPLE_PROVIDER} (with access_key and secret_key) or "
                    "com.amazonaws.auth.InstanceProfileCredentialsProvider")
    if str(provider) == SIMPLE_PROVIDER and value(CONN_OPTION) is None:
        for key, found in keys.items():
            if found is None:
                report(f"the option '{key}' is required with {SIMPLE_PROVIDER}", key,
                       hint=f"set {key}, or name an Airflow connection of type aws with {CONN_OPTION}")
    elif (keys["access_key"] is None) != (keys["secret_key"] is None):
        missing = "secret_key" if keys["secret_key"] is None else "access_key"
        report(f"access_key and secret_key go together: '{missing}' is missing", missing)
    props = value("hadoop_s3_properties")
    if props is not None and not isinstance(props, Mapping):
        report("hadoop_s3_properties must be a map of Hadoop settings", "hadoop_s3_properties",
               hint='hadoop_s3_properties { "fs.s3a.connection.maximum" = "50" }')
    conn = value(CONN_OPTION)
    if conn is not None and (not isinstance(conn, str) or not conn.strip()):
        report(f"{CONN_OPTION} must name an Airflow connection of type aws", CONN_OPTION)


def check(plugin: PluginConfig, job: JobConfig) -> list[Problem]:
    """The file options' checks, then the S3 options of the block (or of each ``tables_configs`` item)."""
    return check_with_store(plugin, job, _s3_problems)
