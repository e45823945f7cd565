"""What reading a config consulted besides its own text: the files it included and the environment
variables it looked up.

The rule: while :func:`recording` is active, every included file the reader opens (or looked for
and did not find) and every environment variable looked up through :class:`RecordingEnviron` is
noted, so that a result derived from the config (the plan cache) can be checked against the same
inputs later. Nothing is recorded outside :func:`recording`; recording costs a dictionary write.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping
from contextvars import ContextVar
from dataclasses import dataclass, field

#: An environment variable that was looked up and not set.
UNSET = None


@dataclass
class Reads:
    """What one read of a config consulted.

    ``files``: the resolved path of each included file and its bytes (None: looked for, not found).
    ``env``: each environment variable looked up and its value (None: not set).
    ``whole_environment``: something iterated the environment, so any variable may matter."""

    files: dict[str, bytes | None] = field(default_factory=dict)
    env: dict[str, str | None] = field(default_factory=dict)
    whole_environment: bool = False


_current: ContextVar[Reads | None] = ContextVar("seatunnel_config_reads", default=None)


@contextlib.contextmanager
def recording() -> Iterator[Reads]:
    """Record what the config reader consults inside the ``with`` block (nested blocks record apart)."""
    reads = Reads()
    token = _current.set(reads)
    try:
        yield reads
    finally:
        _current.reset(token)


def file_read(path: str, data: bytes | None) -> None:
    """Note that the included file ``path`` (resolved) was read as ``data`` (None: not found)."""
    reads = _current.get()
    if reads is not None:
        reads.files[path] = data


class RecordingEnviron(Mapping[str, str]):
    """A read-only view of an environment that notes each variable looked up in the active :class:`Reads`."""

    def __init__(self, environ: Mapping[str, str]) -> None:
        self._environ = environ

    def _note(self, name: str) -> str | None:
        value = self._environ.get(name)
        reads = _current.get()
        if reads is not None and isinstance(name, str):
            reads.env[name] = value
        return value

    def __getitem__(self, name: str) -> str:
        value = self._note(name)
        if value is None:
            raise KeyError(name)
        return value

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and self._note(name) is not None

    def get(self, name: str, default: str | None = None) -> str | None:  # type: ignore[override]
        value = self._note(name)
        return default if value is None else value

    def __iter__(self) -> Iterator[str]:
        reads = _current.get()
        if reads is not None:
            reads.whole_environment = True
        return iter(self._environ)

    def __len__(self) -> int:
        return len(self._environ)
