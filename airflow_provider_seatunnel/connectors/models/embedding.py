"""Embedding: vectors of text fields from an embedding model's API, as new columns (SeaTunnel 2.3.8's
``Embedding``).

``vectorization_fields`` maps each output column to the input field it vectorizes. Per row, the
fields' values go to the model ``single_vectorized_input_number`` at a time (SeaTunnel's batching:
OPENAI takes one value a request, DOUBAO, QIANFAN and CUSTOM a list); the answers must hold as many
vectors as values. Each output column is SeaTunnel's ``float_vector``, here ``array<float>`` (an output
named like an input field replaces it in place, as SeaTunnel does). SeaTunnel's one extra request per
task for the vectors' dimension (a schema detail Spark's arrays do not carry) is not sent.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from typing import Any

from ...spi import TRANSFORM, Dataset, RunContext, Vertex
from ...spi.options import OptionError
from ...spi.optionspec import Option, OptionSpec
from ...spi.rows import ROW_KIND, data_columns, quote
from ...spi.schema import DataType, Field, Schema
from . import ModelTransform
from .options import EMBEDDING_PROVIDERS, common_options, endpoint

NAME = "Embedding"
SPEC = OptionSpec((
    *common_options(("OPENAI", "DOUBAO", "QIANFAN")),
    Option("vectorization_fields", "map", required=True,
           description="output column = input field: the fields vectorized and the columns their vectors go to."),
    Option("single_vectorized_input_number", "int", 1, minimum=1,
           description="How many of a row's values one request carries (OPENAI: 1)."),
))
VECTOR = DataType("array", element=DataType("float"))
_PREFIX = "__st_vector_"


def _fields(o: Mapping[str, Any]) -> list[tuple[str, str]]:
    return [(str(k), str(v)) for k, v in (o["vectorization_fields"] or {}).items()]


def _rules(o: Mapping[str, Any], names: Sequence[str] | None) -> None:
    """SeaTunnel's rules beyond the spec (raises OptionError), the input fields against ``names`` if known."""
    provider = str(o["model_provider"])
    if provider not in EMBEDDING_PROVIDERS:
        raise OptionError("model_provider", f"Unsupported model provider: {provider} (the Embedding transform runs "
                          f"{', '.join(EMBEDDING_PROVIDERS)})")
    if not _fields(o):
        raise OptionError("vectorization_fields", "vectorization_fields is empty", "name at least one field")
    endpoint(o, llm=False)
    if names is None:
        return
    missing = [src for _, src in _fields(o) if src not in names]
    if missing:
        raise OptionError("vectorization_fields", f"The input field '{missing[0]}' of 'Embedding' transform not "
                          "found in upstream schema", f"the fields are: {', '.join(names)}")


class Embedding(ModelTransform):
    name = NAME
    option_spec = SPEC
    description = "Vectorizes text fields with an embedding model's API (HTTP, from Spark's Python workers)."
    secrets = ModelTransform.secret_headers  # beside the spec's (the spec is read per class)
    rules = staticmethod(_rules)

    def output(self, o: Mapping[str, Any], source: Schema) -> Schema:
        out = source
        for target, _ in _fields(o):
            out = out.with_field(Field(target, VECTOR))
        return out

    def apply(self, ctx: RunContext, vertex: Vertex, inputs: Mapping[str, Dataset]) -> Dataset:
        from pyspark.sql import functions as F
        from pyspark.sql import types as T

        from .worker import embedding_batches

        o = SPEC.run_time(vertex.config, TRANSFORM)
        pairs = _fields(o)
        temps = [f"{_PREFIX}{i}" for i in range(len(pairs))]
        out: Dataset = {}
        for table, df in (next(iter(inputs.values())) if inputs else {}).items():
            columns = data_columns(df)
            try:
                _rules(o, columns)
            except OptionError as e:
                raise e.at_run_time() from None
            spec = {"plugin": ctx.label(vertex), "endpoint": endpoint(o, llm=False).to_json(),
                    "fields": [src for _, src in pairs], "outputs": temps,
                    "per_request": int(o["single_vectorized_input_number"]), "batch": int(o["process_batch_size"])}
            schema = T.StructType([*df.schema.fields,
                                   *[T.StructField(t, VECTOR.to_spark(), True) for t in temps]])
            vectors = df.mapInArrow(functools.partial(embedding_batches, spec), schema)
            selected: dict[str, Any] = {c: F.col(quote(c)) for c in columns}
            for (target, _), temp in zip(pairs, temps, strict=True):
                selected[target] = F.col(temp)  # an input field of that name keeps its place, replaced
            kinds = [F.col(ROW_KIND)] if ROW_KIND in df.columns else []
            out[table] = vectors.select(*[c.alias(n) for n, c in selected.items()], *kinds)
        return out


CONNECTOR = Embedding()
