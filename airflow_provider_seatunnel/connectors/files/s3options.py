"""Reading an S3File block: the bucket and key prefix, the S3A settings Spark reads and writes
with, the boto3 client the driver commits with, and the jars S3A needs.

The file options (formats, codecs, names, partitions, save modes, filters) are LocalFile's
(:mod:`..files.options`); ``path`` is a key prefix inside ``bucket`` (``s3a://name``).

Credentials: ``access_key``/``secret_key`` (or ``access_secret``, the docs' name) (with
``fs.s3a.aws.credentials.provider``
``org.apache.hadoop.fs.s3a.SimpleAWSCredentialsProvider``, the provider taken when keys are given
and no provider is named), or an Airflow connection of type ``aws`` named by ``aws_conn_id``
(login, password, extra ``endpoint_url``/``region_name``/``aws_session_token``). Spark gets them
as per-bucket Hadoop settings (``fs.s3a.bucket.<name>.*``) set in the session's Hadoop
configuration when the block runs: never on a command line, never in a log.
"""

from __future__ import annotations

import glob
import logging
import os
import posixpath
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ...spi.errors import RuntimeConfigError
from .optionspec import S3_SPEC

if TYPE_CHECKING:
    from .store import Store

log = logging.getLogger("seatunnel.s3file")

CONN_OPTION = "aws_conn_id"
SIMPLE_PROVIDER = "org.apache.hadoop.fs.s3a.SimpleAWSCredentialsProvider"
TEMPORARY_PROVIDER = "org.apache.hadoop.fs.s3a.TemporaryAWSCredentialsProvider"
#: SeaTunnel's default provider (an AWS SDK v1 class) and what S3A on SDK v2 calls it
V1_PROVIDERS = {"com.amazonaws.auth.InstanceProfileCredentialsProvider":
                "org.apache.hadoop.fs.s3a.auth.IAMInstanceCredentialsProvider",
                "com.amazonaws.auth.EnvironmentVariableCredentialsProvider":
                "software.amazon.awssdk.auth.credentials.EnvironmentVariableCredentialsProvider"}
DEFAULT_REGION = "us-east-1"
SCHEMES = ("s3a", "s3", "s3n")

#: Hadoop's S3A at the version of PySpark's bundled Hadoop, and the AWS SDK v2 modules it uses
#: (the modules, not the 686 MB ``bundle`` hadoop-aws declares); netty, httpclient and the
#: logging jars come with Spark.
HADOOP_AWS_VERSION = "3.5.0"
AWS_SDK_VERSION = "2.35.4"
SDK_MODULES = (
    "s3", "sts", "s3-transfer-manager", "apache-client", "netty-nio-client", "aws-xml-protocol",
    "aws-query-protocol", "protocol-core", "arns", "profiles", "crt-core", "http-auth", "identity-spi",
    "http-auth-spi", "http-auth-aws", "http-auth-aws-eventstream", "checksums", "checksums-spi", "retries",
    "retries-spi", "sdk-core", "auth", "http-client-spi", "regions", "annotations", "utils", "utils-lite",
    "aws-core", "metrics-spi", "json-utils", "third-party-jackson-core", "endpoints-spi")
#: (group path, artifact, version) of every jar, in Maven's local repository layout
S3A_ARTIFACTS = (
    ("org/apache/hadoop", "hadoop-aws", HADOOP_AWS_VERSION),
    ("software/amazon/s3/analyticsaccelerator", "analyticsaccelerator-s3", "1.3.1"),
    ("software/amazon/eventstream", "eventstream", "1.0.1"),
    ("org/reactivestreams", "reactive-streams", "1.0.4"),
    *(("software/amazon/awssdk", m, AWS_SDK_VERSION) for m in SDK_MODULES),
)
S3A_CLASS = "org.apache.hadoop.fs.s3a.S3AFileSystem"


