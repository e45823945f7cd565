"""What a connector can do, as one frozen value the planner, the runtime and the Airflow layer read.

Every connector has one :class:`Capabilities` (``Connector.capabilities``). By default it is derived
once from what the class implements (the behaviour protocols of :mod:`.contract` and
:mod:`.twophase`) and the few facts only its author knows (``kinds``, ``stores_deletes``,
``connect``...); a class may declare its own value instead (``capabilities = Capabilities(...)``).
The engine reads this value for what a connector may do (where it runs, whether it streams, applies
deletes, commits exactly once, runs on Spark Connect); ``isinstance`` remains only where the engine is
about to call a behaviour protocol's method.
"""

from __future__ import annotations

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

    ``sections`` are where a block may stand (it plans there); ``runs_as`` the sections it can execute
    in (it plans elsewhere with a warning and fails ``validate``); ``streams`` it reads STREAMING jobs;
    ``exclusive_stream`` its streaming read position lives outside the checkpoint (one sink per pipeline);
    ``deletes`` as a sink it applies DELETE rows (others write them as plain rows, and the run says so);
    ``exactly_once`` it is a two-phase sink (storage verbs the engine drives, :mod:`.twophase`, or its own
    ``prepare``/``commit``/``abort``); ``committer``
    it publishes through a driver-side commit (a coordinator slot; a :class:`.contract.CommitterFor` decides
    per block); ``connect``/``connect_stream`` it runs on a Spark Connect session (its sink and transform;
    its streaming source); ``reads_tables_by_name`` it names the datasets it reads in its options (a query).
    Behaviour the engine calls (jars, session settings, per-input splits...) stays in the protocols of
    :mod:`.contract`.
    """

    sections: frozenset[str] = frozenset()
    runs_as: frozenset[str] = frozenset()
    streams: bool = False
    exclusive_stream: bool = False
    deletes: bool = False
    exactly_once: bool = False
    committer: bool = False
    connect: bool = False
    connect_stream: bool = False
    reads_tables_by_name: bool = False

    def can_run(self, kind: str) -> bool:
        """Whether the connector can execute as a ``kind`` (source, transform, sink)."""
        return kind in self.sections and kind in self.runs_as

    def can_stream(self, kind: str) -> bool:
        """Whether the connector can execute as a ``kind`` in a STREAMING job."""
        return self.can_run(kind) and (kind != SOURCE or self.streams)


def derive(connector: Any) -> Capabilities:
    """The capabilities of a connector that declares none: from the behaviour it implements and its flags."""
    return Capabilities(
        sections=frozenset(connector.kinds),
        runs_as=frozenset(kind for kind, behaviours in RUNS_AS.items() if _has(connector, behaviours)),
        streams=_has(connector, (StreamingSource,)),
        exclusive_stream=bool(connector.exclusive_stream),
        deletes=bool(connector.stores_deletes),
        exactly_once=is_two_phase(connector),
        committer=bool(connector.committer),
        connect=bool(connector.connect),
        connect_stream=bool(connector.connect_stream),
        reads_tables_by_name=_has(connector, (ReadsTablesByName,)),
    )


def _has(connector: Any, behaviours: tuple[type, ...]) -> bool:
    """Whether the connector implements one of the behaviour protocols."""
    return isinstance(connector, behaviours)
