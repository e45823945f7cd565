"""The conformance suite's servers, one per sink family for the session, and the runtime tests' one
SparkSession; an adapter names the fixture its sink needs (tests/conformance/adapters.py)."""

import pytest

from tests.runtime.conftest import db, spark  # noqa: F401  (fixtures, re-exported for this package)
from tests.runtime.test_hive import hive, metastore  # noqa: F401
from tests.runtime.test_jdbc_mysql import my  # noqa: F401
from tests.runtime.test_redis import redis_server  # noqa: F401
from tests.runtime.test_s3file import s3  # noqa: F401


@pytest.fixture(scope="session")
def ftp_server():
    from tests import file_servers

    with file_servers.running("ftp") as server:
        yield server


@pytest.fixture(scope="session")
def sftp_server():
    from tests import file_servers

    with file_servers.running("sftp") as server:
        yield server