def config_error(message: str, plugin: str = "S3File") -> RuntimeConfigError:
    return RuntimeConfigError(f"{plugin}: {message}")


@dataclass(frozen=True)
class Traits:
    """What sets a plugin's store apart once its block is read: the plugin its messages name, the
    scheme of the URIs they show, and what the store's S3 API may lack. S3File's are the defaults;
    a store reached under its own plugin (OssFile...) has its own (:mod:`..objectstores`)."""

    plugin: str = "S3File"
    scheme: str = "s3"
    #: boto3's default request checksums (``x-amz-checksum-*``), which some S3 APIs refuse
    sdk_checksums: bool = True
    #: check that the store honours If-None-Match/If-Match on PutObject before a sink writes
    verify_conditional_writes: bool = False


@dataclass(frozen=True)
class S3Settings:
    """Where a block's objects are and how to reach them."""

    bucket: str
    prefix: str  # the key prefix of ``path``, without leading or trailing '/' ('' = the bucket's root)
    endpoint: str | None
    region: str
    path_style: bool
    provider: str | None
    access_key: str | None = field(default=None, repr=False)
    secret_key: str | None = field(default=None, repr=False)
    session_token: str | None = field(default=None, repr=False)
    properties: Mapping[str, str] = field(default_factory=dict, repr=False)
    traits: Traits = Traits()

    def uri(self, key: str) -> str:
        """The s3a URI of ``key``."""
        return f"s3a://{self.bucket}/{key}"

    def key(self, *parts: str) -> str:
        """A key under the prefix."""
        return posixpath.join(self.prefix, *parts) if self.prefix else posixpath.join(*parts)


def bucket_name(value: Any) -> str:
    """The bucket of ``bucket`` (``s3a://name``, ``s3://name`` or ``name``)."""
    text = str(value or "").strip()
    m = re.fullmatch(r"(?:([A-Za-z0-9]+)://)?([^/\s]+)/?", text)
    if not text or m is None or (m.group(1) and m.group(1).lower() not in SCHEMES):
        raise config_error(f"bucket {text!r} is not s3a://<bucket name>")
    return m.group(2)


def key_prefix(path: Any, plugin: str = "S3File") -> str:
    """``path`` as a key prefix: no leading or trailing '/', no '.' or '..' segments."""
    text = str(path or "").strip()
    if not text:
        raise config_error("path is required", plugin)
    parts = [p for p in text.split("/") if p]
    if any(p in (".", "..") for p in parts):
        raise config_error(f"path {text!r} may not hold '.' or '..' segments", plugin)
    return "/".join(parts)


def hadoop_properties(raw: Mapping[str, Any] | None) -> dict[str, str]:
    """``hadoop_s3_properties`` (the typed map, None when unset) as dotted Hadoop keys and string values."""
    return {str(k): str(v).lower() if isinstance(v, bool) else str(v) for k, v in _flatten(raw or {}).items()}


def _flatten(raw: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """HOCON reads ``fs.s3a.x = 1`` unquoted as nested maps: back to dotted keys."""
    out: dict[str, Any] = {}
    for key, value in raw.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping):
            out.update(_flatten(value, name + "."))
        else:
            out[name] = value
    return out


