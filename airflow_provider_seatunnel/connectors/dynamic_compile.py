"""DynamicCompile: SeaTunnel's transform that compiles Groovy or Java source at run time. Not runnable here.

SeaTunnel compiles ``source_code`` (or the file at ``absolute_path``) with Groovy or Janino inside its
own JVM, and calls the class's ``getInlineOutputColumns(CatalogTable)`` and
``getInlineOutputFieldValues(SeaTunnelRowAccessor)`` on each row: code written against SeaTunnel's Java
API, which neither Spark's JVM nor PySpark has. Running it would take SeaTunnel's API classes, a Groovy
and a Janino compiler on Spark's classpath and a row adapter between Spark's rows and SeaTunnel's: no
cheap path, and arbitrary code from a job file compiled into the executors. So the block is checked
with SeaTunnel's option rules, plans (its output schema unknown: the code decides it) and fails
``validate`` with a located reason; rewrite such a transform as ``Sql`` (or a plugin package).
"""

from __future__ import annotations

from collections.abc import Sequence

from ..spi import TRANSFORM, Capabilities, Connector, SchemaInference
from ..spi.options import JobConfig, PluginConfig, Problem
from ..spi.optionspec import Option, OptionSpec
from ..spi.schema import Schema

SPEC = OptionSpec((
    Option("compile_language", "enum", required=True, choices=("GROOVY", "JAVA"),
           description="The language of the source: GROOVY or JAVA."),
    Option("compile_pattern", "enum", "SOURCE_CODE", choices=("SOURCE_CODE", "ABSOLUTE_PATH"),
           description="Where the source is: in `source_code`, or in the file at `absolute_path`."),
    Option("source_code", required_if=(("compile_pattern", ("SOURCE_CODE",)),),
           description="The source code (with `compile_pattern` SOURCE_CODE)."),
    Option("absolute_path", required_if=(("compile_pattern", ("ABSOLUTE_PATH",)),),
           description="The source file on the server (with `compile_pattern` ABSOLUTE_PATH)."),
))

#: why no block of it can run here
REASON = ("DynamicCompile compiles {language} source against SeaTunnel's Java API inside SeaTunnel's JVM, "
          "which a PySpark job does not have")


class DynamicCompile(Connector, SchemaInference):
    name = "DynamicCompile"
    capabilities = Capabilities(sections=frozenset({TRANSFORM}))
    option_spec = SPEC
    description = "SeaTunnel's Groovy/Java transform: plans, but cannot run here."

    def check(self, plugin: PluginConfig, job: JobConfig) -> list[Problem]:
        """Always one not-runnable problem, at the option holding the code."""
        o = SPEC.valid(plugin.options, TRANSFORM)
        if o is None:
            return []
        key = "absolute_path" if o["compile_pattern"] == "ABSOLUTE_PATH" else "source_code"
        return [job.cannot_run(REASON.format(language=str(o["compile_language"]).title()), plugin, key=key,
                               hint="rewrite the transform as a Sql transform (or as a connector of a plugin "
                                    "package)")]

    def schema(self, plugin: PluginConfig, job: JobConfig,
               inputs: Sequence[Schema | None]) -> tuple[Schema | None, list[Problem]]:
        """Unknown: the compiled code decides its columns."""
        return None, []


CONNECTOR = DynamicCompile()
