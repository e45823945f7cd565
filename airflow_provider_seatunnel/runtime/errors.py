"""Runtime failures: each names the pipeline, the plugin and the cause.

``deterministic`` failures (a broken Assert rule, a bad option found at run time) fail
the same way on every attempt: Airflow must not retry them.
"""

from __future__ import annotations


class PipelineError(RuntimeError):
    """A pipeline failed in ``plugin`` because of ``cause``."""

    deterministic = False
    kind = "runtime"

    def __init__(self, cause: str, plugin: str | None = None, pipeline: str | None = None):
        self.cause = cause
        self.plugin = plugin
        self.pipeline = pipeline
        super().__init__(self.describe())

    def describe(self) -> str:
        where = " ".join(x for x in (f"pipeline {self.pipeline}" if self.pipeline else "",
                                     self.plugin or "") if x)
        return f"{where}: {self.cause}" if where else self.cause

    def located(self, plugin: str | None, pipeline: str | None) -> PipelineError:
        self.plugin = self.plugin or plugin
        self.pipeline = self.pipeline or pipeline
        self.args = (self.describe(),)
        return self

    def to_dict(self) -> dict:
        return {"kind": self.kind, "deterministic": self.deterministic, "plugin": self.plugin,
                "pipeline": self.pipeline, "message": self.cause}


class AssertionFailed(PipelineError):
    """An Assert rule did not hold: retrying gives the same answer."""

    deterministic = True
    kind = "assert"


class RuntimeConfigError(PipelineError):
    """An option only checkable at run time is wrong (a missing input file, a bad pattern)."""

    deterministic = True
    kind = "config"


class DataError(PipelineError):
    """The data itself breaks the job (a value that does not parse, a rule raised in a
    transform, a column Spark cannot resolve): the same input fails the same way again."""

    deterministic = True
    kind = "data"
