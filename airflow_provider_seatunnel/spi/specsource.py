"""The shape shared by the connectors' PySpark Python data sources (``pyspark.sql.datasource``): one
format name, and the whole spec of a read or a write (endpoint with credentials, what to read or
stage) as JSON in one option whose name Spark's redaction rule matches (plans and the UI show
``*********(redacted)``).

Run time only: this module imports PySpark (the connectors' ``datasource`` modules import it; the
registration helpers of :mod:`.pysources` do not, since the compiler imports them at DAG-parse time).
A subclass is registered by class (Spark pickles it by reference) and declares :attr:`SpecSource.format_name`
and :attr:`SpecSource.spec_option`; its ``reader``/``writer``/``streamReader`` build their readers and
writers from :attr:`SpecSource.spec`.
"""

from __future__ import annotations

import json
from typing import Any, ClassVar

from pyspark.sql.datasource import DataSource


class SpecSource(DataSource):
    """A connector's data source: ``spark.read.format(format_name)`` / ``df.write.format(...)`` /
    ``spark.readStream.format(...)`` with the spec (a JSON object) in the option ``spec_option``."""

    #: the name Spark's ``format(...)`` finds it by
    format_name: ClassVar[str]
    #: the option holding the spec; its name matches Spark's redaction rule (the spec holds credentials)
    spec_option: ClassVar[str]

    @classmethod
    def name(cls) -> str:
        return cls.format_name

    @property
    def spec(self) -> dict[str, Any]:
        """The spec option, decoded (a new dict each time)."""
        return dict(json.loads(self.options[self.spec_option]))