def settings(config: Mapping[str, Any]) -> S3Settings:
    """The S3 settings of a block (a table's options), typed by :data:`.optionspec.S3_SPEC`; the secret key
    is ``secret_key`` (SeaTunnel's code), else ``access_secret`` (its docs: the declared fallback)."""
    o = S3_SPEC.run_time(config)
    props = hadoop_properties(o["hadoop_s3_properties"])
    endpoint = o["fs.s3a.endpoint"] or props.get("fs.s3a.endpoint")
    endpoint = str(endpoint).strip() if endpoint else None
    access, secret = o["access_key"], o["secret_key"]
    token = o["aws_session_token"]
    provider = o["fs.s3a.aws.credentials.provider"] or props.get("fs.s3a.aws.credentials.provider")
    if provider is None and access:
        provider = TEMPORARY_PROVIDER if token else SIMPLE_PROVIDER
    provider = V1_PROVIDERS.get(str(provider), str(provider)) if provider else None
    region = str(o["region"] or props.get("fs.s3a.endpoint.region") or DEFAULT_REGION)
    path_style = props.get("fs.s3a.path.style.access")
    is_aws = endpoint is None or "amazonaws.com" in endpoint
    return S3Settings(
        bucket=bucket_name(o["bucket"]), prefix=key_prefix(o["path"]), endpoint=endpoint,
        region=region, path_style=(path_style.lower() == "true") if path_style else not is_aws,
        provider=provider, access_key=str(access) if access else None, secret_key=str(secret) if secret else None,
        session_token=str(token) if token else None, properties=props)


@dataclass(frozen=True)
class Dialect:
    """A plugin whose blocks run on S3File's code: how a block (a table's options) reads as
    :class:`S3Settings`, and which options a source's ``tables_configs`` item takes from its block
    when it does not set them. S3File's is :data:`S3`."""

    plugin: str
    settings: Callable[[Mapping[str, Any]], S3Settings]
    shared: tuple[str, ...]
    #: a store that is no S3 bucket (a file server: :mod:`..remotefile`) gives its own: how Spark
    #: reaches it (``(spark, settings)``), the driver's store (``settings -> store``), how a
    #: staged write lands in it (``(spark, writer, store, settings, key)``) and the URIs Spark
    #: reads its keys at (``(spark, store, settings, keys) -> URIs``). None: S3A and boto3.
    reach_with: Callable[[Any, Any], None] | None = None
    open_with: Callable[[Any], Store] | None = None
    stage_with: Callable[[Any, Any, Any, Any, str], None] | None = None
    inputs_with: Callable[[Any, Any, Any, list[str]], list[str]] | None = None

    def reach(self, spark: Any, s: Any) -> None:
        """Make the block's store readable and writable by Spark."""
        (self.reach_with or ensure_s3a)(spark, s)

    def open(self, s: Any) -> Store:
        """The driver's store of the block (a :class:`.bucket.Bucket` for S3)."""
        from .bucket import open_bucket

        return (self.open_with or open_bucket)(s)

    def stage(self, spark: Any, writer: Any, store: Any, s: Any, key: str) -> None:
        """Run Spark's ``writer`` so that its files land under ``key`` in the store."""
        if self.stage_with is not None:
            self.stage_with(spark, writer, store, s, key)
        else:
            writer.save(s.uri(key))

    def inputs(self, spark: Any, store: Any, s: Any, keys: list[str]) -> list[str]:
        """The URIs Spark reads ``keys`` at."""
        return self.inputs_with(spark, store, s, keys) if self.inputs_with is not None else [s.uri(k) for k in keys]


S3 = Dialect("S3File", settings, ("bucket", "fs.s3a.endpoint", "fs.s3a.aws.credentials.provider", "access_key",
                                  "secret_key", "access_secret", "aws_session_token", "region",
                                  "hadoop_s3_properties"))


# ---------------------------------------------------------------------------------------------
# Spark: S3A settings and jars
# ---------------------------------------------------------------------------------------------

def hadoop_settings(s: S3Settings) -> dict[str, str]:
    """The per-bucket S3A settings of a block: ``fs.s3a.bucket.<name>.*`` (so that blocks on other
    buckets keep theirs), ``hadoop_s3_properties`` last (they win)."""
    base = f"fs.s3a.bucket.{s.bucket}."
    out = {base + "path.style.access": "true" if s.path_style else "false", base + "endpoint.region": s.region}
    if s.endpoint:
        out[base + "endpoint"] = s.endpoint
        out[base + "connection.ssl.enabled"] = "false" if s.endpoint.startswith("http://") else "true"
    if s.provider:
        out[base + "aws.credentials.provider"] = s.provider
    if s.access_key:
        out[base + "access.key"] = s.access_key
    if s.secret_key:
        out[base + "secret.key"] = s.secret_key
    if s.session_token:
        out[base + "session.token"] = s.session_token
    for key, value in s.properties.items():
        if key.startswith("fs.s3a.") and not key.startswith("fs.s3a.bucket."):
            out[base + key[len("fs.s3a."):]] = value
        else:
            out[key] = value
    return out


