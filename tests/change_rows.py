"""A change log that a shuffle would reorder: ten keys, each INSERTed, UPDATEd (before and after) and
DELETEd, the keys interleaved, read by one FakeSource reader. A sink planned at more writers than its
source gets them dealt over its partitions; a keyed sink must still deliver each key's changes in order.
``name`` holds the step (``s0`` .. ``s3``)."""

from __future__ import annotations

from collections.abc import Iterable

STEPS = ("INSERT", "UPDATE_BEFORE", "UPDATE_AFTER", "DELETE")
KEYS = 10


def fake_source(output: str = "f") -> str:
    """The FakeSource block (parallelism 1) giving the change log as ``output``."""
    rows = ", ".join(f'{{ kind = {kind}, fields = [{key}, "s{step}"] }}'
                     for step, kind in enumerate(STEPS) for key in range(KEYS))
    return (f'FakeSource {{ plugin_output = "{output}", parallelism = 1, '
            f'schema = {{ fields {{ id = bigint, name = string }} }}, rows = [{rows}] }}')


def steps_per_key(delivered: Iterable[tuple[object, str]]) -> dict[object, list[str]]:
    """``(key, name)`` pairs in delivery order -> each key's steps in that order."""
    out: dict[object, list[str]] = {}
    for key, name in delivered:
        out.setdefault(key, []).append(name)
    return out


def in_order(keyed: dict[object, list[str]]) -> bool:
    """Every key of the log delivered with its four steps in arrival order."""
    return len(keyed) == KEYS and all(steps == [f"s{i}" for i in range(len(STEPS))] for steps in keyed.values())


#: the name every key holds last (its DELETE row: sinks that ignore row kinds write it as a value)
LAST = f"s{len(STEPS) - 1}"
