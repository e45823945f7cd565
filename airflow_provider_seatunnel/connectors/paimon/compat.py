"""The four places the Paimon connector reaches into pypaimon's private API, each isolated here and
pinned by a test (tests/runtime/test_paimon.py::test_the_private_pypaimon_hooks_still_hold) that
fails when pypaimon changes it.

* :func:`with_commit_user`: a write builder whose commits carry the given ``commit_user``. pypaimon's
  public option (``commit.user-prefix``) only prefixes a random id, and exactly once needs the same
  user on every attempt of a run, so that a restore finds the run's snapshot by its user.
* :func:`written_as`: rows written with one row kind. pypaimon's only public way to give a row its
  kind is the ``rowkind.field`` table option, which stores the kind as a column of the table; the
  key-value writer asks :func:`pypaimon.write.row_kind.row_kinds` for every batch it is handed, so
  for the length of one ``write_arrow`` call (same thread) that function answers the given kind.
* the delete count of a written file (installed with :func:`written_as`): a primary-key data file's
  metadata must count its retract rows (DELETE and UPDATE_BEFORE), since a reader takes a split of one
  file that claims none as "raw convertible" and returns its rows without merging, DELETE rows
  included. pypaimon's key-value writer records 0 whatever the file holds, so a key inserted and
  deleted in one run (the DELETE then its only change) came back as a live row; the wrapped
  ``KeyValueDataWriter._write_data_to_file`` records the count of the rows it wrote.
* :func:`merged`: splits of a primary-key table read through the merge reader. pypaimon takes a split
  of one file without deleted rows as "raw convertible" and reads its rows as they are, row kinds
  ignored; its writer records ``delete_row_count = 0`` on files holding ``-D`` rows, so a key inserted
  and deleted in one write came back from such a file. The merge reader drops ``-U``/``-D`` rows.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from typing import Any

_KIND = threading.local()
_VALUE_KIND = "_VALUE_KIND"
RETRACT_KINDS = (1, 3)  # -U, -D: the kinds a file's delete count counts
_INSTALLED: list[bool] = []
_LOCK = threading.Lock()


def with_commit_user(builder: Any, commit_user: str) -> Any:
    """``builder`` (a pypaimon write builder) committing as ``commit_user``. Private pypaimon API:
    ``WriteBuilder._with_commit_user`` (2.1.0)."""
    return builder._with_commit_user(commit_user)


def retract_count(data: Any) -> int:
    """How many rows of ``data`` (an Arrow table with pypaimon's ``_VALUE_KIND`` column) retract a key."""
    import pyarrow as pa
    import pyarrow.compute as pc

    kinds = data.column(_VALUE_KIND)
    return int(pc.sum(pc.is_in(kinds, value_set=pa.array(RETRACT_KINDS, kinds.type))).as_py() or 0)


def _count_deletes() -> None:
    """Wrap ``KeyValueDataWriter._write_data_to_file`` so each file it adds to ``committed_files`` records
    its retract rows as ``delete_row_count`` (see the module docstring). Private pypaimon API (2.1.0)."""
    from pypaimon.write.writer.key_value_data_writer import KeyValueDataWriter

    original = KeyValueDataWriter._write_data_to_file

    def _write_data_to_file(self: Any, data: Any) -> None:
        before = len(self.committed_files)
        original(self, data)
        if len(self.committed_files) > before and _VALUE_KIND in data.schema.names:
            self.committed_files[-1].delete_row_count = retract_count(data)

    KeyValueDataWriter._write_data_to_file = _write_data_to_file


def _install() -> None:
    """Wrap ``pypaimon.write.row_kind.row_kinds`` and the key-value writer's file write once per process
    (see the module docstring)."""
    with _LOCK:
        if _INSTALLED:
            return
        _count_deletes()
        from pypaimon.write import row_kind

        original = row_kind.row_kinds

        def row_kinds(options: Any, data: Any) -> list[int]:
            kind = getattr(_KIND, "value", None)
            return [kind] * data.num_rows if kind is not None else original(options, data)

        row_kind.row_kinds = row_kinds
        _INSTALLED.append(True)


@contextlib.contextmanager
def written_as(kind: int) -> Iterator[None]:
    """Rows a key-value writer takes in this thread meanwhile get row kind ``kind`` (0 +I, 2 +U, 3 -D)."""
    _install()
    _KIND.value = kind
    try:
        yield
    finally:
        _KIND.value = None


def merged(table: Any, splits: list[Any]) -> list[Any]:
    """``splits`` of ``table`` read through the merge reader when the table has primary keys (see the module
    docstring). Private pypaimon API: ``DataSplit.raw_convertible`` (2.1.0)."""
    if table.is_primary_key_table:
        for split in splits:
            split.raw_convertible = False
    return splits
