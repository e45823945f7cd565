"""ObsFile: Huawei OBS through its S3-compatible API (:mod:`.stores`: ``bucket = "obs://name"``,
``endpoint``, ``access_key``, ``access_secret``; LocalFile's file options)."""

from __future__ import annotations

from .connector import ObjectStoreFile
from .stores import OBS


class ObsFile(ObjectStoreFile):
    name = "ObsFile"
    spec = OBS
    dialect = OBS.dialect
    option_spec = OBS.options
    description = "Reads or writes text, csv, json, parquet and orc objects in a Huawei OBS bucket (its S3 API)."


CONNECTOR = ObsFile()
