"""How an OssFile, CosFile or ObsFile block reads as S3File's settings.

Aliyun OSS, Tencent COS and Huawei OBS each offer an S3-compatible API. A block keeps SeaTunnel's
option names for its plugin; :func:`settings` maps them onto :class:`..files.s3options.S3Settings`
and S3File's code does the rest (S3A for the data, boto3 and the fenced commit for the driver):

========  ===================  ==========  =============  ==========================================
plugin    bucket               key id      secret         where the store is
========  ===================  ==========  =============  ==========================================
OssFile   ``oss://name``       access_key  access_secret  ``endpoint``
CosFile   ``cosn://name-appid`` secret_id  secret_key     ``region`` (``endpoint`` overrides)
ObsFile   ``obs://name``       access_key  access_secret  ``endpoint``
========  ===================  ==========  =============  ==========================================

Rules:

* The S3 endpoint: OSS's ``oss-<region>[-internal].aliyuncs.com`` (and ``oss-accelerate``) becomes
  the S3-compatible ``s3.oss-...aliyuncs.com``; COS's is ``cos.<region>.myqcloud.com``; OBS's
  endpoint is its S3 endpoint. Without a scheme it is https.
* The signing region: ``region`` when set, else the one the endpoint's host names
  (``oss-cn-hangzhou``, ``obs.cn-north-4``), else us-east-1.
* Addressing: virtual-hosted (``<bucket>.<endpoint>``), which the three stores require or
  recommend, except for an endpoint whose host is an IP address or ``localhost`` (a stand-in
  store), which gets path-style; ``hadoop_s3_properties``' ``fs.s3a.path.style.access`` wins.
* Credentials: both keys give S3A's ``SimpleAWSCredentialsProvider`` (with ``aws_session_token``,
  the temporary one); without keys S3A's and boto3's default chains look (environment...).
* boto3's default request checksums are off (``when_required``): some of these S3 APIs refuse
  them. The sink checks the store honours conditional writes before it writes.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import partial
from typing import Any
from urllib.parse import urlsplit

from ...spi.optionspec import OptionSpec, ParsedOptions
from ..files.optionspec import file_spec, object_store_options
from ..files.s3options import (
    DEFAULT_REGION,
    SIMPLE_PROVIDER,
    TEMPORARY_PROVIDER,
    Dialect,
    S3Settings,
    Traits,
    config_error,
    hadoop_properties,
    key_prefix,
)

#: a block's endpoint and signing region, from its options
Locate = Callable[[ParsedOptions], tuple[str | None, str | None]]


@dataclass(frozen=True)
class StoreSpec:
    """One plugin's option names and rules."""

    plugin: str
    scheme: str  # of ``bucket``
    key_id: str  # the option holding the access key id
    secret: str  # the option holding the secret key
    #: the options a sink and a source require beyond LocalFile's (path, file_format_type), as SeaTunnel does
    sink_requires: tuple[str, ...]
    source_requires: tuple[str, ...]
    locate: Locate
    place: str  # the option that says where the store is: endpoint or region
    example: str  # of its value

    @property
    def traits(self) -> Traits:
        return Traits(plugin=self.plugin, scheme=self.scheme, sdk_checksums=False, verify_conditional_writes=True)

    @property
    def dialect(self) -> Dialect:
        shared = ("bucket", self.key_id, self.secret, "endpoint", "region", "aws_session_token",
                  "hadoop_s3_properties")
        return Dialect(self.plugin, partial(settings, self), shared)

    @property
    def options(self) -> OptionSpec:
        """The plugin's options: its credential names, the other S3 settings and the file options."""
        return file_spec(*object_store_options(self.key_id, self.secret))

    def requires(self, sink: bool) -> tuple[str, ...]:
        return self.sink_requires if sink else self.source_requires


def _text(value: Any) -> str | None:
    """A string option's value, None when unset or blank."""
    text = str(value).strip() if value is not None else ""
    return text or None


def url(endpoint: str) -> str:
    """``endpoint`` with a scheme (https when it has none)."""
    return endpoint if re.match(r"(?i)^https?://", endpoint) else "https://" + endpoint


def host_of(endpoint: str) -> str:
    return (urlsplit(url(endpoint)).hostname or "").lower()


