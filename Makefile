# Quick start: `make demo` and `make test`. Java 17 is the only prerequisite.
PYTHON ?= python3
VENV ?= .venv
BIN := $(abspath $(VENV))/bin
STAMP := $(VENV)/.installed
# spark-submit finds Spark through the `python` on PATH: put the venv first.
export PATH := $(BIN):$(PATH)
export SEATUNNEL_PLAN_CACHE ?= $(abspath .cache/plans)

.PHONY: demo test lint bench check-java venv clean

check-java:
	@command -v java >/dev/null 2>&1 || { \
	  echo "error: Java 17 is required but 'java' is not on PATH." >&2; \
	  echo "       Install a JDK or JRE 17 (Debian: apt-get install openjdk-17-jre-headless) and retry." >&2; \
	  exit 1; }

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[test]'
	@touch $@

venv: $(STAMP)

DEMO_DIR := $(abspath .demo)
# `make demo` runs the DAG seatunnel_example with `airflow dags test` on a project-local Airflow:
# its home, SQLite database and logs under .demo/, the DAGs folder dags/, Spark on local[*].
DEMO_DAG := seatunnel_example
DEMO_AIRFLOW_HOME := $(DEMO_DIR)/airflow
DEMO_OUTPUT := $(DEMO_DIR)/output
DEMO_MIGRATED := $(DEMO_AIRFLOW_HOME)/.migrated
demo: export AIRFLOW_HOME := $(DEMO_AIRFLOW_HOME)
demo: export AIRFLOW__DATABASE__SQL_ALCHEMY_CONN := sqlite:///$(DEMO_AIRFLOW_HOME)/airflow.db
demo: export AIRFLOW__CORE__DAGS_FOLDER := $(abspath dags)
demo: export AIRFLOW__CORE__LOAD_EXAMPLES := False
demo: export AIRFLOW_CONN_SPARK_DEFAULT := {"conn_type": "spark", "host": "local[*]"}

demo: check-java $(STAMP)
	$(BIN)/seatunnel-airflow validate dags/configs/example.conf
	$(BIN)/seatunnel-airflow plan dags/configs/example.conf
	@mkdir -p $(DEMO_AIRFLOW_HOME)
	@# migrate the metadata database once (and again after the venv changes), not on every demo
	@if [ ! -f $(DEMO_MIGRATED) ] || [ ! -f $(DEMO_AIRFLOW_HOME)/airflow.db ] || [ $(STAMP) -nt $(DEMO_MIGRATED) ]; then \
	  echo "Migrating Airflow's metadata database $(DEMO_AIRFLOW_HOME)/airflow.db (log: $(DEMO_DIR)/migrate.log)"; \
	  $(BIN)/airflow db migrate > $(DEMO_DIR)/migrate.log 2>&1 || { tail -n 30 $(DEMO_DIR)/migrate.log; exit 1; }; \
	  touch $(DEMO_MIGRATED); fi
	@rm -rf $(DEMO_OUTPUT)
	@echo "Running the DAG $(DEMO_DAG) (one task per pipeline) with airflow dags test:"
	@$(BIN)/python scripts/demo_progress.py $(DEMO_DIR)/airflow.log -- \
	  $(BIN)/airflow dags test $(DEMO_DAG) -c '{"output_root": "$(DEMO_OUTPUT)"}'
	@echo
	@$(BIN)/python scripts/demo_summary.py $(DEMO_DAG)

# The Jdbc tests run a private PostgreSQL server (Debian's packages) and its JDBC driver.
PG_PACKAGES := postgresql libpostgresql-jdbc-java
PG_JAR := /usr/share/java/postgresql.jar

.PHONY: test-deps
test-deps:
	@if ls /usr/lib/postgresql/*/bin/pg_ctl >/dev/null 2>&1 && [ -f $(PG_JAR) ]; then exit 0; fi; \
	if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	  echo "installing $(PG_PACKAGES) (PostgreSQL server and JDBC driver for the Jdbc tests)"; \
	  DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends $(PG_PACKAGES) \
	    || { apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends $(PG_PACKAGES); }; \
	else \
	  echo "error: the Jdbc tests need a PostgreSQL server (/usr/lib/postgresql/*/bin) and its JDBC driver ($(PG_JAR))." >&2; \
	  echo "       Install them as root and retry: apt-get install -y --no-install-recommends $(PG_PACKAGES)" >&2; \
	  exit 1; \
	fi

lint: $(STAMP)
	$(BIN)/ruff check .

test: check-java test-deps $(STAMP) lint
	$(BIN)/python -m pytest -q; rc=$$?; if [ $$rc -eq 5 ]; then echo "no tests collected"; rc=0; fi; exit $$rc

bench: $(STAMP)
	$(BIN)/python benchmarks/compile_speed.py

clean:
	rm -rf $(VENV) .cache .pytest_cache .demo
