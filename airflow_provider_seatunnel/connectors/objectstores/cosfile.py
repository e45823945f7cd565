"""CosFile: Tencent COS through its S3-compatible API (:mod:`.stores`: ``bucket = "cosn://name-appid"``,
``region``, ``secret_id``, ``secret_key``; LocalFile's file options)."""

from __future__ import annotations

from .connector import ObjectStoreFile
from .stores import COS


class CosFile(ObjectStoreFile):
    name = "CosFile"
    spec = COS
    dialect = COS.dialect
    option_spec = COS.options
    description = "Reads or writes text, csv, json, parquet and orc objects in a Tencent COS bucket (its S3 API)."


CONNECTOR = CosFile()
