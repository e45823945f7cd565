"""Example third-party SeaTunnel connectors, registered through the entry-point group
``airflow_provider_seatunnel.connectors``: :class:`.echo.Echo` (a transform adding a constant
column) and :class:`.jsonlines.JsonLines` (a two-phase-commit sink writing JSON lines files).

Nothing here imports PySpark at module level: the planner loads these modules at DAG-parse time.
"""

__all__ = ["echo", "jsonlines"]
