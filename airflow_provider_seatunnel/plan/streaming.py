"""STREAMING jobs at compile time: the ``env`` options of a stream and what can stream.

Pure Python (no PySpark): the compiler checks these options and the runtime
(``runtime/streaming.py``) reads them back from the plan's ``env``. docs/streaming.md
describes them.

``streaming.trigger``
    ``available_now`` (default): a run processes everything new since the last run, in
    micro-batches, and stops (Spark's ``Trigger.AvailableNow``): the incremental sync an
    Airflow schedule runs. ``processing_time`` (alias ``continuous``; this is not Spark's
    experimental continuous processing): run until stopped, one micro-batch every
    ``checkpoint.interval`` ms.
``checkpoint.interval``
    ms between two micro-batches of a ``processing_time`` stream (default 10000, the value
    SeaTunnel's shipped ``seatunnel.yaml`` gives); also paces FakeSource's splits.
``checkpoint.timeout``
    ms a micro-batch may take, planning and commit included; unset: unbounded.
``checkpoint.root``
    where the pipelines keep their checkpoints: this option, else Airflow's ``[seatunnel]
    checkpoint_root``, else the environment variable ``SEATUNNEL_CHECKPOINT_ROOT``, else
    ``<user data dir>/airflow-provider-seatunnel/checkpoints``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..config.hocon import MISSING
from ..config.options import as_int, lookup

if TYPE_CHECKING:
    from ..config.errors import Problem
    from ..config.loader import JobConfig

STREAMING = "STREAMING"
TRIGGER_KEY = "streaming.trigger"
ROOT_KEY = "checkpoint.root"
ROOT_ENV = "SEATUNNEL_CHECKPOINT_ROOT"
AVAILABLE_NOW, PROCESSING_TIME = "available_now", "processing_time"
TRIGGERS = {"available_now": AVAILABLE_NOW, "availablenow": AVAILABLE_NOW, "processing_time": PROCESSING_TIME,
            "processingtime": PROCESSING_TIME, "continuous": PROCESSING_TIME}
DEFAULT_INTERVAL_MS = 10_000


@dataclass(frozen=True)
class StreamSettings:
    """How a STREAMING job's pipelines run."""

    trigger: str = AVAILABLE_NOW
    interval_ms: int = DEFAULT_INTERVAL_MS
    timeout_ms: int | None = None
    root: str | None = None  # as configured (None: from the environment at run time)


def _get(env: Mapping[str, Any], key: str) -> Any:
    value = lookup(env, key)
    return None if value is MISSING else value


def trigger_of(value: Any) -> str | None:
    """The canonical trigger for a ``streaming.trigger`` value (case and ``-``/``_`` free), None if unknown."""
    if value is None:
        return AVAILABLE_NOW
    return TRIGGERS.get(str(value).strip().lower().replace("-", "_"))


def stream_settings(env: Mapping[str, Any]) -> StreamSettings:
    """The settings of ``env`` (checked at compile time: unknown values fall back to defaults)."""
    interval = as_int(_get(env, "checkpoint.interval"))
    timeout = as_int(_get(env, "checkpoint.timeout"))
    root = _get(env, ROOT_KEY)
    return StreamSettings(trigger=trigger_of(_get(env, TRIGGER_KEY)) or AVAILABLE_NOW,
                          interval_ms=interval if interval and interval > 0 else DEFAULT_INTERVAL_MS,
                          timeout_ms=timeout if timeout and timeout > 0 else None,
                          root=str(root).strip() if isinstance(root, str) and root.strip() else None)


def checkpoint_root(settings: StreamSettings, environ: Mapping[str, str] | None = None) -> str:
    """The checkpoint root: ``checkpoint.root``, else Airflow's ``[seatunnel] checkpoint_root``, else
    ``$SEATUNNEL_CHECKPOINT_ROOT`` (:mod:`..settings`), else the user data dir.

    A plain path is made absolute; a URI (``hdfs://…``, ``s3a://…``, ``file:/…``) is kept."""
    from ..settings import CHECKPOINT_ROOT, value

    root = settings.root or value(CHECKPOINT_ROOT, environ) or ""
    if not root:
        from platformdirs import user_data_dir

        root = os.path.join(user_data_dir("airflow-provider-seatunnel"), "checkpoints")
    if "://" in root or root.startswith("file:"):
        return root.rstrip("/")
    return os.path.abspath(os.path.expanduser(root))


def check_job(job: JobConfig, mode: str) -> list[Problem]:
    """Problems of the streaming options, and, in a STREAMING job, of sources that cannot stream."""
    from ..spi import SOURCE, get_connector

    problems: list[Problem] = []
    raw = job.env_get(TRIGGER_KEY)
    if raw is not None and trigger_of(raw) is None:
        problems.append(job.problem(f"unknown {TRIGGER_KEY} {raw!r}", key=TRIGGER_KEY,
                                    hint="use available_now (process what is new, then stop) or processing_time "
                                         "(run until stopped, one micro-batch every checkpoint.interval ms)"))
    root = job.env_get(ROOT_KEY)
    if root is not None and (not isinstance(root, str) or not root.strip()):
        problems.append(job.problem(f"{ROOT_KEY} must be a directory path or URI, found {root!r}", key=ROOT_KEY,
                                    hint=f"remove it to use ${ROOT_ENV} or the user data directory"))
    if mode != STREAMING:
        return problems
    for plugin in job.sources:
        connector = get_connector(plugin.name)
        if connector is None or SOURCE not in connector.capabilities.sections or not connector.can_run(SOURCE):
            continue  # reported elsewhere (unknown, wrong section, not runnable)
        if not connector.can_stream(SOURCE):
            streaming = sorted(c.name for c in _streaming_sources())
            problems.append(job.problem(f"{connector.name} cannot be the source of a STREAMING job here: it reads "
                                        "a bounded input", plugin, key=None,
                                        hint=f"use job.mode = BATCH, or a streaming source ({', '.join(streaming)})"))
    return problems


def _streaming_sources() -> list[Any]:
    from ..spi import SOURCE, available, get_connector

    return [c for c in (get_connector(n) for n in available(SOURCE)) if c is not None and c.can_stream(SOURCE)]
