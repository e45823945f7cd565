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

demo: check-java $(STAMP)
	$(BIN)/seatunnel-airflow validate dags/configs/example.conf
	$(BIN)/seatunnel-airflow plan dags/configs/example.conf
	rm -rf $(DEMO_DIR)
	$(BIN)/seatunnel-airflow run dags/configs/example.conf -i output_dir=$(DEMO_DIR)/orders \
	  --work-dir $(DEMO_DIR)/run --metrics-file $(DEMO_DIR)/metrics.json
	@echo "output: $(DEMO_DIR)/orders  (Parquet; metrics: $(DEMO_DIR)/metrics.json, logs: $(DEMO_DIR)/run)"

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
