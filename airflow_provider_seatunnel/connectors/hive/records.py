"""The Hive sink's slot records, sealed and contained (:mod:`...spi.journals`).

A slot's ``journal.json`` (and ``committed.json``, the journal renamed) and its ``token-<n>`` files
live under the table's location, on the table's file system. Each is sealed with the table's journal
key and bound to its path relative to the location:

* a table on the local file system (``file:``) keeps its key in
  ``<location>/.seatunnel-commits/.journal-key`` (0600, the directory 0700);
* a table on HDFS (no file modes the provider can rely on) uses a key derived from the
  ``[seatunnel] journal_key`` setting and the location; unset, the sink refuses to act on a record.

A journal is checked before any step runs (:func:`check_journal`): it is the journal of this slot's
table (the metastore's name, location and the statements' table names match), its staged files lie
in the slot's staging, the files it publishes and the entries it sets aside lie in the table's
location or a partition location the metastore gives for that table, the trash in the slot's, and
new partitions in the table's location. A record that fails is refused
(:class:`~...spi.journals.TamperedRecord`): nothing in it is acted on.
"""

from __future__ import annotations

import posixpath
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any
from urllib.parse import urlparse

from ... import settings
from ...spi import journals
from .store import Store, join
from .tables import describe, partition_location, partitions

if TYPE_CHECKING:
    from .slots import Slot

TamperedRecord = journals.TamperedRecord
COMMITS_DIR = ".seatunnel-commits"
STAGING_DIR = ".seatunnel-staging"


def location_key(location: str) -> bytes:
    """The journal key of the table at ``location`` (see the module docstring)."""
    parsed = urlparse(location)
    if (parsed.scheme or "file") == "file":
        return journals.local_key(join(parsed.path, COMMITS_DIR))
    return journals.derived_key(settings.value(settings.JOURNAL_KEY), location.rstrip("/"),
                                f"the Hive table at {location}")


def name_of(location: str, uri: str) -> str:
    """The name a record is sealed under: its path relative to the table's location."""
    base = location.rstrip("/") + "/"
    if not uri.startswith(base):
        raise TamperedRecord(f"the record {uri} is not under the table's location {location}")
    return uri[len(base):]


def seal(location: str, uri: str, body: Mapping[str, Any]) -> dict[str, Any]:
    return journals.seal(body, location_key(location), name_of(location, uri))


def read(store: Store, location: str, uri: str, sealed_as: str | None = None) -> dict[str, Any] | None:
    """The body of the sealed record at ``uri`` (None when there is none); ``sealed_as``: the record
    it was renamed from (a marker is its journal renamed)."""
    try:
        record = store.read_json(uri)
    except ValueError as e:
        raise TamperedRecord(f"refusing the commit record {uri}: it is not JSON ({e})") from e
    if record is None:
        return None
    return journals.unseal(record, location_key(location), name_of(location, sealed_as or uri), uri)


def _inside(root: str, uri: Any, where: str) -> str:
    return journals.key_inside(root.rstrip("/"), uri, where) if isinstance(uri, str) and uri else \
        journals.key_inside(root, "", where)


def _published_roots(spark: Any, record: Mapping[str, Any], slot: Slot, info: Any) -> list[str]:
    """Where the journal may publish: the location, and the metastore's partition locations of the
    partitions its staged files belong to (a partition may live outside the table's location)."""
    roots = [slot.location]
    staging = slot.staging_dir(int(record["token"])).rstrip("/") + "/"
    existing = partitions(spark, info) if info.partition_columns else set()
    for src, _ in record["moves"]:
        directory = posixpath.dirname(str(src)[len(staging):])
        if directory in existing:
            roots.append(partition_location(spark, info, directory))
    return roots


def check_journal(spark: Any, slot: Slot, record: Mapping[str, Any], where: str) -> None:
    """:class:`TamperedRecord` unless every table and path ``record`` names is this slot's (see the module)."""
    try:
        token = int(record["token"])
        info = describe(spark, *str(record["target"]).split(".", 1))
    except (KeyError, TypeError, ValueError) as e:
        raise TamperedRecord(f"refusing the commit record {where}: it names no valid table or token ({e})") from e
    if info.location.rstrip("/") != slot.location.rstrip("/") or record.get("qualified") != info.qualified \
            or record.get("database") != info.database \
            or record.get("staging_table") != slot.staging_table(info.database, token):
        raise TamperedRecord(f"refusing the commit record {where}: it names the table {record.get('target')}, not "
                             f"the table at {slot.location}; nothing in it was acted on")
    for key in ("moves", "drops", "adds"):
        value = record.get(key)
        if not isinstance(value, list) or not all(isinstance(p, list) and len(p) == 2 for p in value):
            raise TamperedRecord(f"refusing the commit record {where}: its {key} are not a list of pairs")
    roots = _published_roots(spark, record, slot, info)
    for src, dst in record["moves"]:
        _inside(slot.staging_dir(token), src, where)
        _inside_any(roots, dst, where)
        _not_bookkeeping(slot, dst, where)
    for entry, trashed in record["drops"]:
        _inside_any(roots, entry, where)
        _not_bookkeeping(slot, entry, where)
        _inside(slot.trash, trashed, where)
    for _, location in record["adds"]:
        _inside(slot.location, location, where)


def _inside_any(roots: list[str], uri: Any, where: str) -> None:
    for root in roots[:-1]:
        try:
            _inside(root, uri, where)
            return
        except TamperedRecord:
            continue
    _inside(roots[-1], uri, where)


def _not_bookkeeping(slot: Slot, uri: str, where: str) -> None:
    base = slot.location.rstrip("/") + "/"
    if uri.startswith(base) and uri[len(base):].split("/", 1)[0] in (COMMITS_DIR, STAGING_DIR):
        raise TamperedRecord(f"refusing the commit record {where}: it names the sink's bookkeeping ({uri}); "
                             "nothing in it was acted on")
