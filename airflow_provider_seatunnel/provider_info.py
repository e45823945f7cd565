"""Provider metadata for Airflow's ``apache_airflow_provider`` entry point.

Airflow loads it in every process that discovers providers, so it imports nothing heavy: the
``[seatunnel]`` configuration section comes from :mod:`.settings` (standard library only).
"""

from __future__ import annotations

from . import __version__
from .settings import provider_config

#: Where the provider is documented. Airflow's providers list shows the distribution's
#: ``Project-URL: Documentation`` (pyproject.toml's [project.urls]), which must be the same URL.
DOCUMENTATION_URL = "https://pypi.org/project/airflow-provider-seatunnel/"


def get_provider_info() -> dict:
    return {
        "package-name": "airflow-provider-seatunnel",
        "name": "Apache SeaTunnel",
        "description": "Compile Apache SeaTunnel job configs and run their pipelines on Apache Spark.",
        "versions": [__version__],
        "documentation-url": DOCUMENTATION_URL,
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
        # SeaTunnelHook uses the Spark provider's `spark` connections (master, deploy mode): no type of its own.
        "operators": [
            {
                "integration-name": "Apache SeaTunnel",
                "python-modules": [
                    "airflow_provider_seatunnel.operators.seatunnel",
                    "airflow_provider_seatunnel.operators.job_group",
                ],
            }
        ],
        # the [seatunnel] section of Airflow's configuration (airflow config list shows it)
        "config": provider_config(),
    }
