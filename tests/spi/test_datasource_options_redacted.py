"""Every Python data source's spec option (which carries the block's credentials to Spark's tasks) has a name
Spark's default redaction rule hides in plans, the UI and logs (``spark.redaction.regex``:
``(?i)secret|password|token|access[.]?key``)."""

from __future__ import annotations

import re
from pathlib import Path

import airflow_provider_seatunnel.connectors as connectors

SPARK_REDACTION = re.compile(r"(?i)secret|password|token|access[.]?key")
OPTION = re.compile(r'^SPEC_OPTION = "([^"]+)"', re.MULTILINE)


def test_every_spec_option_is_redacted_by_spark():
    found = {}
    for path in Path(connectors.__file__).parent.rglob("*.py"):
        for name in OPTION.findall(path.read_text()):
            found[str(path.relative_to(Path(connectors.__file__).parent))] = name
    assert len(found) >= 10  # the data sources are where the test looks
    assert {p: n for p, n in found.items() if not SPARK_REDACTION.search(n)} == {}
