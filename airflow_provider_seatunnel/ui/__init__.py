"""The SeaTunnel view in Airflow's UI: an Airflow 3 plugin (:mod:`.plugin`) whose FastAPI app
(:mod:`.app`) serves a page per DAG run showing its job groups' graphs and pipelines (:mod:`.view`)."""
