"""A file server (FTP, SFTP) as the store the object-store commit of :mod:`..files.storecommits` runs
on: listing, moves, deletes, and small JSON records changed only by compare-and-swap.

Keys are paths relative to the server's root (``a/b/c.csv``: no leading ``/``).

A file server has neither S3's conditional writes nor a lock the commit could hold. Both FTP and
SFTP rename directories with the server's ``rename(2)``, which fails when the target is a
directory that is not empty. That is the compare-and-swap here:

* a JSON record at key ``K`` is the directory ``K``; each version ``n`` of it is the directory
  ``K/<n, six digits>`` holding ``value.json``;
* writing version ``n`` builds ``K/.tmp-<random>/value.json`` and renames that directory to
  ``K/<n>``: atomic, and it fails when a version ``n`` exists (it is never empty). The newest
  version is the record; its number is the etag a conditional write names. Versions are never
  deleted while the record lives, so an overtaken writer always finds its ``n`` taken.

:meth:`FileStore.objects` shows a record as one key, ``K``, like S3 does.
"""

from __future__ import annotations

import json
import posixpath
import re
import uuid
from collections.abc import Iterable, Iterator
from typing import Any

from .bucket import Conflict, Versioned
from .s3options import Traits

VALUE = "value.json"
_VERSION = re.compile(r"\d{6}")


class FileStore:
    """The S3-style operations on a file server; subclasses give the primitives."""

    #: shown in messages and logs: ``sftp://user@host:port``
    name: str = ""
    #: the plugin and scheme messages name
    traits: Traits = Traits()
    #: the sink's own secret credential (password, private key), the fallback key of its commit
    #: records (:mod:`..files.storecommits`); None: the ``[seatunnel] journal_key`` setting is needed
    journal_secret: str | None = None

    def uri(self, key: str = "") -> str:
        """How messages show ``key``: ``sftp://user@host:port/key`` (no credentials)."""
        return f"{self.name}/{key}"

    # -- primitives (subclasses) --------------------------------------------------------------
    def entries(self, directory: str) -> list[tuple[str, bool, int]] | None:
        """(name, is a directory, size) of each entry of ``directory``; None when it does not exist."""
        raise NotImplementedError

    def mkdirs(self, directory: str) -> None:
        raise NotImplementedError

    def put(self, key: str, data: bytes) -> None:
        raise NotImplementedError

    def get(self, key: str) -> bytes | None:
        raise NotImplementedError

    def rename(self, src: str, dst: str) -> bool:
        """Rename; False when the server refused it (e.g. ``dst`` is a directory that is not empty)."""
        raise NotImplementedError

    def remove(self, key: str) -> None:
        """Delete a file (absent is fine)."""
        raise NotImplementedError

    def rmdir(self, directory: str) -> None:
        """Delete an empty directory (absent is fine)."""
        raise NotImplementedError

    def upload(self, local: str, key: str) -> None:
        raise NotImplementedError

    def download(self, key: str, local: str) -> None:
        raise NotImplementedError

    def close(self) -> None:
        return None

    def alive(self) -> bool:
        """Whether the connection still answers."""
        return False

    # -- the store -----------------------------------------------------------------------------
    def _walk(self, directory: str, found: list[tuple[str, bool, int]] | None = None) -> Iterator[tuple[str, int]]:
        for name, is_dir, size in sorted(found if found is not None else self.entries(directory) or ()):
            key = posixpath.join(directory, name) if directory else name
            if not is_dir:
                yield key, size
                continue
            inside = self.entries(key) or []
            version = _newest_of(inside)
            if version is not None:  # a JSON record: one key
                yield key, version[1]
            else:
                yield from self._walk(key, inside)

    def objects(self, prefix: str) -> Iterator[tuple[str, int]]:
        """(key, size) of every file (and record) whose key starts with ``prefix``."""
        directory = prefix.rstrip("/") if prefix.endswith("/") else posixpath.dirname(prefix)
        for key, size in self._walk(directory):
            if key.startswith(prefix):
                yield key, size

    def size(self, key: str) -> int | None:
        found = self.entries(posixpath.dirname(key))
        for name, is_dir, size in found or ():
            if name == posixpath.basename(key):
                return None if is_dir and self._newest(key) is None else size
        return None

    def copy(self, src: str, dst: str) -> None:
        """Publish ``src`` as ``dst``: a rename on the server (an existing ``dst`` is replaced, as
        SeaTunnel's file sinks replace a file of the same name). Without ``src`` it fails and
        changes nothing: a commit rolled forward finds ``dst`` in place."""
        if self.size(src) is None:  # moved already (a commit rolled forward): dst is the data
            raise FileNotFoundError(f"{self.name}: {src} is gone")
        self.mkdirs(posixpath.dirname(dst))
        if self.size(dst) is not None:
            self.remove(dst)
        if not self.rename(src, dst):
            raise OSError(f"{self.name}: could not rename {src} to {dst}")

    def delete(self, keys: Iterable[str]) -> None:
        for key in keys:
            if self._newest(key) is not None:
                self.delete_prefix(key + "/")
                self.rmdir(key)
            else:
                self.remove(key)

    def delete_prefix(self, prefix: str) -> None:
        """Delete everything under the directory ``prefix`` (with a trailing '/'), itself too."""
        directory = prefix.rstrip("/")
        for name, is_dir, _ in self.entries(directory) or ():
            path = posixpath.join(directory, name)
            if is_dir:
                self.delete_prefix(path + "/")
            else:
                self.remove(path)
        self.rmdir(directory)

    # -- records -------------------------------------------------------------------------------
    def _newest(self, key: str) -> tuple[int, int] | None:
        """(version, size) of the newest version of the record ``key``; None when it is none."""
        return _newest_of(self.entries(key) or [])

    def read_json(self, key: str) -> Versioned | None:
        newest = self._newest(key)
        if newest is None:
            return None
        data = self.get(posixpath.join(key, f"{newest[0]:06d}", VALUE))
        if data is None:  # deleted while read
            return None
        return Versioned(json.loads(data.decode("utf-8")), str(newest[0]))

    def write_json(self, key: str, value: dict[str, Any], etag: str | None) -> str:
        """Write version ``etag + 1`` (1 when ``etag`` is None) of the record; :class:`Conflict`
        when that version exists already (another writer won)."""
        version = int(etag) + 1 if etag is not None else 1
        if etag is None and self._newest(key) is not None:
            raise Conflict(key)
        tmp = posixpath.join(key, f".tmp-{uuid.uuid4().hex}")
        self.mkdirs(tmp)
        self.put(posixpath.join(tmp, VALUE), json.dumps(value, sort_keys=True).encode("utf-8"))
        if not self.rename(tmp, posixpath.join(key, f"{version:06d}")):
            self.remove(posixpath.join(tmp, VALUE))
            self.rmdir(tmp)
            raise Conflict(key)
        return str(version)


def _newest_of(entries: list[tuple[str, bool, int]]) -> tuple[int, int] | None:
    versions = [(int(n), s) for n, is_dir, s in entries if is_dir and _VERSION.fullmatch(n)]
    return max(versions) if versions else None