def m2_repository() -> str:
    return os.path.join(os.path.expanduser("~"), ".m2", "repository")


def s3a_jars(env: Mapping[str, Any] | None = None) -> list[str]:
    """The S3A jars from Maven's local repository (``make test-deps`` fetches them); nothing when
    the job's ``env.spark.jars`` already names a hadoop-aws jar, or when they are not there (the
    run then says what is missing)."""
    named = [os.path.basename(j) for j in str((env or {}).get("spark.jars", "")).split(",") if j.strip()]
    if any(n.startswith("hadoop-aws") for n in named):
        return []
    jars = [os.path.join(m2_repository(), group, artifact, version, f"{artifact}-{version}.jar")
            for group, artifact, version in S3A_ARTIFACTS]
    return jars if all(os.path.isfile(j) for j in jars) else []


def missing_jars() -> list[str]:
    return [f"{g.replace('/', '.')}:{a}:{v}" for g, a, v in S3A_ARTIFACTS
            if not glob.glob(os.path.join(m2_repository(), g, a, v, f"{a}-{v}.jar"))]


def ensure_s3a(spark: Any, s: S3Settings) -> None:
    """Make ``s3a://`` usable for the block's bucket: S3A on the classpath (added to the driver's
    class loader and shipped to the executors when the session started without it, as a run
    started by the engine has it through ``spark.jars``), then the bucket's settings."""
    from py4j.protocol import Py4JError

    jvm = spark._jvm
    loader = jvm.java.lang.Thread.currentThread().getContextClassLoader()
    try:
        jvm.java.lang.Class.forName(S3A_CLASS, False, loader)
    except Py4JError:
        jars = s3a_jars()
        if not jars:
            raise config_error("Hadoop's S3A is not on Spark's classpath and its jars are not in "
                               f"{m2_repository()} (missing: {', '.join(missing_jars()[:3])}...): run "
                               "`make test-deps`, or add hadoop-aws and its AWS SDK jars to env spark.jars",
                               s.traits.plugin) from None
        for jar in jars:
            loader.addURL(jvm.java.io.File(jar).toURI().toURL())
            spark._jsc.sc().addJar(jar)
        log.info("%s: added Hadoop's S3A (%d jars) to Spark", s.traits.plugin, len(jars))
    conf = spark.sparkContext._jsc.hadoopConfiguration()
    for key, value in hadoop_settings(s).items():
        conf.set(key, value)


# ---------------------------------------------------------------------------------------------
# The driver's client
# ---------------------------------------------------------------------------------------------

def client(s: S3Settings) -> Any:
    """A boto3 S3 client for the block's bucket (keys given, else boto3's own credential chain)."""
    import boto3
    from botocore.config import Config

    checksums = {} if s.traits.sdk_checksums else {"request_checksum_calculation": "when_required",
                                                   "response_checksum_validation": "when_required"}
    kwargs: dict[str, Any] = {"region_name": s.region,
                              "config": Config(s3={"addressing_style": "path" if s.path_style else "auto"},
                                               retries={"max_attempts": 5, "mode": "standard"}, **checksums)}
    if s.endpoint:
        kwargs["endpoint_url"] = s.endpoint if "://" in s.endpoint else "https://" + s.endpoint
    if s.access_key and s.secret_key:
        kwargs.update(aws_access_key_id=s.access_key, aws_secret_access_key=s.secret_key)
        if s.session_token:
            kwargs["aws_session_token"] = s.session_token
    return boto3.client("s3", **kwargs)
