"""What a connector can do, as one frozen value the planner, the runtime and the Airflow layer read.

Every connector class has one :class:`Capabilities` (``Connector.capabilities``). Its author declares the
facts only the author knows, as data::

    class Echo(Connector):
        capabilities = Capabilities(sections=frozenset({TRANSFORM}), connect=True)

and the value the engine reads is completed once, when the class is defined, from the behaviour the class
implements (:func:`complete`): where it runs, whether it streams, commits exactly once, names the tables it
reads. Those four fields are never declared (a declaration cannot claim behaviour a class lacks); a subclass
without a declaration of its own keeps its base's facts. The engine reads this value for what a connector may
do; ``isinstance`` remains only where the engine is about to call a behaviour protocol's method.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from .contract import (
    SINK,
    SOURCE,
    TRANSFORM,
    BatchSource,
    ReadsTablesByName,
    Sink,
    StreamingSource,
    Transform,
)
from .twophase import StorageVerbs, is_two_phase

#: the behaviour that lets a plugin execute in each section
RUNS_AS: dict[str, tuple[type, ...]] = {SOURCE: (BatchSource,), TRANSFORM: (Transform,), SINK: (Sink, StorageVerbs)}


@dataclass(frozen=True)
class Capabilities:
    """What a connector reads, writes and needs.

    Declared by its author: ``sections`` are where a block may stand (it plans there; in a section it cannot
    run in, with a warning, and ``validate`` fails); ``exclusive_stream`` its streaming read position lives
    outside the checkpoint (a database's replication slot: one sink per pipeline); ``deletes`` as a sink it
    applies DELETE rows (others write them as plain rows, and the run says so); ``committer`` it publishes
    through a driver-side commit (a coordinator slot; ``Connector.has_committer`` may decide per block);
    ``connect`` its sink and transform run on a Spark Connect session (no driver JVM, no SparkContext, no
    py4j: the DataFrame API only); ``connect_stream`` its streaming source runs there too; ``inserts_only`` every
    row it emits is an INSERT (a file or table reader: no change rows, whatever its inputs carry);
    ``concurrent_tables`` as a :class:`.twophase.StorageVerbs` sink its verbs may run for several tables at once,
    from several threads (the engine then stages the tables of a multi-table input in parallel).

    From behaviour (:func:`complete`, never declared): ``runs_as`` the sections it can execute in;
    ``streams`` it reads STREAMING jobs; ``exactly_once`` it is a two-phase sink (:func:`.twophase.is_two_phase`);
    ``reads_tables_by_name`` it names the datasets it reads in its options (a query). Behaviour the engine
    calls (jars, session settings, per-input splits...) stays in the protocols of :mod:`.contract`.
    """

    sections: frozenset[str] = frozenset()
    exclusive_stream: bool = False
    deletes: bool = False
    committer: bool = False
    connect: bool = False
    connect_stream: bool = False
    inserts_only: bool = False
    concurrent_tables: bool = False
    runs_as: frozenset[str] = frozenset()
    streams: bool = False
    exactly_once: bool = False
    reads_tables_by_name: bool = False

    def can_run(self, kind: str) -> bool:
        """Whether the connector can execute as a ``kind`` (source, transform, sink)."""
        return kind in self.sections and kind in self.runs_as

    def can_stream(self, kind: str) -> bool:
        """Whether the connector can execute as a ``kind`` in a STREAMING job."""
        return self.can_run(kind) and (kind != SOURCE or self.streams)


def complete(declared: Capabilities, implementation: Any) -> Capabilities:
    """``declared`` with the fields behaviour gives filled from what ``implementation`` (a connector class or
    instance) implements; whatever the declaration said of them is replaced."""
    return dataclasses.replace(
        declared,
        runs_as=frozenset(kind for kind, behaviours in RUNS_AS.items() if _has(implementation, behaviours)),
        streams=_has(implementation, (StreamingSource,)),
        exactly_once=is_two_phase(implementation),
        reads_tables_by_name=_has(implementation, (ReadsTablesByName,)),
    )


def _has(implementation: Any, behaviours: tuple[type, ...]) -> bool:
    """Whether a connector class (or instance) implements one of the behaviour protocols."""
    if isinstance(implementation, type):
        return issubclass(implementation, behaviours)
    return isinstance(implementation, behaviours)
