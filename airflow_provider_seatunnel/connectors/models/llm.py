"""LLM: a large language model's answer about each row, as a new column (SeaTunnel 2.3.8's ``LLM``).

Each row (its ``inference_columns``, default all) goes to the model as a JSON array of one object, the
user message, after a system message: ``prompt`` and SeaTunnel's rules asking for a JSON array of
``output_data_type`` values. The first value of the answer's array, converted to that type, fills
``output_column_name`` (default ``llm_output``; a name the input already has is refused, as SeaTunnel
refuses it). The row's JSON is built by Spark (``to_json``, nulls kept); the requests go out from the
Python workers (:mod:`.worker`), one per row as SeaTunnel sends them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ...spi import TRANSFORM, Dataset, RunContext, Vertex
from ...spi.options import OptionError
from ...spi.optionspec import Option, OptionSpec
from ...spi.rows import ROW_KIND, data_columns, quote
from ...spi.schema import DataType, Field, Schema
from . import ModelTransform
from .options import LLM_PROVIDERS, common_options, endpoint
from .worker import LLM_TYPES

NAME = "LLM"
SPEC = OptionSpec((
    *common_options(("OPENAI", "DOUBAO", "MICROSOFT", "QIANFAN")),
    Option("prompt", required=True, description="What the model is asked about each row."),
    Option("inference_columns", "list", description="The fields sent to the model (default: every field)."),
    Option("output_data_type", "enum", "STRING", choices=LLM_TYPES,
           description="The output column's type: STRING, INT, BIGINT, DOUBLE or BOOLEAN."),
    Option("output_column_name", default="llm_output", allow_blank=False,
           description="The output column; a field of the input may not have this name."),
))
_IN, _OUT = "__st_llm_input", "__st_llm_output"


def prompt_with_limit(prompt: str, output_type: str) -> str:
    """The system message: ``prompt`` and SeaTunnel's rules for the answer's form."""
    return (prompt + "\n The following rules need to be followed: "
            "\n 1. The received data is an array, and the result is returned in the form of an array."
            "\n 2. Only the result needs to be returned, and no other information can be returned."
            f"\n 3. The element type of the array is {output_type}."
            '\n Eg: ["value1", "value2"]')


def _rules(o: Mapping[str, Any], names: Sequence[str] | None) -> None:
    """SeaTunnel's rules beyond the spec (raises OptionError): a provider its LLM runs, the endpoint, and
    against the input's fields (when known) the inference columns and the output's name."""
    provider = str(o["model_provider"])
    if provider not in LLM_PROVIDERS:
        raise OptionError("model_provider", f"Unsupported model provider: {provider} (the LLM transform runs "
                          f"{', '.join(LLM_PROVIDERS)})")
    if provider == "MICROSOFT" and not o["api_path"]:
        raise OptionError("api_path", "api_path is required with model_provider MICROSOFT")
    endpoint(o, llm=True)
    if names is None:
        return
    for column in o["inference_columns"] or ():
        if column not in names:
            raise OptionError("inference_columns", f"Field name {column} does not exist in the row type.",
                              f"the fields are: {', '.join(names)}")
    if o["output_column_name"] in names:
        raise OptionError("output_column_name", f"llm inference field name {o['output_column_name']} already "
                          "exists", "choose another output_column_name")


class LLM(ModelTransform):
    name = NAME
    option_spec = SPEC
    description = "Asks a large language model about each row (HTTP, from Spark's Python workers)."
    secrets = ModelTransform.secret_headers  # beside the spec's (the spec is read per class)
    rules = staticmethod(_rules)

    def output(self, o: Mapping[str, Any], source: Schema) -> Schema:
        kind = DataType(str(o["output_data_type"]).lower())
        return Schema((*source.fields, Field(str(o["output_column_name"]), kind)))

    def apply(self, ctx: RunContext, vertex: Vertex, inputs: Mapping[str, Dataset]) -> Dataset:
        import functools

        from pyspark.sql import functions as F
        from pyspark.sql import types as T

        from .worker import llm_batches

        o = SPEC.run_time(vertex.config, TRANSFORM)
        kind, output = str(o["output_data_type"]), str(o["output_column_name"])
        spark_type = DataType(kind.lower()).to_spark()
        out: Dataset = {}
        for table, df in (next(iter(inputs.values())) if inputs else {}).items():
            columns = data_columns(df)
            try:
                _rules(o, columns)
            except OptionError as e:
                raise e.at_run_time() from None
            sent = list(o["inference_columns"] or columns)
            rows_json = F.to_json(F.array(F.struct(*[F.col(quote(c)) for c in sent])), {"ignoreNullFields": "false"})
            spec = {"plugin": f"{ctx.label(vertex)}", "endpoint": endpoint(o, llm=True).to_json(),
                    "prompt": prompt_with_limit(str(o["prompt"]), kind), "type": kind, "input": _IN,
                    "output": _OUT, "batch": int(o["process_batch_size"])}
            staged = df.select(*[F.col(quote(c)) for c in df.columns], rows_json.alias(_IN))
            schema = T.StructType([*staged.schema.fields, T.StructField(_OUT, spark_type, True)])
            answered = staged.mapInArrow(functools.partial(llm_batches, spec), schema)
            kinds = [F.col(ROW_KIND)] if ROW_KIND in df.columns else []
            out[table] = answered.select(*[F.col(quote(c)) for c in columns], F.col(_OUT).alias(output), *kinds)
        return out


CONNECTOR = LLM()
