"""The connector class the OssFile, CosFile and ObsFile plugins share: S3File's, with the
plugin's option names (:class:`.stores.StoreSpec`) for the compile-time checks, the settings
mapping (the S3File source and sink run with the plugin's :class:`..files.s3options.Dialect`),
the Airflow connection, the secrets and the lineage."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from ...spi import Unnamed
from ...spi.contract import ConnectionInfo
from ...spi.options import JobConfig, PluginConfig, Problem
from ..files.onstore import S3Compatible
from ..files.placeholders import store_assets
from ..files.s3options import key_prefix
from . import checks
from .stores import StoreSpec, bucket_parts

#: S3File's option names for what an Airflow connection of type aws gives -> the generic ones here
_FROM_CONNECTION = {"fs.s3a.endpoint": "endpoint", "region": "region", "aws_session_token": "aws_session_token"}


class ObjectStoreFile(S3Compatible):
    """A store with an S3 API under its own SeaTunnel plugin; subclasses set ``spec``."""

    spec: ClassVar[StoreSpec]

    def check(self, plugin: PluginConfig, job: JobConfig) -> list[Problem]:
        return checks.check(self.spec, plugin, job)

    def connection_options(self, conn: ConnectionInfo) -> dict[str, Any]:
        """From a connection of type ``aws`` (S3File's reading of it), in the plugin's option
        names: login and password are the keys, extra ``endpoint_url`` the ``endpoint``,
        ``region_name`` the ``region``."""
        names = {"access_key": self.spec.key_id, "secret_key": self.spec.secret, **_FROM_CONNECTION}
        return {names[key]: value for key, value in super().connection_options(conn).items() if key in names}

    def takes_default_connection(self, options: Mapping[str, Any]) -> bool:
        return self.spec.key_id not in options

    def assets(self, options: Mapping[str, Any]) -> list[str | Unnamed]:
        """``<scheme>://<bucket>/<key prefix>`` (``oss://b/x``...), unnamed while it holds a placeholder."""
        def uri(bucket: Any, path: Any) -> str | None:
            try:
                return f"{self.spec.scheme}://{bucket_parts(self.spec, bucket)[0]}/{key_prefix(path, self.spec.plugin)}"
            except Exception:
                return None

        return store_assets(options, "bucket", uri)
