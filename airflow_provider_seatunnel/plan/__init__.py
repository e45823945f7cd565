"""Planning: LogicalDag, transform chains, the pipeline split and the physical plan."""

from .compiler import compile_job, compile_text, validate_job
from .model import JobPlan, PipelinePlan, PlanVertex, TaskGroup

__all__ = ["JobPlan", "PipelinePlan", "PlanVertex", "TaskGroup", "compile_job", "compile_text", "validate_job"]
