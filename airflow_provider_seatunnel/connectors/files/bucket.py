"""The driver's operations on a bucket (boto3): listing, copies, deletes, and small JSON objects
changed only by compare-and-swap.

An object store has no rename and no lock. What the sink's commit needs instead is S3's
conditional write: ``PutObject`` with ``If-None-Match: *`` creates an object only when it does
not exist, with ``If-Match: <etag>`` replaces it only when it is still the version read. A
write that loses the race fails (412 Precondition Failed, or 409 when two conditional writes
of one key overlap) and changes nothing: :class:`Conflict`. A store whose S3 API refuses the
headers (501 Not Implemented) fails the write with a configuration error; one that ignores them
is caught by :meth:`Bucket.verify_conditional_writes` where the plugin asks for it.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from .s3options import S3Settings, Traits, client, config_error


class Conflict(Exception):
    """A conditional write lost: the object changed (or appeared) since it was read."""


@dataclass(frozen=True)
class Versioned:
    """A JSON object as read: its content and the etag a conditional write names."""

    value: dict[str, Any]
    etag: str


def _code(error: Any) -> str:
    response = getattr(error, "response", None) or {}
    return str(response.get("Error", {}).get("Code", ""))


class Bucket:
    """One bucket through a boto3 client; ``traits`` name its plugin and URI scheme in messages."""

    def __init__(self, client: Any, name: str, traits: Traits | None = None, journal_secret: str | None = None):
        self.client, self.name = client, name
        self.traits = traits or Traits()
        #: the sink's own secret credential, the fallback key of its commit records (:mod:`.commits`)
        self.journal_secret = journal_secret

    def uri(self, key: str = "") -> str:
        """How messages show ``key`` (``s3://bucket/key``, ``oss://bucket/key``...)."""
        return f"{self.traits.scheme}://{self.name}/{key}"

    def objects(self, prefix: str) -> Iterator[tuple[str, int]]:
        """(key, size) of every object under ``prefix`` (a folder: give it a trailing '/')."""
        pages = self.client.get_paginator("list_objects_v2").paginate(Bucket=self.name, Prefix=prefix)
        for page in pages:
            for item in page.get("Contents", ()):
                yield str(item["Key"]), int(item["Size"])

    def size(self, key: str) -> int | None:
        """The size of ``key``, None when it does not exist."""
        try:
            return int(self.client.head_object(Bucket=self.name, Key=key)["ContentLength"])
        except Exception as e:
            if _code(e) in ("404", "NoSuchKey", "NotFound"):
                return None
            raise

    def copy(self, src: str, dst: str) -> None:
        """Server-side copy (S3 copies objects up to 5 GB in one call; boto3's managed copy splits larger ones)."""
        self.client.copy({"Bucket": self.name, "Key": src}, self.name, dst)

    def delete(self, keys: Iterable[str]) -> None:
        """Delete ``keys`` (absent ones are fine), a thousand per request."""
        batch: list[str] = []
        for key in keys:
            batch.append(key)
            if len(batch) == 1000:
                self._delete(batch)
                batch = []
        if batch:
            self._delete(batch)

    def _delete(self, keys: list[str]) -> None:
        result = self.client.delete_objects(Bucket=self.name,
                                            Delete={"Objects": [{"Key": k} for k in keys], "Quiet": True})
        errors = result.get("Errors") or []
        if errors:
            raise OSError(f"could not delete {len(errors)} object(s) of {self.uri()}, e.g. {errors[0]}")

    def delete_prefix(self, prefix: str) -> None:
        self.delete(key for key, _ in list(self.objects(prefix)))

    def read_json(self, key: str) -> Versioned | None:
        """A JSON object and its etag, None when it does not exist."""
        try:
            got = self.client.get_object(Bucket=self.name, Key=key)
        except Exception as e:
            if _code(e) in ("404", "NoSuchKey", "NotFound"):
                return None
            raise
        return Versioned(json.loads(got["Body"].read().decode("utf-8")), str(got["ETag"]))

    def write_json(self, key: str, value: dict[str, Any], etag: str | None) -> str:
        """Write ``value`` to ``key`` if it is still the version ``etag`` (None: if it does not
        exist); the new etag. Raises :class:`Conflict` when the condition fails."""
        condition = {"IfMatch": etag} if etag is not None else {"IfNoneMatch": "*"}
        body = json.dumps(value, sort_keys=True).encode("utf-8")
        try:
            put = self.client.put_object(Bucket=self.name, Key=key, Body=body, ContentType="application/json",
                                         **condition)
        except Exception as e:
            if _code(e) in ("PreconditionFailed", "412", "ConditionalRequestConflict", "409", "NoSuchKey", "404"):
                raise Conflict(key) from None
            if _code(e) in ("NotImplemented", "501"):
                raise self._unsupported(key, f"it answered {_code(e)}") from None
            raise
        return str(put["ETag"])

    def _unsupported(self, key: str, how: str) -> Exception:
        return config_error(f"the store behind {self.uri()} does not honour conditional writes (PutObject with "
                            f"If-None-Match/If-Match: {how} for {key}): the sink's commit needs them to fence "
                            "its attempts", self.traits.plugin)

    def verify_conditional_writes(self, folder: str) -> None:
        """Check that the store refuses a second create (``If-None-Match: *``) and a write naming
        another version (``If-Match``) of a probe object under ``folder``, then delete it: a store
        that ignored them would let two attempts both commit."""
        key = f"{folder}/.probe-{uuid.uuid4().hex}.json"
        try:
            self.write_json(key, {"probe": 1}, None)
            for etag in (None, '"0123456789abcdef0123456789abcdef"'):
                try:
                    self.write_json(key, {"probe": 2}, etag)
                except Conflict:
                    continue
                raise self._unsupported(key, "a write it should have refused succeeded")
        finally:
            self.delete([key])


def open_bucket(s: S3Settings) -> Bucket:
    """The bucket of a block's settings, through a boto3 client made from them."""
    return Bucket(client(s), s.bucket, s.traits, s.secret_key)
