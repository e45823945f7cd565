"""Airflow operators of the SeaTunnel provider."""
