"""LocalFile: text, csv, json, parquet, orc, xml and binary files on a local (or shared) file system.

**Source** (:mod:`.source`): the files under ``path``, a file or a directory walked recursively,
or under each ``tables_configs`` item's; hidden, empty and filtered-out files skipped, ``k=v``
directories as columns. Each table comes in exactly the parallelism the plan gives the source.
How each format is read and written: :mod:`..files.formats` and :mod:`..files.writing` (xml and binary:
:mod:`..files.documents`).

**Sink**, storage verbs (:class:`.sink.LocalSinkVerbs`) the engine's two-phase protocol runs, per
(run id, pipeline key, sink, table):

* taking the token (:class:`.sink.LocalCommitLog`) runs the save modes once per run, sink and
  target; ``stage`` (:mod:`.sink`) writes each table, as the engine hands it (at the parallelism
  the plan gives the sink: one file per non-empty partition), into a hidden staging directory, and
  returns the staged files with their final names.
* ``publish`` (:mod:`.commits`) is roll-forward: a journal naming every move, the renames, then the
  journal renamed to the commit marker. An attempt first settles earlier ones: a marker means the
  table is committed (nothing is written again), a journal without marker is finished, staging
  without journal is discarded. ``discard`` moves back what a started commit published. Every record
  is sealed by the target and every path a journal names checked to be the sink's own
  (:mod:`.records`); anything else is refused, never acted on.
* Readers: the source skips the files named by a pending journal of the target it reads (listing
  the journals before and after the files), so it never sees a commit that is in progress or was
  interrupted; other readers see its files appear one by one while it runs (a few renames) and,
  after a kill, until the retry finishes it.
* Fault points for restore trials (nothing happens in production): the write carries the
  ``sink.write`` fault, ``publish`` fires ``sink.move`` before each rename and ``sink.commit``
  between the last rename and the marker.

**STREAMING** (docs/streaming.md): ``path`` is read as a file stream (new files each micro-batch);
the engine writes each micro-batch through the verbs, the run id naming the batch, and
:func:`.commits.retire` drops the markers of the stream's earlier micro-batches.

Table placeholders (``${table_name}``...) and file name placeholders: :mod:`.placeholders`;
compile-time checks and schemas: :mod:`.checks`. Deviations from SeaTunnel are listed in
:data:`.options.DEVIATIONS`.
"""

from __future__ import annotations

from ...spi import (
    SINK,
    SOURCE,
    BatchSource,
    Capabilities,
    Connector,
    Lineage,
    RetiresCommits,
    SaveModes,
    SchemaInference,
    StreamingSource,
    TableLineage,
)
from ..files import checks, documents
from ..files.options import (
    CODECS,
    COMMITS_DIR,
    DEVIATIONS,
    FORMAT_SUFFIX,
    FORMATS,
    PENDING_DIR,
    STAGING_DIR,
)
from ..files.optionspec import FILE_SPEC
from ..files.placeholders import assets, table_assets
from . import commits, sink, source
from .sink import LocalSinkVerbs, handle_save_mode, save_mode
from .source import list_input_files, partition_keys, read, read_stream

__all__ = [
    "CODECS", "COMMITS_DIR", "CONNECTOR", "DEVIATIONS", "FORMATS", "FORMAT_SUFFIX", "PENDING_DIR",
    "STAGING_DIR", "LocalFile", "checks", "commits", "documents", "handle_save_mode",
    "list_input_files", "partition_keys", "read", "read_stream", "save_mode", "sink", "source",
]


class LocalFile(Connector, SchemaInference, Lineage, TableLineage, SaveModes, BatchSource,
                LocalSinkVerbs, StreamingSource, RetiresCommits):
    name = "LocalFile"
    #: a file stream: the DataFrame API only
    capabilities = Capabilities(sections=frozenset({SOURCE, SINK}), connect=True, connect_stream=True, committer=True,
                                inserts_only=True)
    option_spec = FILE_SPEC
    description = "Reads or writes text, csv, json, parquet, orc, xml and binary files."

    check = staticmethod(checks.check)
    schema = staticmethod(checks.schema)

    assets = staticmethod(assets)
    table_assets = staticmethod(table_assets)
    save_mode = staticmethod(save_mode)
    read = staticmethod(read)
    read_stream = staticmethod(read_stream)

CONNECTOR = LocalFile()
