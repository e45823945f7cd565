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


#: Spark error classes that fail the same way on every attempt (retrying cannot help).
DETERMINISTIC_SPARK_ERRORS = ("USER_RAISED_EXCEPTION", "UNRESOLVED_COLUMN", "UNRESOLVED_ROUTINE",
                              "DATATYPE_MISMATCH", "PARSE_SYNTAX_ERROR", "CAST_INVALID_INPUT",
                              "MALFORMED_RECORD_IN_PARSING", "TABLE_OR_VIEW_NOT_FOUND", "PATH_NOT_FOUND",
                              "ARITHMETIC_OVERFLOW", "DIVIDE_BY_ZERO", "NUMERIC_VALUE_OUT_OF_RANGE",
                              "INVALID_ARRAY_INDEX", "CAST_OVERFLOW")


def is_deterministic_spark_error(error: BaseException) -> bool:
    """Whether a Spark error is one the same input raises again on every attempt."""
    text = str(error)
    return any(code in text for code in DETERMINISTIC_SPARK_ERRORS)
