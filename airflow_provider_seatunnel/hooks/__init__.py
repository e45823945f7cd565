"""Airflow hooks of the SeaTunnel provider."""
