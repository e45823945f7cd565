"""Provider metadata for Airflow's ``apache_airflow_provider`` entry point."""

from __future__ import annotations

from . import __version__


def get_provider_info() -> dict:
    return {
        "package-name": "airflow-provider-seatunnel",
        "name": "Apache SeaTunnel",
        "description": "Compile Apache SeaTunnel job configs and run their pipelines on Apache Spark.",
        "versions": [__version__],
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
    }
