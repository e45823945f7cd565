"""What every connector declares: its name, sections, options, identity; compile-time checks.

A connector subclasses :class:`Connector` and the behaviour protocols of :mod:`.contract` it
implements, declares its :class:`.capabilities.Capabilities`, and its module exposes one instance as
``CONNECTOR``::

    class Echo(Connector, Transform):
        name = "Echo"
        capabilities = Capabilities(sections=frozenset({TRANSFORM}), connect=True)
        required = ("field",)

        def apply(self, ctx, vertex, inputs):
            ...

    CONNECTOR = Echo()
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from ..config.errors import NOT_RUNNABLE
from .capabilities import Capabilities, complete
from .contract import SINK, SOURCE, TRANSFORM, ChangeEmitter, Vertex
from .optionspec import OptionSpec

if TYPE_CHECKING:
    from collections.abc import Mapping

    from ..config.errors import Problem
    from ..config.loader import JobConfig, PluginConfig

__all__ = ["NOT_RUNNABLE", "SINK", "SOURCE", "TRANSFORM", "Connector", "KnownPlugin", "exactly_one_of"]


#: the class flags a connector declared before :class:`.capabilities.Capabilities`, and the field each became
FORMER_FLAGS = {"kinds": "sections", "committer": "committer", "stores_deletes": "deletes",
                "exclusive_stream": "exclusive_stream", "connect": "connect", "connect_stream": "connect_stream"}


class Connector:
    """A plugin the engine knows by name (any case).

    What it can do is one value, :attr:`capabilities` (:class:`.capabilities.Capabilities`): the class
    declares the facts (``capabilities = Capabilities(sections=..., deletes=True, ...)``) and the fields
    behaviour gives are completed from the protocols it implements when the class is defined.
    ``required`` lists options that must be set; ``identity`` the options that name its external data (a
    path, a table), from which pipeline task ids and stream state keys are derived; ``secrets`` are its
    option names whose values are credentials, kept out of identities, plans and logs beside the common
    ones (:data:`.secrets.SECRET_OPTIONS`).
    """

    name: ClassVar[str] = ""
    capabilities: ClassVar[Capabilities] = Capabilities()
    required: ClassVar[tuple[str, ...]] = ()
    identity: ClassVar[tuple[str, ...]] = ()
    secrets: ClassVar[frozenset[str]] = frozenset()
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
        flags = [f"{flag} -> {field}" for flag, field in FORMER_FLAGS.items()
                 if isinstance(cls.__dict__.get(flag), (bool, frozenset, set))]
        if flags:  # they would be read by nothing: the connector would silently plan nowhere
            raise TypeError(f"{cls.__name__} sets former class flags; declare them as capabilities = "
                            f"Capabilities(...) fields instead ({', '.join(flags)})")
        cls.capabilities = complete(cls.capabilities, cls)

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

    def has_committer(self, options: Mapping[str, Any]) -> bool:
        """Whether a sink block with these options publishes through a driver-side commit (SeaTunnel's
        aggregated committer, a coordinator slot): the declared ``committer``, unless the connector decides
        per block (Jdbc: only with ``is_exactly_once``)."""
        return self.capabilities.committer

    def can_run(self, kind: str) -> bool:
        """Whether this package can execute the plugin as a ``kind`` (source, transform, sink)."""
        return self.capabilities.can_run(kind)

    def can_stream(self, kind: str) -> bool:
        """Whether this package can execute the plugin as a ``kind`` in a STREAMING job."""
        return self.capabilities.can_stream(kind)

    def may_emit_changes(self, vertex: Vertex, inputs_change: bool) -> bool:
        """Whether rows other than INSERT can come out of ``vertex``: never if the connector declares
        ``inserts_only``; else as it says (:class:`.contract.ChangeEmitter`), else a source may emit them and a
        transform passes on what its inputs carry."""
        if self.capabilities.inserts_only:
            return False
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

    def __init__(self, name: str, sections: frozenset[str]):
        self.name = name  # type: ignore[misc]
        self.capabilities = complete(Capabilities(sections=sections), self)  # type: ignore[misc]


def exactly_one_of(plugin: PluginConfig, job: JobConfig, *groups: tuple[str, ...]) -> list[Problem]:
    """Problems unless exactly one of the option groups is set (a group lists fallback keys)."""
    present = [group[0] for group in groups if any(plugin.has(key) for key in group)]
    if len(present) == 1:
        return []
    names = ", ".join(group[0] for group in groups)
    what = "none of them is set" if not present else f"{' and '.join(present)} are all set"
    return [job.problem(f"exactly one of {names} must be set; {what}", plugin,
                        key=present[-1] if present else None, hint=f"keep one of {names}")]
