"""OssFile: Aliyun OSS through its S3-compatible API (:mod:`.stores`: ``bucket = "oss://name"``,
``endpoint``, ``access_key``, ``access_secret``; LocalFile's file options)."""

from __future__ import annotations

from .connector import ObjectStoreFile
from .stores import OSS


class OssFile(ObjectStoreFile):
    name = "OssFile"
    spec = OSS
    dialect = OSS.dialect
    option_spec = OSS.options
    description = "Reads or writes text, csv, json, parquet and orc objects in an Aliyun OSS bucket (its S3 API)."


CONNECTOR = OssFile()
