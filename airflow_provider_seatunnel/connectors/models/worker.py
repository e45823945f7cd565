"""What runs in Spark's Python workers (``mapInArrow``): each task opens one :class:`.client.Client` for its
partition and sends the requests of its rows in order, as SeaTunnel's transform does per row; the answers
become new columns of the same Arrow batches (at most ``process_batch_size`` rows each)."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from ...spi.errors import DataError, RuntimeConfigError
from .client import Client
from .options import Endpoint

#: SeaTunnel's output types of the LLM transform and their Arrow types' names
LLM_TYPES = ("STRING", "INT", "BIGINT", "DOUBLE", "BOOLEAN")
_INTEGER = re.compile(r"[+-]?\d+")
_RANGES = {"INT": 2 ** 31, "BIGINT": 2 ** 63}


def converted(plugin: str, text: str | None, kind: str) -> Any:
    """The model's first value as SeaTunnel converts it: ``String.valueOf``, ``Integer.parseInt``,
    ``Long.parseLong``, ``Double.parseDouble``, ``Boolean.parseBoolean``."""
    if kind == "STRING":
        return "null" if text is None else text
    if kind == "BOOLEAN":
        return text is not None and text.lower() == "true"
    bound = _RANGES.get(kind)
    if text is not None and bound is not None and _INTEGER.fullmatch(text) and -bound <= int(text) < bound:
        return int(text)
    if text is not None and kind == "DOUBLE":
        try:
            return float(text.strip().rstrip("dDfF"))
        except ValueError:
            pass
    raise DataError(f"{plugin}: the model answered {text!r}, which is not a {kind.lower()} (output_data_type)")


def _arrow_type(kind: str) -> Any:
    import pyarrow as pa

    return {"STRING": pa.string(), "INT": pa.int32(), "BIGINT": pa.int64(), "DOUBLE": pa.float64(),
            "BOOLEAN": pa.bool_()}[kind]


def _slices(batches: Iterator[Any], size: int) -> Iterator[Any]:
    for batch in batches:
        for start in range(0, batch.num_rows, size):
            yield batch.slice(start, size)


def llm_batches(spec: Mapping[str, Any], batches: Iterator[Any]) -> Iterator[Any]:
    """The batches with the LLM's answer to each row's JSON (column ``spec["input"]``) appended as
    ``spec["output"]``: one request per row, as SeaTunnel 2.3.8 sends them."""
    import pyarrow as pa

    plugin, kind = spec["plugin"], spec["type"]
    client = Client(plugin, Endpoint.from_json(spec["endpoint"]))
    try:
        for batch in _slices(batches, spec["batch"]):
            values = []
            for text in batch.column(spec["input"]).to_pylist():
                answer = client.chat(spec["prompt"], text, lower=kind == "BOOLEAN")
                if not answer:
                    raise DataError(f"{plugin}: the model answered an empty array")
                values.append(converted(plugin, answer[0], kind))
            yield pa.RecordBatch.from_arrays([*batch.columns, pa.array(values, _arrow_type(kind))],
                                             names=[*batch.schema.names, spec["output"]])
    finally:
        client.close()


def row_vectors(client: Client, values: Sequence[Any], fields: Sequence[str], per_request: int) -> list[list[float]]:
    """The embeddings of one row's ``values`` (of ``fields``), ``per_request`` values to a request, as
    SeaTunnel batches them; as many as values, else a DataError."""
    e = client.endpoint
    for field, value in zip(fields, values, strict=True):
        if value is None and (e.provider == "OPENAI" or (e.provider == "CUSTOM" and _input_string(e.body))):
            raise DataError(f"{client.plugin}: field '{field}' is null: {e.provider} sends each value as a string, "
                            "and SeaTunnel fails on a null here too")
    merged: list[list[float]] = []
    for start in range(0, len(values), per_request):
        merged.extend(client.vectors(values[start:start + per_request]))
    if len(merged) != len(values):
        raise DataError(f"{client.plugin}: The number of vectors is not equal to the number of inputs ({len(merged)} "
                        f"vectors for {len(values)} inputs), Please verify the configuration of the input field and "
                        "the result returned.")
    return merged


def _input_string(body: Any) -> bool:
    return isinstance(body, Mapping) and any(isinstance(v, str) and "${input" in v and "${model" not in v
                                             for v in body.values())


def embedding_batches(spec: Mapping[str, Any], batches: Iterator[Any]) -> Iterator[Any]:
    """The batches with one embedding column per vectorized field appended (``spec["outputs"]``)."""
    import pyarrow as pa

    plugin, fields, outputs = spec["plugin"], spec["fields"], spec["outputs"]
    if spec["per_request"] < 1:
        raise RuntimeConfigError(f"{plugin}: single_vectorized_input_number must be at least 1")
    client = Client(plugin, Endpoint.from_json(spec["endpoint"]))
    try:
        for batch in _slices(batches, spec["batch"]):
            if not fields:
                yield batch
                continue
            columns = [batch.column(f).to_pylist() for f in fields]
            per_field: list[list[list[float]]] = [[] for _ in fields]
            for values in zip(*columns, strict=True):
                for i, vector in enumerate(row_vectors(client, values, fields, spec["per_request"])):
                    per_field[i].append(vector)
            new = [pa.array(v, pa.list_(pa.float32())) for v in per_field]
            yield pa.RecordBatch.from_arrays([*batch.columns, *new], names=[*batch.schema.names, *outputs])
    finally:
        client.close()
