"""Connections to HBase's Thrift 1 gateway (``happybase`` over ``thriftpy2``, the package's extra ``hbase``)
and what their errors mean: an unreachable gateway or a region moving is transient, a table or family that
does not exist is a configuration error. Messages name the gateway, ``hbase-thrift://host:port``.

:class:`Hbase` wraps the raw Thrift client with the few calls the connector makes: tables and families,
puts and deletes in batches, atomic counters, ``checkAndPut``, and scans read a page at a time.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from typing import Any

from ...spi.errors import PipelineError, RuntimeConfigError
from .options import Gateway

INSTALL_HINT = "the Hbase connector needs happybase: pip install 'airflow-provider-seatunnel[hbase]'"
#: milliseconds a gateway call may take
TIMEOUT_MS = 120_000


def _happybase() -> Any:
    try:
        import happybase
    except ImportError:
        raise RuntimeConfigError(INSTALL_HINT) from None
    return happybase


def _ttypes() -> Any:
    _happybase()
    import Hbase_thrift  # the module happybase loads from its Thrift IDL

    return Hbase_thrift


class Hbase:
    """One open connection to the gateway (see the module's docstring)."""

    def __init__(self, gateway: Gateway):
        happybase = _happybase()
        self.gateway = gateway
        last: Exception | None = None
        for host in gateway.hosts:
            try:
                self.connection = happybase.Connection(
                    host, gateway.port, timeout=TIMEOUT_MS, autoconnect=True,
                    transport="framed" if gateway.framed else "buffered",
                    protocol="compact" if gateway.compact else "binary")
                self.label = f"hbase-thrift://{host}:{gateway.port}"
                break
            except Exception as e:  # the next host of the quorum
                last = e
        else:
            raise PipelineError(f"cannot reach HBase's Thrift gateway at port {gateway.port} of "
                                f"{', '.join(gateway.hosts)}: {last}")
        self.client = self.connection.client
        self.t = _ttypes()

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.connection.close()

    # tables --------------------------------------------------------------------------------------

    def tables(self) -> set[str]:
        return {t.decode() for t in self.client.getTableNames()}

    def exists(self, table: str) -> bool:
        return table in self.tables()

    def families(self, table: str) -> set[str]:
        return {name.decode().rstrip(":") for name in self.client.getColumnDescriptors(table.encode())}

    def create(self, table: str, families: Sequence[str], max_versions: int = 1) -> bool:
        """Create ``table`` with ``families``; False when it exists already (another creator won)."""
        columns = [self.t.ColumnDescriptor(name=f"{f}:".encode(), maxVersions=max_versions) for f in families]
        try:
            self.client.createTable(table.encode(), columns)
        except self.t.AlreadyExists:
            return False
        return True

    def drop(self, table: str) -> None:
        with contextlib.suppress(self.t.IOError):
            self.client.disableTable(table.encode())
        self.client.deleteTable(table.encode())

    def regions(self, table: str) -> list[tuple[bytes, bytes]]:
        """The table's regions as (start key, end key), in key order (b"" is open)."""
        found = [(r.startKey or b"", r.endKey or b"") for r in self.client.getTableRegions(table.encode())]
        return sorted(found)

    # writes --------------------------------------------------------------------------------------

    def put_rows(self, table: str, rows: Sequence[tuple[bytes, list[tuple[bytes, bytes]]]], ts: int | None = None,
                 wal: bool = True, attributes: dict[bytes, bytes] | None = None) -> None:
        """Put each (row key, [(family:qualifier, value)]) with cell timestamp ``ts`` (None: the server's)."""
        if not rows:
            return
        batches = [self.t.BatchMutation(row=key, mutations=[self.t.Mutation(column=c, value=v, writeToWAL=wal)
                                                           for c, v in cells]) for key, cells in rows]
        if ts is None:
            self.client.mutateRows(table.encode(), batches, attributes or {})
        else:
            self.client.mutateRowsTs(table.encode(), batches, ts, attributes or {})

    def delete_rows(self, table: str, keys: Sequence[bytes], families: Sequence[str]) -> None:
        if keys:
            batches = [self.t.BatchMutation(row=k, mutations=[self.t.Mutation(isDelete=True, column=f.encode())
                                                             for f in families]) for k in keys]
            self.client.mutateRows(table.encode(), batches, {})

    def increment(self, table: str, row: bytes, column: bytes, by: int) -> int:
        return int(self.client.atomicIncrement(table.encode(), row, column, by))

    def check_and_put(self, table: str, row: bytes, column: bytes, expected: bytes | None, put: tuple[bytes, bytes]
                      ) -> bool:
        """Put ``put`` (column, value) in ``row`` only if ``column`` holds ``expected`` (None: absent), atomically."""
        mutation = self.t.Mutation(column=put[0], value=put[1])
        return bool(self.client.checkAndPut(table.encode(), row, column, expected, mutation, {}))

    def get(self, table: str, row: bytes) -> dict[bytes, bytes]:
        found = self.client.getRow(table.encode(), row, {})
        return {c: cell.value for c, cell in found[0].columns.items()} if found else {}

    # scans ---------------------------------------------------------------------------------------

    def scan(self, table: str, start: bytes = b"", stop: bytes = b"", columns: Sequence[bytes] = (),
             caching: int = 100, batch: int = -1) -> Iterator[tuple[bytes, dict[bytes, bytes]]]:
        """(row key, {family:qualifier: value}) of the rows in [start, stop), ``caching`` rows a round trip."""
        scan = self.t.TScan(startRow=start or None, stopRow=stop or None, columns=list(columns) or None,
                            caching=caching, batchSize=batch if batch > 0 else None)
        scanner = self.client.scannerOpenWithScan(table.encode(), scan, {})
        try:
            while True:
                results = self.client.scannerGetList(scanner, caching)
                if not results:
                    return
                for r in results:
                    yield r.row, {c: cell.value for c, cell in r.columns.items()}
        finally:
            with contextlib.suppress(Exception):
                self.client.scannerClose(scanner)


def error_of(e: BaseException, label: str, doing: str) -> PipelineError:
    """The connector's error for a gateway exception raised while ``doing``: a missing table or family is a
    configuration error (deterministic), the rest transient."""
    message = getattr(e, "message", None) or str(e) or type(e).__name__
    cause = f"{doing} at {label}: {str(message)[:1000]}"
    if "TableNotFoundException" in message or "NoSuchColumnFamilyException" in message or \
            "TableNotEnabledException" in message:
        return RuntimeConfigError(cause)
    return PipelineError(cause)


@contextlib.contextmanager
def connected(gateway: Gateway, doing: str) -> Iterator[Hbase]:
    """A connection, closed after the block; a gateway error in the block becomes :func:`error_of`'s."""
    hbase = Hbase(gateway)
    try:
        yield hbase
    except (PipelineError, RuntimeConfigError):
        raise
    except Exception as e:
        if isinstance(e, (AssertionError, KeyboardInterrupt)):
            raise
        raise error_of(e, hbase.label, doing) from None
    finally:
        hbase.close()
