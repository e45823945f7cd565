"""What every connector declares: its name, sections, options, identity; compile-time checks.

A connector subclasses :class:`Connector` and the capability protocols of
:mod:`.contract` it implements, and its module exposes one instance as ``CONNECTOR``::

    class Echo(Connector, Transform):
        name = "Echo"
        kinds = frozenset({TRANSFORM})
        required = ("field",)

        def apply(self, ctx, vertex, inputs):
            ...

    CONNECTOR = Echo()
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from ..config.errors import NOT_RUNNABLE
from .capabilities import Capabilities, derive
from .contract import SINK, SOURCE, TRANSFORM, ChangeEmitter, Vertex
from .optionspec import OptionSpec

if TYPE_CHECKING:
    from collections.abc import Mapping

    from ..config.errors import Problem
    from ..config.loader import JobConfig, PluginConfig

__all__ = ["NOT_RUNNABLE", "SINK", "SOURCE", "TRANSFORM", "Connector", "InsertOnly", "KnownPlugin", "exactly_one_of"]


class Connector:
    """A plugin the engine knows by name (any case).

    What it can do is one value, :attr:`capabilities` (:class:`.capabilities.Capabilities`), derived
    from the behaviour it implements and the flags below unless the class declares its own.
    ``kinds`` are the sections it may stand in; it runs in a section when it implements that
    section's behaviour (:data:`.capabilities.RUNS_AS`; others still plan, with a warning, and fail
    ``validate``). ``required`` lists options that must be set; ``identity`` the options that name
    its external data (a path, a table), from which pipeline task ids and stream state keys are
    derived; ``committer`` marks sinks that publish through a driver-side commit (a coordinator
    slot); ``stores_deletes`` sinks apply DELETE rows (others write them as plain rows, and the
    run says so); ``secrets`` are its option names whose values are credentials, kept out of
    identities, plans and logs beside the common ones (:data:`.secrets.SECRET_OPTIONS`).
    """

    name: ClassVar[str] = ""
    kinds: ClassVar[frozenset[str]] = frozenset()
    required: ClassVar[tuple[str, ...]] = ()
    identity: ClassVar[tuple[str, ...]] = ()
    committer: ClassVar[bool] = False
    stores_deletes: ClassVar[bool] = False
    secrets: ClassVar[frozenset[str]] = frozenset()
    #: a STREAMING source whose read position lives outside the pipeline's checkpoint (a database's
    #: replication slot, advanced when a micro-batch is recorded): one query may read it, so its
    #: pipeline may have one sink
    exclusive_stream: ClassVar[bool] = False
    #: runs on a Spark Connect session too (:mod:`.sessions`): needs no driver JVM, no SparkContext
    #: and no py4j, only the DataFrame API (and Python, on the driver or in Spark's tasks)
    connect: ClassVar[bool] = False
    #: its STREAMING source runs on a Spark Connect session too (reads through the DataFrame API only);
    #: its sink and transform run there whenever ``connect`` says so (a micro-batch is a batch)
    connect_stream: ClassVar[bool] = False
    description: ClassVar[str] = ""
    #: its options, declared once (:mod:`.optionspec`): a connector that declares a spec gets its compile-time
    #: option problems, ``required``, ``identity`` and ``secrets`` from it
    option_spec: ClassVar[OptionSpec | None] = None

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        spec = cls.__dict__.get("option_spec")
        if isinstance(spec, OptionSpec):
            cls.required = spec.required
            cls.identity = spec.identity
            cls.secrets = spec.secrets | cls.__dict__.get("secrets", frozenset())

    def check(self, plugin: PluginConfig, job: JobConfig) -> list[Problem]:
        """Compile-time problems of the block beyond its required options (none by default)."""
        return []

    def problems(self, plugin: PluginConfig, job: JobConfig) -> list[Problem]:
        """Every compile-time problem of the block: its spec's (or, without one, its missing required
        options), then :meth:`check`."""
        if self.option_spec is not None:
            return self.option_spec.problems(plugin, job) + self.check(plugin, job)
        found = [job.problem(f"the option '{key}' is required", plugin, key=None,
                             hint=f"set {key} = ... in the {plugin.name} block")
                 for key in self.required if not plugin.has(key)]
        found.extend(self.check(plugin, job))
        return found

    def connect_blocker(self, options: Mapping[str, Any]) -> str | None:
        """Why a block with these options cannot run on a Spark Connect session although the
        connector declares ``connect`` (None: it can), e.g. a database with no client here."""
        return None

    @property
    def capabilities(self) -> Capabilities:
        """What the connector can do, derived once (a class may declare ``capabilities = Capabilities(...)``)."""
        found = self.__dict__.get("_capabilities")
        if found is None:
            found = self.__dict__["_capabilities"] = derive(self)
        return found

    def can_run(self, kind: str) -> bool:
        """Whether this package can execute the plugin as a ``kind`` (source, transform, sink)."""
        return self.capabilities.can_run(kind)

    def can_stream(self, kind: str) -> bool:
        """Whether this package can execute the plugin as a ``kind`` in a STREAMING job."""
        return self.capabilities.can_stream(kind)

    def may_emit_changes(self, vertex: Vertex, inputs_change: bool) -> bool:
        """Whether rows other than INSERT can come out of ``vertex``: as the connector says
        (:class:`.contract.ChangeEmitter`), else a source may emit them and a transform passes
        on what its inputs carry."""
        if isinstance(self, ChangeEmitter):
            return bool(self.emits_changes(vertex, inputs_change))
        return inputs_change or vertex.kind == SOURCE

    def __repr__(self) -> str:
        return f"<{type(self).__name__} connector {self.name!r}>"

    def __eq__(self, other: Any) -> bool:
        return type(other) is type(self) and other.name == self.name

    def __hash__(self) -> int:
        return hash((type(self), self.name))


class KnownPlugin(Connector):
    """A SeaTunnel plugin this package knows by name but cannot run: jobs naming it plan with a
    warning and fail ``validate`` before any Spark starts."""

    def __init__(self, name: str, kinds: frozenset[str]):
        self.name = name  # type: ignore[misc]
        self.kinds = kinds  # type: ignore[misc]


class InsertOnly:
    """Mixin of a plugin whose rows are all INSERT (a file or table reader)."""

    def emits_changes(self, vertex: Vertex, inputs_change: bool) -> bool:
        return False


def exactly_one_of(plugin: PluginConfig, job: JobConfig, *groups: tuple[str, ...]) -> list[Problem]:
    """Problems unless exactly one of the option groups is set (a group lists fallback keys)."""
    present = [group[0] for group in groups if any(plugin.has(key) for key in group)]
    if len(present) == 1:
        return []
    names = ", ".join(group[0] for group in groups)
    what = "none of them is set" if not present else f"{' and '.join(present)} are all set"
    return [job.problem(f"exactly one of {names} must be set; {what}", plugin,
                        key=present[-1] if present else None, hint=f"keep one of {names}")]
