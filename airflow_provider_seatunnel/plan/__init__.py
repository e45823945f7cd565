"""Planning: LogicalDag, transform chains, the pipeline split and the physical plan.

The compiler loads on first use (``plan.compile_job``…): the Spark driver reads a compiled
plan through :mod:`.model` alone and never pays for the compiler's imports.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .model import JobPlan, PipelinePlan, PlanVertex, TaskGroup

if TYPE_CHECKING:
    from .compiler import compile_job, compile_text, validate_job

__all__ = ["JobPlan", "PipelinePlan", "PlanVertex", "TaskGroup", "compile_job", "compile_text", "validate_job"]

_COMPILER = frozenset({"compile_job", "compile_text", "validate_job"})


def __getattr__(name: str) -> Any:
    if name in _COMPILER:
        from . import compiler

        return getattr(compiler, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
