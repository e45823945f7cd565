"""What the compiler knows of a plugin: its kinds, options and identity."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..config.errors import Problem
    from ..config.loader import JobConfig, PluginConfig

SOURCE, TRANSFORM, SINK = "source", "transform", "sink"

#: Option names whose values are secrets: kept out of identities, plans and logs.
SECRET_OPTIONS = frozenset({"password", "username", "user", "auth", "token", "secret", "access_key",
                            "secret_key", "passwd", "credential", "credentials"})


@dataclass(frozen=True)
class Connector:
    """A plugin the compiler knows by name.

    ``kinds`` are the sections it may stand in; ``runnable`` says whether this package
    can execute it (others still plan, with a warning, and fail ``validate``);
    ``required`` lists options that must be set; ``identity`` lists the options that
    name its external data (a path, a table), from which pipeline task ids are derived;
    ``committer`` marks sinks that publish through a driver-side commit (a coordinator
    slot in SeaTunnel's count); ``check`` is an optional compile-time validator.
    """

    name: str
    kinds: frozenset[str]
    runnable: bool = True
    required: tuple[str, ...] = ()
    identity: tuple[str, ...] = ()
    committer: bool = False
    check: Callable[[PluginConfig, JobConfig], list[Problem]] | None = field(default=None, compare=False)
    description: str = ""

    def problems(self, plugin: PluginConfig, job: JobConfig) -> list[Problem]:
        found = [job.problem(f"the option '{key}' is required", plugin, key=None,
                             hint=f"set {key} = ... in the {plugin.name} block")
                 for key in self.required if not plugin.has(key)]
        if self.check is not None:
            found.extend(self.check(plugin, job))
        return found


def exactly_one_of(plugin: PluginConfig, job: JobConfig, *groups: tuple[str, ...]) -> list[Problem]:
    """Problems unless exactly one of the option groups is set (a group lists fallback keys)."""
    present = [group[0] for group in groups if any(plugin.has(key) for key in group)]
    if len(present) == 1:
        return []
    names = ", ".join(group[0] for group in groups)
    what = "none of them is set" if not present else f"{' and '.join(present)} are all set"
    return [job.problem(f"exactly one of {names} must be set; {what}", plugin,
                        key=present[-1] if present else None, hint=f"keep one of {names}")]
