"""Provider metadata for Airflow's ``apache_airflow_provider`` entry point.

Airflow loads it in every process that discovers providers, so it imports nothing heavy: the
``[seatunnel]`` configuration section comes from :mod:`.settings` (standard library only).
"""

from __future__ import annotations

from . import __version__
from .connection_forms import connection_types
from .settings import provider_config


def get_provider_info() -> dict:
    return {
        "package-name": "airflow-provider-seatunnel",
        "name": "Apache SeaTunnel",
        "description": "Compile Apache SeaTunnel job configs and run their pipelines on Apache Spark.",
        "versions": [__version__],
        # no "documentation-url" (Airflow reads it from the distribution's Project-URL, which names none): no
        # page is published before a release; the docs ship in the sdist (docs/, README.md)
        "integrations": [
            {
                "integration-name": "Apache SeaTunnel",
                "external-doc-url": "https://seatunnel.apache.org/",
                "tags": ["software"],
            }
        ],
        "hooks": [
            {
                "integration-name": "Apache SeaTunnel",
                "python-modules": ["airflow_provider_seatunnel.hooks.seatunnel"],
            }
        ],
        "extra-links": ["airflow_provider_seatunnel.operators.seatunnel.SparkApplicationLink"],
        # the forms of the connection extras this provider reads, as connection types of its own
        # (connection_forms.py); SeaTunnelHook reads `spark` connections as well as `seatunnel_spark` ones
        "connection-types": connection_types(),
        "operators": [
            {
                "integration-name": "Apache SeaTunnel",
                "python-modules": [
                    "airflow_provider_seatunnel.operators.seatunnel",
                    "airflow_provider_seatunnel.operators.job_group",
                ],
            }
        ],
        # deferrable=True: the trigger watching a pipeline's detached driver (operators/deferrable.py)
        "triggers": [
            {
                "integration-name": "Apache SeaTunnel",
                "python-modules": ["airflow_provider_seatunnel.operators.deferrable"],
            }
        ],
        # the [seatunnel] section of Airflow's configuration (airflow config list shows it)
        "config": provider_config(),
    }
