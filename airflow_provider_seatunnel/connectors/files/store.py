"""The store a file sink's fenced commit and a file source's listing run on: the operations
:mod:`.storecommits`, :mod:`.storesink` and :mod:`.storesource` use, whatever holds the files.

An S3-compatible bucket (:class:`.bucket.Bucket`: S3File, OssFile, CosFile, ObsFile) and a file
server's directory tree (:class:`.filestore.FileStore`: FtpFile, SftpFile, HdfsFile) implement
it. Every store gives the commit one compare-and-swap: :meth:`Store.write_json` succeeds only
while the object is still the version read (or still absent), else raises
:class:`.bucket.Conflict`; the attempt fence and the commit records stand on that alone."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any, Protocol

from .bucket import Versioned
from .s3options import Traits


class Store(Protocol):
    """Keys (``/``-separated, relative to the store's root) holding bytes, listed by prefix."""

    #: the plugin and URI scheme messages name
    traits: Traits
    #: the sink's own secret credential, the fallback key of its authenticated commit records
    journal_secret: str | None

    def uri(self, key: str = "") -> str:
        """How messages show ``key`` (no credentials)."""
        ...

    def objects(self, prefix: str) -> Iterator[tuple[str, int]]:
        """(key, size) of every object under ``prefix``."""
        ...

    def size(self, key: str) -> int | None:
        """The size of ``key``, None when it does not exist."""
        ...

    def copy(self, src: str, dst: str) -> None:
        """``dst`` becomes a copy of ``src`` (replacing it)."""
        ...

    def delete(self, keys: Iterable[str]) -> None:
        """Delete ``keys`` (absent ones are no error)."""
        ...

    def delete_prefix(self, prefix: str) -> None:
        """Delete every object under ``prefix``."""
        ...

    def read_json(self, key: str) -> Versioned | None:
        """A JSON object and its version, None when it does not exist."""
        ...

    def write_json(self, key: str, value: dict[str, Any], etag: str | None) -> str:
        """Write ``value`` if ``key`` is still version ``etag`` (None: still absent); the new
        version. Raises :class:`.bucket.Conflict` when it is not."""
        ...
