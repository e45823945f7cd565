"""S3File: text, csv, json, parquet and orc objects in an S3 bucket (or any S3-compatible store).

The file options are LocalFile's (formats, names, partitions, sink columns, codecs, header rows,
filters: :mod:`..files`); ``bucket`` (``s3a://name``), ``path`` (a key prefix), the endpoint
and the credentials are S3File's (:mod:`..files.s3options`). Spark reads and writes the objects through
Hadoop's S3A; the driver lists, copies and fences them with boto3.

**Source** (:mod:`..files.storesource`): the objects under ``path``, skipping the sink's bookkeeping and the
objects of a commit in progress or interrupted.

**Sink**: ``prepare`` (:mod:`..files.storesink`) applies the save modes once per run, takes an attempt token
from the slot's fence object and writes each table into ``<path>/.seatunnel-staging/<slot>/token-<n>/``;
``commit`` (:mod:`..files.storecommits`) records the commit in the fence by compare-and-swap (S3's conditional
writes: no rename, no lock), then copies the staged objects to their final keys and marks the
commit done. A killed commit is rolled forward by the next attempt; an overtaken attempt raises
``Superseded``. Not in STREAMING (no file stream on S3 here).

Plugins of stores with an S3 API (OssFile, CosFile, ObsFile: :mod:`..objectstores`) subclass
:class:`..files.onstore.S3Compatible` with their own ``dialect``: how their blocks read as S3 settings.
"""

from __future__ import annotations

from ..files.onstore import OnStoreFile, S3Compatible

__all__ = ["CONNECTOR", "OnStoreFile", "S3File"]


class S3File(S3Compatible):
    """The S3File plugin: :class:`..files.onstore.S3Compatible` with S3's own dialect."""


CONNECTOR = S3File()