def is_stand_in(endpoint: str | None) -> bool:
    """Whether the endpoint's host is an IP address or ``localhost``: no virtual-hosted buckets there."""
    host = host_of(endpoint) if endpoint else ""
    if host == "localhost":
        return True
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


def _oss(o: ParsedOptions) -> tuple[str | None, str | None]:
    endpoint = _text(o["endpoint"])
    if endpoint is None:
        return None, None
    parts = urlsplit(url(endpoint))
    m = re.fullmatch(r"oss-([a-z0-9-]+?)(-internal)?\.aliyuncs\.com", host_of(endpoint))
    if m is None:
        return parts.geturl(), None
    netloc = "s3." + parts.netloc.lower()
    return parts._replace(netloc=netloc).geturl(), None if m.group(1) == "accelerate" else m.group(1)


def _cos(o: ParsedOptions) -> tuple[str | None, str | None]:
    region = _text(o["region"])
    endpoint = _text(o["endpoint"])
    if endpoint is not None:
        return url(endpoint), region
    return (f"https://cos.{region}.myqcloud.com" if region else None), region


def _obs(o: ParsedOptions) -> tuple[str | None, str | None]:
    endpoint = _text(o["endpoint"])
    if endpoint is None:
        return None, None
    m = re.fullmatch(r"obs\.([a-z0-9-]+)\.(?:myhuaweicloud|myhwclouds)\.com", host_of(endpoint))
    return url(endpoint), m.group(1) if m else None


OSS = StoreSpec("OssFile", "oss", "access_key", "access_secret",
                sink_requires=("bucket", "access_key", "access_secret", "endpoint"),
                source_requires=("bucket", "endpoint"), locate=_oss, place="endpoint",
                example="oss-cn-hangzhou.aliyuncs.com")
COS = StoreSpec("CosFile", "cosn", "secret_id", "secret_key",
                sink_requires=("bucket", "secret_id", "secret_key", "region"),
                source_requires=("bucket", "secret_id", "secret_key", "region"), locate=_cos, place="region",
                example="ap-guangzhou")
OBS = StoreSpec("ObsFile", "obs", "access_key", "access_secret",
                sink_requires=("bucket", "access_key", "access_secret", "endpoint"),
                source_requires=("bucket", "access_key", "access_secret", "endpoint"), locate=_obs,
                place="endpoint", example="obs.cn-north-4.myhuaweicloud.com")


def bucket_parts(spec: StoreSpec, value: Any) -> tuple[str, str]:
    """(bucket name, what follows it) of ``bucket`` (``oss://name``...: the plugin's scheme is required)."""
    text = str(value or "").strip()
    m = re.fullmatch(r"([A-Za-z0-9]+)://([^/\s]+)(/\S*)?", text)
    if m is None or m.group(1).lower() != spec.scheme:
        raise config_error(f"bucket {text!r} is not {spec.scheme}://<bucket name>", spec.plugin)
    return m.group(2), (m.group(3) or "").strip("/")


def settings(spec: StoreSpec, config: Mapping[str, Any]) -> S3Settings:
    """The S3 settings of a block (a table's options) of ``spec``'s plugin."""
    o = spec.options.run_time(config)
    props = hadoop_properties(o["hadoop_s3_properties"])
    endpoint, region = spec.locate(o)
    if endpoint is None:  # never AWS's endpoint for another store
        raise config_error(f"{spec.place} is required: it says where the store is (e.g. {spec.example})",
                           spec.plugin)
    access, secret = _text(o[spec.key_id]), _text(o[spec.secret])
    token = _text(o["aws_session_token"])
    provider = (TEMPORARY_PROVIDER if token else SIMPLE_PROVIDER) if access and secret else None
    style = props.get("fs.s3a.path.style.access")
    return S3Settings(
        bucket=bucket_parts(spec, o["bucket"])[0], prefix=key_prefix(o["path"], spec.plugin),
        endpoint=endpoint, region=_text(o["region"]) or props.get("fs.s3a.endpoint.region") or region
        or DEFAULT_REGION, path_style=style.lower() == "true" if style else is_stand_in(endpoint),
        provider=provider, access_key=access, secret_key=secret, session_token=token, properties=props,
        traits=spec.traits)
