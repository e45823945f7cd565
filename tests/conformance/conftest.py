"""The conformance suite shares the runtime tests' one SparkSession."""

from tests.runtime.conftest import spark  # noqa: F401  (a fixture, re-exported for this package)
