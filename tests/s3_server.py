"""A private S3 endpoint for tests: moto's server mode (``moto_server`` from the venv, PyPI's
``moto[server]``) on a free loopback port, in memory.

:func:`running` starts ``moto_server -H 127.0.0.1 -p <free port>``, waits until it answers and
stops it at the end. Tests reach it through boto3 (:meth:`S3Server.client`), never through the
code under test; :meth:`S3Server.options` gives the HOCON options of an S3File block using it.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import tempfile
import time
import urllib.request
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .servers import free_port, on_a_free_port, stop_process

ACCESS_KEY = "test-access-key"
SECRET_KEY = "s3-secret-7f3a9c"  # a test value; the tests check it never reaches a plan or a log
REGION = "us-east-1"


@dataclass
class S3Server:
    port: int
    process: subprocess.Popen

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def client(self) -> Any:
        import boto3

        return boto3.client("s3", endpoint_url=self.endpoint, aws_access_key_id=ACCESS_KEY,
                            aws_secret_access_key=SECRET_KEY, region_name=REGION)

    def new_bucket(self) -> str:
        name = f"st-{uuid.uuid4().hex[:12]}"
        self.client().create_bucket(Bucket=name)
        return name

    def keys(self, bucket: str, prefix: str = "") -> list[str]:
        pages = self.client().get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix)
        return sorted(o["Key"] for page in pages for o in page.get("Contents", ()))

    def options(self, bucket: str, path: str) -> str:
        """HOCON options of an S3File block reading or writing ``path`` in ``bucket`` here."""
        return (f'bucket = "s3a://{bucket}", path = "{path}", fs.s3a.endpoint = "{self.endpoint}", '
                'fs.s3a.aws.credentials.provider = "org.apache.hadoop.fs.s3a.SimpleAWSCredentialsProvider", '
                f'access_key = "{ACCESS_KEY}", secret_key = "{SECRET_KEY}"')

    def stop(self) -> None:
        stop_process(self.process)


def _server_command() -> list[str]:
    script = Path(sys.executable).with_name("moto_server")
    if not script.exists():
        raise RuntimeError("moto_server is not installed in this environment: pip install 'moto[server]'")
    return [str(script)]


class S3Unavailable(RuntimeError):
    """moto_server exited or did not answer; the message holds the end of its log."""


def _start_once(timeout: float) -> S3Server:
    """One try: ``moto_server`` on a port picked now, returned once it answers."""
    port = free_port()
    with tempfile.TemporaryFile(prefix="moto-") as log:
        env = {**os.environ, "AWS_ACCESS_KEY_ID": ACCESS_KEY, "AWS_SECRET_ACCESS_KEY": SECRET_KEY}
        process = subprocess.Popen([*_server_command(), "-H", "127.0.0.1", "-p", str(port)], stdout=log,
                                   stderr=subprocess.STDOUT, env=env)
        server = S3Server(port, process)
        deadline = time.monotonic() + timeout
        while process.poll() is None:
            try:
                urllib.request.urlopen(f"{server.endpoint}/moto-api/", timeout=2).close()
                return server
            except OSError:
                if time.monotonic() > deadline:
                    break
                time.sleep(0.2)
        server.stop()
        log.seek(0)
        text = log.read().decode(errors="replace")[-3000:]
    raise S3Unavailable(f"moto_server did not start on port {port} (exit {process.returncode}):\n{text}")


@contextlib.contextmanager
def running(timeout: float = 60.0) -> Iterator[S3Server]:
    """A moto S3 server on a free loopback port for the duration of the block."""
    server = on_a_free_port(lambda: _start_once(timeout), S3Unavailable)
    try:
        yield server
    finally:
        server.stop()
