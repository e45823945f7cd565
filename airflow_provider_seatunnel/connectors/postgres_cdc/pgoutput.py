"""PostgreSQL's ``pgoutput`` logical decoding messages (protocol version 1), parsed into row changes.

A transaction is ``B`` (begin: its commit LSN), then ``R`` (a relation's schema, sent before its
first change in a decoding session), ``I``/``U``/``D`` (a row inserted, updated, deleted, each a
tuple of column values in text form: ``n`` null, ``u`` an unchanged TOASTed value that was not
sent, ``t`` text), then ``C`` (commit). :func:`transactions` groups the messages into
:class:`Transaction` values; :func:`changes` turns one into rows with SeaTunnel's row kinds: an
insert is +I, an update -U (when the old row was sent: ``REPLICA IDENTITY FULL``, or a changed key)
then +U, a delete -D (the key columns, or the whole row with ``REPLICA IDENTITY FULL``).
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field

INSERT, UPDATE_BEFORE, UPDATE_AFTER, DELETE = 0, 1, 2, 3
#: a TOASTed value the change did not carry (unchanged); the reader reports it
UNCHANGED = object()


def lsn_int(text: str) -> int:
    """``'16/B374D848'`` -> the 64-bit position."""
    high, _, low = text.partition("/")
    return (int(high, 16) << 32) + int(low, 16)


def lsn_text(value: int) -> str:
    return f"{value >> 32:X}/{value & 0xFFFFFFFF:X}"


@dataclass
class Relation:
    oid: int
    namespace: str
    name: str
    columns: list[str]
    types: list[str] = field(default_factory=list)  # "<type oid>:<type modifier>" per column

    @property
    def qualified(self) -> str:
        return f"{self.namespace}.{self.name}"


@dataclass
class Transaction:
    commit_lsn: int
    xid: int
    changes: list[tuple[Relation, str, list | None, list | None]] = field(default_factory=list)


class _Reader:
    def __init__(self, data: bytes):
        self.data, self.pos = data, 0

    def byte(self) -> str:
        value = chr(self.data[self.pos])
        self.pos += 1
        return value

    def unpack(self, fmt: str) -> tuple:
        values = struct.unpack_from(fmt, self.data, self.pos)
        self.pos += struct.calcsize(fmt)
        return values

    def string(self) -> str:
        end = self.data.index(b"\x00", self.pos)
        value = self.data[self.pos:end].decode("utf-8")
        self.pos = end + 1
        return value

    def tuple_data(self) -> list:
        (count,) = self.unpack(">h")
        values: list = []
        for _ in range(count):
            kind = self.byte()
            if kind == "n":
                values.append(None)
            elif kind == "u":
                values.append(UNCHANGED)
            else:  # "t" text ("b" binary is never asked for)
                (length,) = self.unpack(">i")
                values.append(self.data[self.pos:self.pos + length].decode("utf-8"))
                self.pos += length
        return values


def transactions(messages: Iterable[bytes], relations: dict[int, Relation]) -> Iterator[Transaction]:
    """Whole transactions of a decoding session's messages (``relations`` is filled as ``R`` arrive)."""
    current: Transaction | None = None
    for message in messages:
        r = _Reader(bytes(message))
        kind = r.byte()
        if kind == "B":
            final_lsn, _ts, xid = r.unpack(">qqi")
            current = Transaction(final_lsn, xid)
        elif kind == "C":
            if current is not None:
                yield current
            current = None
        elif kind == "R":
            (oid,) = r.unpack(">i")
            namespace, name = r.string(), r.string()
            r.byte()  # replica identity
            (count,) = r.unpack(">h")
            columns, types = [], []
            for _ in range(count):
                r.byte()  # flags
                columns.append(r.string())
                type_oid, modifier = r.unpack(">ii")
                types.append(f"{type_oid}:{modifier}")
            relations[oid] = Relation(oid, namespace or "public", name, columns, types)
        elif kind in "IUD" and current is not None:
            (oid,) = r.unpack(">i")
            relation = relations[oid]
            old = new = None
            tag = r.byte()
            if kind == "I":
                new = r.tuple_data()
            elif kind == "D":
                old = r.tuple_data()
            else:
                if tag in ("K", "O"):
                    old = r.tuple_data()
                    tag = r.byte()
                new = r.tuple_data()
            current.changes.append((relation, kind, old, new))
        # "T" (truncate), "Y" (type), "O" (origin), "M" (message): nothing to emit


def changes(tx: Transaction, columns: list[str],
            names: Callable[[Relation], Sequence[str | None]] | None = None) -> Iterator[tuple[list, int]]:
    """The rows of ``tx`` as (values in ``columns`` order, row kind). ``names`` gives the stream's name of
    each column of a relation (None: left out; default: the relation's own names). A value the change
    did not carry (an unchanged TOASTed one) is :data:`UNCHANGED`."""
    for _relation, values, kind in relation_changes(tx, lambda _: columns, names):
        yield values, kind


def relation_changes(tx: Transaction, columns_of: Callable[[Relation], list[str] | None],
                     names: Callable[[Relation], Sequence[str | None]] | None = None
                     ) -> Iterator[tuple[Relation, list, int]]:
    """The rows of ``tx`` as (relation, values in ``columns_of(relation)`` order, row kind): the rows of
    every table of a publication; a relation whose ``columns_of`` is None is skipped."""
    for relation, kind, old, new in tx.changes:
        columns = columns_of(relation)
        if columns is None:
            continue
        own = relation.columns if names is None else names(relation)
        index = {name: i for i, name in enumerate(own) if name is not None}
        if kind == "I":
            yield relation, _ordered(new, index, columns), INSERT
        elif kind == "U":
            if old is not None:
                yield relation, _ordered(old, index, columns), UPDATE_BEFORE
            yield relation, _ordered(new, index, columns), UPDATE_AFTER
        else:
            yield relation, _ordered(old, index, columns), DELETE


def _ordered(values: list | None, index: dict[str, int], columns: list[str]) -> list:
    """A tuple's values in ``columns`` order (a column the tuple lacks: None)."""
    assert values is not None
    return [values[index[c]] if c in index and index[c] < len(values) else None for c in columns]
