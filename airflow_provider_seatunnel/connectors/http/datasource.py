"""The Http source as a PySpark Python data source (``pyspark.sql.datasource``): Spark plans the read as
any source's, one partition per reader. Run time only (imports PySpark).

The block's options (with the connection's, credentials included) travel in one option,
:data:`SPEC_OPTION`, whose name Spark's redaction rule matches: plans and the UI show it as
``*********(redacted)``. Each Python worker parses them again (:func:`.options.parse`).

* Batch: ``partitions()`` lays the work out over exactly ``parallelism`` partitions
  (:func:`layout`): the pages ``pageing.total_page_size`` fixes are dealt in contiguous runs; one
  request, or pages until a short one, go to the first partition and the others are empty.
  ``read()`` requests its pages in order (:mod:`.request`) and yields their rows (:mod:`.records`).
* Streaming: the offset is the time of the latest poll, in ms. ``latestOffset()`` moves it on when
  ``poll_interval_millis`` has passed since the previous poll (always on the first call of a run),
  so each micro-batch is one poll, laid out as a batch read.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pyspark.sql.datasource import DataSourceReader, DataSourceStreamReader, InputPartition

from ...spi.errors import RuntimeConfigError
from ...spi.specsource import SpecSource
from .options import HttpOptions, OptionError, parse
from .records import page_of
from .request import build, send
from .request import session as session_for

NAME = "seatunnel_http"
#: the option holding the spec: Spark's redaction rule (``secret``) hides its value in plans
SPEC_OPTION = "seatunnel.http.secret"
#: how a partition reads: one request, the listed pages, or pages from the first until a short one
ONCE, PAGES, UNTIL_SHORT, NOTHING = "once", "pages", "until_short", "nothing"


def checked(options: Mapping[str, Any]) -> HttpOptions:
    """The block's options, checked again (a hand-written plan skips the compiler)."""
    try:
        parsed = parse(options)
    except OptionError as e:
        raise e.at_run_time() from None
    if parsed.paging is not None and parsed.paging.page_type != "pagenumber":
        raise RuntimeConfigError("pageing.page_type Cursor is not supported by this package (use page numbers)")
    return parsed


@dataclass
class HttpPartition(InputPartition):
    """The work of one reader: ``kind`` (:data:`ONCE`, :data:`PAGES`, :data:`UNTIL_SHORT`,
    :data:`NOTHING`) and its page numbers (the first one for :data:`UNTIL_SHORT`)."""

    kind: str
    pages: list[int] = field(default_factory=list)


def deal(items: Sequence[int], readers: int) -> list[list[int]]:
    """``items`` in ``readers`` contiguous runs of near-equal size (some empty when items are few)."""
    size, extra = divmod(len(items), readers)
    out, start = [], 0
    for i in range(readers):
        end = start + size + (1 if i < extra else 0)
        out.append(list(items[start:end]))
        start = end
    return out


def layout(o: HttpOptions, readers: int) -> list[HttpPartition]:
    """Exactly ``readers`` partitions (see the module's docstring)."""
    readers = max(1, readers)
    rest = [HttpPartition(NOTHING) for _ in range(readers - 1)]
    if o.paging is None:
        return [HttpPartition(ONCE), *rest]
    pages = o.paging.pages
    if pages is None:
        return [HttpPartition(UNTIL_SHORT, [o.paging.start_page_number]), *rest]
    return [HttpPartition(PAGES, run) if run else HttpPartition(NOTHING) for run in deal(pages, readers)]


def read_partition(o: HttpOptions, part: HttpPartition) -> Iterator[tuple[Any, ...]]:
    """The rows of one partition's requests, page after page."""
    if part.kind == NOTHING:
        return
    with session_for(o) as session:
        if part.kind == ONCE:
            yield from page_of(o, send(o, build(o, None), session), f"{o.method} {o.label}").rows
            return
        assert o.paging is not None
        page = part.pages[0] if part.pages else o.paging.start_page_number
        todo = list(part.pages) if part.kind == PAGES else None
        while True:
            if todo is not None:
                if not todo:
                    return
                page = todo.pop(0)
            what = f" page {page}"
            result = page_of(o, send(o, build(o, page), session, what), f"{o.method} {o.label}{what}")
            yield from result.rows
            if todo is None:
                if result.size < o.paging.batch_size:
                    return
                page += 1


class HttpDataSource(SpecSource):
    """``spark.read.format("seatunnel_http")`` / ``spark.readStream...``, given the spec option."""

    format_name = NAME
    spec_option = SPEC_OPTION

    def reader(self, schema: Any) -> DataSourceReader:
        return _Reader(self.spec)

    def streamReader(self, schema: Any) -> DataSourceStreamReader:
        return _StreamReader(self.spec)


class _Reader(DataSourceReader):
    def __init__(self, spec: dict[str, Any]):
        self.spec = spec

    def partitions(self) -> Sequence[InputPartition]:
        return layout(checked(self.spec["options"]), int(self.spec["parallelism"]))

    def read(self, partition: InputPartition) -> Iterator[tuple[Any, ...]]:
        assert isinstance(partition, HttpPartition)
        yield from read_partition(checked(self.spec["options"]), partition)


class _StreamReader(DataSourceStreamReader):
    def __init__(self, spec: dict[str, Any]):
        self.spec = spec
        self.polled: int | None = None

    def initialOffset(self) -> dict:
        return {"poll": 0}

    def latestOffset(self, start: dict | None = None, limit: Any = None) -> dict:
        """A new poll when ``poll_interval_millis`` has passed since the last one (the first call of a
        run always polls); the offset never goes back (``start``: the last one Spark recorded)."""
        interval = checked(self.spec["options"]).poll_interval_ms
        now = max(int(time.time() * 1000), int((start or {}).get("poll", 0)) + 1)
        if self.polled is None or now - self.polled >= interval:
            self.polled = now
        return {"poll": self.polled}

    def partitions(self, start: dict, end: dict) -> Sequence[InputPartition]:
        if int(end.get("poll", 0)) <= int(start.get("poll", 0)):
            return []
        return layout(checked(self.spec["options"]), int(self.spec["parallelism"]))

    def read(self, partition: InputPartition) -> Iterator[tuple[Any, ...]]:
        assert isinstance(partition, HttpPartition)
        yield from read_partition(checked(self.spec["options"]), partition)

    def commit(self, end: dict) -> None:
        """Nothing to release: each poll is read when its micro-batch runs."""
