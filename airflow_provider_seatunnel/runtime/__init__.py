"""The Spark runtime: one pipeline (SubPlan) is one Spark application.

Importing this package does not import PySpark; the modules that need it import it
inside their functions, so the compiler and the Airflow layer stay light.
"""
