# Quick start: `make demo` and `make test`. Java 17 is the only prerequisite.
PYTHON ?= python3
VENV ?= .venv
BIN := $(abspath $(VENV))/bin
STAMP := $(VENV)/.installed
# spark-submit finds Spark through the `python` on PATH: put the venv first.
export PATH := $(BIN):$(PATH)
export SEATUNNEL_PLAN_CACHE ?= $(abspath .cache/plans)

.PHONY: demo test unit integration lint bench check-java venv clean docs dist

check-java:
	@command -v java >/dev/null 2>&1 || { \
	  echo "error: Java 17 is required but 'java' is not on PATH." >&2; \
	  echo "       Install a JDK or JRE 17 (Debian: apt-get install openjdk-17-jre-headless) and retry." >&2; \
	  exit 1; }

# pyproject.toml declares ranges only; .ci/constraints.txt pins the PySpark pair (pyspark and
# pyspark-client must be one release: docs/install.md), as a user's constraint file would.
CONSTRAINTS := .ci/constraints.txt
$(STAMP): pyproject.toml tests/plugin_package/pyproject.toml $(CONSTRAINTS) .ci/paimon.txt
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q --constraint $(CONSTRAINTS) -e '.[test,clickhouse-stand-in]'
	@# pypaimon (the Paimon connector) without its version caps: .ci/paimon.txt says why
	$(BIN)/python -m pip install -q --no-deps -r .ci/paimon.txt
	@# the example third-party connector package (docs/connectors.md) that tests/test_third_party_connector.py runs
	$(BIN)/python -m pip install -q --no-deps -e tests/plugin_package
	@# the editable installs leave <name>.egg-info beside the sources: with this tree on sys.path (tests, or
	@# running from here) Python would see each package twice, and Airflow load the SeaTunnel view's plugin twice
	@rm -rf airflow_provider_seatunnel.egg-info tests/plugin_package/*.egg-info
	@touch $@

venv: $(STAMP)

# -- The lowest-versions environment: pyproject.toml's floors, under a constraint file ----------------
# A second venv built from .ci/constraints-lowest.txt (Airflow, the Spark provider, sqlglot and
# platformdirs at the lowest versions pyproject.toml declares, PySpark 4.1 rather than the newest; all
# else pinned as Airflow's constraint file for that release pins it; .ci/lowest-constraints.sh
# regenerates it). Built once (updated when either file changes); `make test` runs LOWEST_TESTS in
# it: the tests that drive Airflow, the Spark provider and PySpark together, and Iceberg's (its runtime is
# built for this PySpark only: its runtime tests and its cases of the sink conformance suite). Left out: the durable
# reconnection tests (Airflow 3.3's ResumableJobMixin; on 3.2 `durable` is accepted and does nothing)
# and two tests that compare whole outputs of processes, into which Airflow 3.2 logs at import.
LOWEST_VENV ?= .cache/venv-lowest
LOWEST_BIN := $(abspath $(LOWEST_VENV))/bin
LOWEST_STAMP := $(LOWEST_VENV)/.installed
LOWEST_CONSTRAINTS := .ci/constraints-lowest.txt
LOWEST_TESTS := tests/test_packaging.py tests/airflow/test_operator.py tests/airflow/test_hook.py \
	tests/airflow/test_dags.py tests/airflow/test_job_group.py tests/airflow/test_authoring.py \
	tests/airflow/test_lineage.py tests/runtime/test_iceberg.py \
	'tests/conformance/test_sinks.py::test_failure_at_a_fault_point_then_restore_is_exactly_once[iceberg-sink.move+1]' \
	'tests/conformance/test_sinks.py::test_an_older_attempt_resuming_after_a_newer_one_took_its_token_is_superseded[iceberg-staged]' \
	'tests/conformance/test_sinks.py::test_an_older_attempt_resuming_after_a_newer_one_took_its_token_is_superseded[iceberg-committed]' \
	'tests/conformance/test_sinks.py::test_drop_data_is_atomic[iceberg-sink.move]' \
	--deselect tests/airflow/test_job_group.py::test_rendering_is_deterministic_across_parses \
	--deselect tests/airflow/test_job_group.py::test_parsing_context_builds_only_the_task_being_run

$(LOWEST_STAMP): pyproject.toml $(LOWEST_CONSTRAINTS)
	$(PYTHON) -m venv $(LOWEST_VENV)
	$(LOWEST_BIN)/python -m pip install -q --upgrade pip
	$(LOWEST_BIN)/python -m pip install -q --constraint $(LOWEST_CONSTRAINTS) -e '.[test]'
	@rm -rf airflow_provider_seatunnel.egg-info  # as above: one copy of the package's metadata
	@touch $@

.PHONY: test-lowest
test-lowest: check-java test-deps $(LOWEST_STAMP)
	PATH=$(LOWEST_BIN):$$PATH $(LOWEST_BIN)/python -m pytest -q -p no:cacheprovider $(LOWEST_TESTS)

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

# What the tests need from Debian: the servers the connector tests start privately on loopback
# (PostgreSQL, MariaDB, Redis, OpenSSH, InfluxDB 1.x, RabbitMQ), JDBC drivers (PostgreSQL, MariaDB, SQLite), Maven (it fetches
# the jars below into ~/.m2 and builds the Kafka broker's class path), and a headless Chromium with a
# font (the Airflow UI tests; Playwright drives it, downloads nothing). Installing them starts no system
# service (a policy-rc.d refuses it for the time of the install).
TEST_PACKAGES := postgresql libpostgresql-jdbc-java chromium fonts-dejavu-core mariadb-server libmariadb-java \
	redis-server openssh-server libxerial-sqlite-jdbc-java maven openjdk-17-jdk-headless influxdb rabbitmq-server
PG_JAR := /usr/share/java/postgresql.jar
# Every file of TEST_PACKAGES a test or fixture uses, one or more per package: `make test-deps` installs
# nothing only when all of them are there (tests/test_test_deps.py checks that each path a test names is
# here and each package has one). `make check-test-deps` lists what is missing.
TEST_FILES := /usr/lib/postgresql/*/bin/pg_ctl /usr/lib/postgresql/*/bin/initdb $(PG_JAR) \
	/usr/bin/chromium /usr/share/fonts/truetype/dejavu/DejaVuSans.ttf \
	/usr/sbin/mariadbd /usr/bin/mariadb-install-db /usr/bin/mariadb /usr/share/java/mariadb-java-client.jar \
	/usr/bin/redis-server /usr/sbin/sshd /usr/bin/ssh-keygen /usr/share/java/sqlite-jdbc.jar \
	/usr/bin/influxd /usr/lib/jvm/java-17-openjdk-*/bin/javac /usr/lib/rabbitmq/bin/rabbitmq-server /usr/bin/mvn

.PHONY: test-deps test-debs check-test-deps
test-deps: test-debs
# the Debian packages first: the jar targets below run mvn (order-only prerequisites of each)
test-debs:
	@missing=; for f in $(TEST_FILES); do [ -e "$$f" ] || missing="$$missing $$f"; done; \
	if [ -z "$$missing" ]; then exit 0; fi; \
	echo "missing:$$missing"; \
	if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	  echo "installing $(TEST_PACKAGES) (the connector tests' servers and drivers, Maven, Chromium for the UI test)"; \
	  had_policy=0; [ -e /usr/sbin/policy-rc.d ] && had_policy=1; \
	  if [ $$had_policy = 0 ]; then printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d; chmod +x /usr/sbin/policy-rc.d; fi; \
	  DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends $(TEST_PACKAGES) \
	    || { apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends $(TEST_PACKAGES); }; \
	  rc=$$?; [ $$had_policy = 1 ] || rm -f /usr/sbin/policy-rc.d; [ $$rc = 0 ] || exit $$rc; \
	else \
	  echo "error: the tests need the Debian packages $(TEST_PACKAGES)" >&2; \
	  echo "       Install them as root and retry: apt-get install -y --no-install-recommends $(TEST_PACKAGES)" >&2; \
	  exit 1; \
	fi

# The lists above and TEST_JARS below, one `name=words` line each (tests/test_test_deps.py reads them).
.PHONY: print-test-deps
print-test-deps:
	@echo "packages=$(TEST_PACKAGES)"; echo "files=$(TEST_FILES)"; echo "jars=$(TEST_JARS)"

# What `make test-deps` provides, whether it is there, and that every Debian path a test names is one of TEST_FILES
# and installed by TEST_PACKAGES (scripts/check_test_deps.py; no installs).
check-test-deps:
	@$(PYTHON) scripts/check_test_deps.py --packages "$(TEST_PACKAGES)" --files "$(TEST_FILES)" --jars "$(TEST_JARS)"

# MySQL Connector/J, the driver SeaTunnel's MySQL configs name (com.mysql.cj.jdbc.Driver), into Maven's local
# repository, where the Jdbc connector finds it (tests/runtime/test_jdbc_mysql.py needs it).
CONNECTOR_J := com.mysql:mysql-connector-j:9.5.0
CONNECTOR_J_JAR := $(HOME)/.m2/repository/com/mysql/mysql-connector-j/9.5.0/mysql-connector-j-9.5.0.jar
test-deps: $(CONNECTOR_J_JAR)
$(CONNECTOR_J_JAR): | test-debs
	@$(MVN_GET) -Dartifact=$(CONNECTOR_J) -Dtransitive=false \
	  || { echo "error: could not fetch $(CONNECTOR_J) with mvn (the MySQL Connector/J tests fail): check the network to Maven Central" >&2; exit 1; }

# Hadoop's S3A for the S3File connector (connectors/files/s3options.py names the jars it adds): hadoop-aws at the
# version of PySpark's bundled Hadoop, without the 686 MB AWS SDK bundle it declares, and the AWS SDK v2 modules S3A
# uses (about 19 MB with their dependencies); hadoop-aws last, the target that says all are there.
S3A_VERSION := 3.5.0
AWS_SDK_VERSION := 2.35.4
S3A_SDK_MODULES := s3 sts s3-transfer-manager apache-client netty-nio-client
# the dependency plugin 2.8 (Maven's default for `dependency:get`) resolves test dependencies too (missing here)
# Maven's local repository named as $(HOME)/.m2 (Java's user.home is the passwd entry's home, not $HOME; the
# connectors and the tests read $HOME/.m2/repository, so an empty HOME=$$(mktemp -d) is a fresh machine)
M2_REPO := $(HOME)/.m2/repository
MVN_GET := mvn -q -B -Dmaven.repo.local=$(M2_REPO) org.apache.maven.plugins:maven-dependency-plugin:3.8.1:get
S3A_JAR := $(HOME)/.m2/repository/org/apache/hadoop/hadoop-aws/$(S3A_VERSION)/hadoop-aws-$(S3A_VERSION).jar
test-deps: $(S3A_JAR)
$(S3A_JAR): | test-debs
	@ok=1; for m in $(S3A_SDK_MODULES); do \
	  $(MVN_GET) -Dartifact=software.amazon.awssdk:$$m:$(AWS_SDK_VERSION) || ok=0; done; [ $$ok = 1 ] && \
	$(MVN_GET) -Dartifact=software.amazon.s3.analyticsaccelerator:analyticsaccelerator-s3:1.3.1 -Dtransitive=false && \
	$(MVN_GET) -Dartifact=org.apache.hadoop:hadoop-aws:$(S3A_VERSION) -Dtransitive=false \
	  || { echo "error: could not fetch Hadoop's S3A with mvn (the S3File tests fail): check the network to Maven Central" >&2; exit 1; }

# Apache Kafka: the single-node KRaft broker the Kafka tests start (tests/kafka_server.py builds its class path from
# these with mvn, offline; log4j's SLF4J binding gives it a log), and Spark's Kafka source and sink with their
# dependencies (kafka-clients, commons-pool2, the token provider), and spark-avro (Kafka's format = avro; PySpark
# ships the Avro library itself).
KAFKA_VERSION := 4.2.0
# PySpark's release in .venv (.ci/constraints.txt)
SPARK_KAFKA_VERSION := $(shell sed -n 's/^pyspark==//p' $(CONSTRAINTS))
KAFKA_JAR := $(HOME)/.m2/repository/org/apache/kafka/kafka_2.13/$(KAFKA_VERSION)/kafka_2.13-$(KAFKA_VERSION).jar
SPARK_KAFKA_JAR := $(HOME)/.m2/repository/org/apache/spark/spark-sql-kafka-0-10_2.13/$(SPARK_KAFKA_VERSION)/spark-sql-kafka-0-10_2.13-$(SPARK_KAFKA_VERSION).jar
test-deps: $(KAFKA_JAR) $(SPARK_KAFKA_JAR)
$(KAFKA_JAR): | test-debs
	@$(MVN_GET) -Dartifact=org.apache.logging.log4j:log4j-slf4j-impl:2.25.3 && \
	$(MVN_GET) -Dartifact=org.apache.kafka:kafka_2.13:$(KAFKA_VERSION) \
	  || { echo "error: could not fetch Apache Kafka with mvn (the Kafka tests fail): check the network to Maven Central" >&2; exit 1; }
$(SPARK_KAFKA_JAR): | test-debs
	@$(MVN_GET) -Dartifact=org.apache.spark:spark-sql-kafka-0-10_2.13:$(SPARK_KAFKA_VERSION) \
	  || { echo "error: could not fetch Spark's Kafka source with mvn (the Kafka connector tests fail): check the network to Maven Central" >&2; exit 1; }
SPARK_AVRO_JAR := $(HOME)/.m2/repository/org/apache/spark/spark-avro_2.13/$(SPARK_KAFKA_VERSION)/spark-avro_2.13-$(SPARK_KAFKA_VERSION).jar
test-deps: $(SPARK_AVRO_JAR)
$(SPARK_AVRO_JAR): | test-debs
	@$(MVN_GET) -Dartifact=org.apache.spark:spark-avro_2.13:$(SPARK_KAFKA_VERSION) -Dtransitive=false \
	  || { echo "error: could not fetch spark-avro with mvn (the Kafka avro tests fail): check the network to Maven Central" >&2; exit 1; }

# Delta Lake for the Delta connector: delta-spark built for PySpark's minor version (a build of another minor half
# works; connectors/delta/checks.py chooses the same artifact) and delta-storage, for each PySpark the tests run on:
# .venv's (.ci/constraints.txt) and the lowest-versions environment's (.ci/constraints-lowest.txt).
# The Delta kernel modules its pom also lists are not needed.
DELTA_VERSION := 4.4.0
DELTA_SPARKS := $(sort $(shell sed -n 's/^pyspark==\([0-9]*\.[0-9]*\).*/\1/p' $(CONSTRAINTS) $(LOWEST_CONSTRAINTS)))
DELTA_JARS := $(foreach m,$(DELTA_SPARKS),$(HOME)/.m2/repository/io/delta/delta-spark_$(m)_2.13/$(DELTA_VERSION)/delta-spark_$(m)_2.13-$(DELTA_VERSION).jar)
test-deps: $(DELTA_JARS)
# the minor version from the jar's name: delta-spark_<minor>_2.13-<version>.jar
$(DELTA_JARS): | test-debs
	@$(MVN_GET) -Dartifact=io.delta:delta-storage:$(DELTA_VERSION) -Dtransitive=false && \
	$(MVN_GET) -Dartifact=io.delta:delta-spark_$(word 2,$(subst _, ,$(notdir $@)))_2.13:$(DELTA_VERSION) -Dtransitive=false \
	  || { echo "error: could not fetch Delta Lake with mvn (the Delta connector tests fail): check the network to Maven Central" >&2; exit 1; }

# Apache Iceberg for the Iceberg connector: its Spark runtime built for Spark 4.1 (connectors/iceberg/checks.py chooses
# the artifact of PySpark's minor version; none is published for Spark 4.2, so the Iceberg runtime tests run in the
# lowest-versions environment, PySpark 4.1: LOWEST_TESTS). One shaded jar, no dependencies.
ICEBERG_VERSION := 1.12.0
ICEBERG_SPARK := 4.1
ICEBERG_JAR := $(HOME)/.m2/repository/org/apache/iceberg/iceberg-spark-runtime-$(ICEBERG_SPARK)_2.13/$(ICEBERG_VERSION)/iceberg-spark-runtime-$(ICEBERG_SPARK)_2.13-$(ICEBERG_VERSION).jar
test-deps: $(ICEBERG_JAR)
$(ICEBERG_JAR): | test-debs
	@$(MVN_GET) -Dartifact=org.apache.iceberg:iceberg-spark-runtime-$(ICEBERG_SPARK)_2.13:$(ICEBERG_VERSION) -Dtransitive=false \
	  || { echo "error: could not fetch Apache Iceberg with mvn (the Iceberg connector tests fail): check the network to Maven Central" >&2; exit 1; }

# OpenSearch for the Elasticsearch connector's tests: a single node embedded in a JVM (tests/opensearch_server.py builds
# its class path from these with mvn, offline, and compiles its launcher with javac): the server with the Netty 4 HTTP
# transport and the reindex module (both modules of a distribution, here plugins on the class path), and log4j's core.
# 2.19 is the last OpenSearch line that runs on Java 17.
OPENSEARCH_VERSION := 2.19.6
OPENSEARCH_JAR := $(HOME)/.m2/repository/org/opensearch/opensearch/$(OPENSEARCH_VERSION)/opensearch-$(OPENSEARCH_VERSION).jar
OPENSEARCH_REINDEX_JAR := $(HOME)/.m2/repository/org/opensearch/plugin/reindex-client/$(OPENSEARCH_VERSION)/reindex-client-$(OPENSEARCH_VERSION).jar
test-deps: $(OPENSEARCH_REINDEX_JAR)
# the reindex module last: the target that says all are there
$(OPENSEARCH_REINDEX_JAR): | test-debs
	@$(MVN_GET) -Dartifact=org.apache.logging.log4j:log4j-core:2.25.4 -Dtransitive=false && \
	$(MVN_GET) -Dartifact=org.opensearch:opensearch:$(OPENSEARCH_VERSION) && \
	$(MVN_GET) -Dartifact=org.opensearch.plugin:transport-netty4-client:$(OPENSEARCH_VERSION) && \
	$(MVN_GET) -Dartifact=org.opensearch.plugin:reindex-client:$(OPENSEARCH_VERSION) \
	  || { echo "error: could not fetch OpenSearch with mvn (the Elasticsearch tests fail): check the network to Maven Central" >&2; exit 1; }
# Apache Cassandra for the Cassandra connector's tests: a single node embedded in a JVM (tests/cassandra_server.py
# builds its class path from these with mvn, offline, and starts org.apache.cassandra.service.CassandraDaemon with a
# generated cassandra.yaml): cassandra-all with its dependencies (about 70 MB). 5.0 runs on Java 17.
CASSANDRA_VERSION := 5.0.6
CASSANDRA_JAR := $(HOME)/.m2/repository/org/apache/cassandra/cassandra-all/$(CASSANDRA_VERSION)/cassandra-all-$(CASSANDRA_VERSION).jar
test-deps: $(CASSANDRA_JAR)
$(CASSANDRA_JAR): | test-debs
	@$(MVN_GET) -Dartifact=org.apache.cassandra:cassandra-all:$(CASSANDRA_VERSION) \
	  || { echo "error: could not fetch Apache Cassandra with mvn (the Cassandra tests fail): check the network to Maven Central" >&2; exit 1; }

# HBase for the Hbase connector's tests: a standalone HBase (its own ZooKeeper, a master, a region server) and its
# Thrift 1 gateway in one JVM (tests/hbase_server.py builds its class path from hbase-thrift's dependencies with
# mvn, offline, and compiles its launcher with javac). Maven Central has HBase 2.6's jars built against Hadoop 2.10
# only; they run on Java 17 with the --add-opens the fixture passes.
HBASE_VERSION := 2.6.1
HBASE_THRIFT_JAR := $(HOME)/.m2/repository/org/apache/hbase/hbase-thrift/$(HBASE_VERSION)/hbase-thrift-$(HBASE_VERSION).jar
test-deps: $(HBASE_THRIFT_JAR)
$(HBASE_THRIFT_JAR): | test-debs
	@$(MVN_GET) -Dartifact=org.apache.hbase:hbase-thrift:$(HBASE_VERSION) \
	  || { echo "error: could not fetch HBase with mvn (the Hbase tests fail): check the network to Maven Central" >&2; exit 1; }

# HDFS for the Paimon-on-HDFS tests and HdfsFile's round trip on HDFS: one NameNode and one DataNode in a JVM
# (tests/hdfs_server.py, its launcher compiled with javac) from Hadoop 2.10.2's jars, which hbase-thrift's
# dependencies above bring (hadoop-hdfs, hadoop-common, hadoop-hdfs-client): no download of its own.
# check-test-deps checks the NameNode's jar.
HDFS_JAR := $(HOME)/.m2/repository/org/apache/hadoop/hadoop-hdfs/2.10.2/hadoop-hdfs-2.10.2.jar
$(HDFS_JAR): $(HBASE_THRIFT_JAR)

# ActiveMQ Classic's broker for the ActiveMQ connector's tests (tests/activemq_server.py): activemq-broker,
# activemq-stomp and activemq-jaas 5.18 with their dependencies (tests/activemq/pom.xml), copied into
# .cache/activemq/lib, the broker's whole class path at run time (nothing read from ~/.m2 then); the launcher
# tests/activemq/Broker.java runs in Java's source-file mode (no javac step).
ACTIVEMQ_LIB := $(abspath .cache/activemq/lib)
ACTIVEMQ_JAR := $(ACTIVEMQ_LIB)/activemq-broker-5.18.6.jar
test-deps: $(ACTIVEMQ_JAR)
$(ACTIVEMQ_JAR): tests/activemq/pom.xml | test-debs
	@rm -rf $(ACTIVEMQ_LIB) && mvn -q -B -Dmaven.repo.local=$(M2_REPO) -f tests/activemq/pom.xml \
	  org.apache.maven.plugins:maven-dependency-plugin:3.8.1:copy-dependencies -DincludeScope=runtime \
	  -DoutputDirectory=$(ACTIVEMQ_LIB) && test -f $@ \
	  || { echo "error: could not fetch ActiveMQ's broker with mvn (the ActiveMQ tests fail): check the network to Maven Central" >&2; exit 1; }
# RocketMQ's broker for the Rocketmq connector's tests (tests/rocketmq_server.py): rocketmq-broker 5.3.1 with its
# dependencies (tests/rocketmq/pom.xml; about 55 MB, RocksDB's jar the largest) copied into .cache/rocketmq/lib,
# the broker's whole class path at run time, less the jars it never loads here (gRPC's shaded Netty, zstd, the
# OTLP exporters and their HTTP client). Maven Central serves no rocketmq-namesrv 5.x: the launcher
# tests/rocketmq/Server.java (Java's source-file mode) answers the name server's few requests in the same JVM.
ROCKETMQ_LIB := $(abspath .cache/rocketmq/lib)
ROCKETMQ_JAR := $(ROCKETMQ_LIB)/rocketmq-broker-5.3.1.jar
ROCKETMQ_EXCLUDES := grpc-netty-shaded,zstd-jni,kotlin-stdlib,kotlin-stdlib-common,kotlin-stdlib-jdk7
ROCKETMQ_EXCLUDES := $(ROCKETMQ_EXCLUDES),kotlin-stdlib-jdk8,okhttp,okio,okio-jvm,opentelemetry-exporter-otlp
ROCKETMQ_EXCLUDES := $(ROCKETMQ_EXCLUDES),opentelemetry-exporter-otlp-common,opentelemetry-exporter-sender-okhttp
ROCKETMQ_EXCLUDES := $(ROCKETMQ_EXCLUDES),awaitility,hamcrest
test-deps: $(ROCKETMQ_JAR)
$(ROCKETMQ_JAR): tests/rocketmq/pom.xml | test-debs
	@rm -rf $(ROCKETMQ_LIB) && mvn -q -B -Dmaven.repo.local=$(M2_REPO) -f tests/rocketmq/pom.xml \
	  org.apache.maven.plugins:maven-dependency-plugin:3.8.1:copy-dependencies -DincludeScope=runtime \
	  -DexcludeArtifactIds=$(ROCKETMQ_EXCLUDES) -DoutputDirectory=$(ROCKETMQ_LIB) && test -f $@ \
	  || { echo "error: could not fetch RocketMQ's broker with mvn (the Rocketmq tests fail): check the network to Maven Central" >&2; exit 1; }
# A Pulsar standalone for the Pulsar connector's tests (tests/pulsar_server.py): pulsar-broker 4.0 with its
# dependencies (tests/pulsar/pom.xml: the broker, its embedded BookKeeper and RocksDB metadata store,
# PulsarStandaloneStarter; about 235 MB) fetched into ~/.m2, and their class path written to .cache/pulsar (resolved
# online here: its version ranges cannot be resolved offline later).
PULSAR_CLASSPATH := $(abspath .cache/pulsar/classpath.txt)
test-deps: $(PULSAR_CLASSPATH)
$(PULSAR_CLASSPATH): tests/pulsar/pom.xml | test-debs
	@mkdir -p $(dir $@) && mvn -q -B -Dmaven.repo.local=$(M2_REPO) -f tests/pulsar/pom.xml \
	  org.apache.maven.plugins:maven-dependency-plugin:3.8.1:build-classpath -Dmdep.includeScope=runtime \
	  -Dmdep.outputFile=$@.tmp && mv $@.tmp $@ \
	  || { rm -f $@.tmp; echo "error: could not fetch Pulsar's broker with mvn (the Pulsar tests fail): check the network to Maven Central" >&2; exit 1; }
# FerretDB (a MongoDB wire-protocol server over SQLite) for the MongoDB connector tests (tests/ferretdb.py), built
# from the Go module proxy with Go (/usr/local/go/bin or PATH) into .cache/ferretdb: GOPATH, the module and build
# caches under .cache/go, so an empty HOME works. The module's zip leaves out the version file the binary's
# start-up requires; it is written into a copy of the module before `go build`.
FERRETDB_VERSION := v1.24.2
FERRETDB := $(abspath .cache/ferretdb/ferretdb-$(FERRETDB_VERSION))
GO ?= $(firstword $(wildcard /usr/local/go/bin/go) $(shell command -v go))
GO_ENV := GOPATH=$(abspath .cache/go) GOCACHE=$(abspath .cache/go/build) GOMODCACHE=$(abspath .cache/go/mod) \
	GOFLAGS=-modcacherw GOTOOLCHAIN=local
test-deps: $(FERRETDB)
$(FERRETDB):
	@[ -n "$(GO)" ] || { echo "error: Go is needed to build FerretDB (the MongoDB tests fail): install Go 1.22 or later" >&2; exit 1; }
	@mkdir -p .cache/ferretdb && src=$$($(GO_ENV) $(GO) mod download -json github.com/FerretDB/FerretDB@$(FERRETDB_VERSION) \
	  | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",*$$/\1/p') && [ -n "$$src" ] && \
	rm -rf .cache/ferretdb/src && cp -r "$$src" .cache/ferretdb/src && chmod -R u+w .cache/ferretdb/src && \
	echo $(FERRETDB_VERSION) > .cache/ferretdb/src/build/version/version.txt && \
	( cd .cache/ferretdb/src && $(GO_ENV) $(GO) build -trimpath -o $@.tmp ./cmd/ferretdb ) && mv $@.tmp $@ && \
	rm -rf .cache/ferretdb/src \
	  || { echo "error: could not build FerretDB $(FERRETDB_VERSION) with Go (the MongoDB tests fail): check the Go module proxy" >&2; exit 1; }

# SeaTunnel's own engine (Zeta 2.3.8) for the parity tests (tests/parity, marker zeta) and `make parity`: the shared
# zeta folder's setup.sh (idempotent; from scratch about 30 s from Maven Central) with the Kafka connector and the
# JDBC drivers the parity configs use (benchmarks/parity/engines.py names the same). Without the folder the parity
# tests skip, saying so.
ZETA_DIR ?= $(firstword $(wildcard $(SEATUNNEL_ZETA_DIR) $(abspath ..)/shared/zeta /work/shared/zeta))
ZETA_SETUP_ARGS := --connectors kafka,elasticsearch,rabbitmq,influxdb --lib org.postgresql:postgresql:42.7.4,com.mysql:mysql-connector-j:8.4.0
.PHONY: zeta-setup parity
test-deps: zeta-setup
zeta-setup: | test-debs
	@if [ -n "$(ZETA_DIR)" ] && [ -x "$(ZETA_DIR)/setup.sh" ]; then \
	  "$(ZETA_DIR)/setup.sh" $(ZETA_SETUP_ARGS) >/dev/null || { echo "error: $(ZETA_DIR)/setup.sh failed (the parity tests fail)" >&2; exit 1; }; \
	else echo "note: no SeaTunnel zeta folder (set SEATUNNEL_ZETA_DIR): the parity tests will skip"; fi

# The parity benchmark: every config of benchmarks/parity on Zeta and the project (docs/parity.md); the report
# goes to benchmarks/results/parity.md. PARITY_ARGS="--only NAME --runs 3" narrows or repeats it.
parity: check-java test-deps $(STAMP)
	$(BIN)/python benchmarks/parity/run.py --report benchmarks/results/parity.md $(PARITY_ARGS)

# Every jar `make test-deps` fetches into ~/.m2 (`make check-test-deps` lists them)
TEST_JARS := $(CONNECTOR_J_JAR) $(S3A_JAR) $(KAFKA_JAR) $(SPARK_KAFKA_JAR) $(SPARK_AVRO_JAR) $(DELTA_JARS) $(ICEBERG_JAR) \
	$(OPENSEARCH_JAR) $(OPENSEARCH_REINDEX_JAR) $(CASSANDRA_JAR) $(HBASE_THRIFT_JAR) $(HDFS_JAR) $(ACTIVEMQ_JAR) \
	$(ROCKETMQ_JAR) $(PULSAR_CLASSPATH)

# ruff; the layers (config -> spi -> plan -> connectors -> runtime -> hooks -> operators -> cli, see
# pyproject.toml's import-linter contracts); the connectors type-checked against the contract in spi/.
lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/lint-imports --no-cache
	$(BIN)/mypy

# The whole suite in .venv and, beside it, LOWEST_TESTS in the lowest-versions environment (both always run; the
# exit code is non-zero when either fails). The lowest-versions environment, when it must be built, installs
# (mostly downloads) while the suite starts; its install log is .cache/lowest-install.log, its tests' output
# .cache/lowest-tests.log, printed after the main suite's.
LOWEST_LOG := .cache/lowest-install.log
LOWEST_TEST_LOG := .cache/lowest-tests.log
# The suite runs on TEST_WORKERS pytest-xdist workers, a whole test module per worker at a time (module-scoped
# servers stay with their tests; each worker starts the session servers it needs on its own free ports). Three on
# 2 cores: with two the machine was 121 % busy of 200 % (the workers mostly wait on JVMs, servers and Airflow);
# a third costs one more start of each session server it uses (SparkSession, Kafka, MariaDB, Redis, the Hive
# metastore: about 40 CPU s in all; README, Development) and at most 3.3 GiB of memory (the conformance module,
# every server at once).
TEST_WORKERS ?= 3
# The lowest-versions tests run in one process beside the main suite's workers (about 4 minutes, in the first
# part of the main suite's 20); LOWEST_WORKERS=2 deals their modules to two xdist workers.
LOWEST_WORKERS ?= 1
LOWEST_XDIST := $(if $(filter-out 0 1,$(LOWEST_WORKERS)),-n $(LOWEST_WORKERS) --dist loadfile --no-loadscope-reorder,-p no:xdist)
# On a new machine the Debian packages come first; then the jars and SeaTunnel's engine (Maven Central, log
# .cache/test-deps.log) download while pip builds the venv, as two makes side by side (never two mvn at once).
TEST_DEPS_LOG := .cache/test-deps.log
test: check-java test-debs
	@mkdir -p .cache; ( $(MAKE) --no-print-directory test-deps > $(TEST_DEPS_LOG) 2>&1; echo $$? > $(TEST_DEPS_LOG).rc ) & \
	$(MAKE) --no-print-directory $(STAMP); rc=$$?; wait; cat $(TEST_DEPS_LOG); \
	if [ $$rc != 0 ] || [ "$$(cat $(TEST_DEPS_LOG).rc)" != 0 ]; then echo "could not install the test dependencies" >&2; exit 1; fi
	@$(MAKE) --no-print-directory lint
	@rm -f $(LOWEST_LOG).rc $(LOWEST_TEST_LOG) $(LOWEST_TEST_LOG).rc; \
	( if $(MAKE) --no-print-directory $(LOWEST_STAMP) > $(LOWEST_LOG) 2>&1; then echo 0 > $(LOWEST_LOG).rc; \
	    PATH=$(LOWEST_BIN):$$PATH $(LOWEST_BIN)/python -m pytest -q -p no:cacheprovider $(LOWEST_XDIST) --durations=10 \
	      $(LOWEST_TESTS) > $(LOWEST_TEST_LOG) 2>&1; echo $$? > $(LOWEST_TEST_LOG).rc; \
	  else echo 1 > $(LOWEST_LOG).rc; fi ) & \
	$(BIN)/python -m pytest -q -n $(TEST_WORKERS) --dist loadfile --no-loadscope-reorder --durations=25; rc=$$?; \
	if [ $$rc -eq 5 ]; then echo "no tests collected"; rc=0; fi; \
	wait; echo; echo "== the lowest-versions environment ($(LOWEST_CONSTRAINTS)), run beside the suite above"; \
	if [ "$$(cat $(LOWEST_LOG).rc 2>/dev/null)" != 0 ]; then tail -n 40 $(LOWEST_LOG); echo "could not build $(LOWEST_VENV)"; exit 1; fi; \
	cat $(LOWEST_TEST_LOG); lrc=$$(cat $(LOWEST_TEST_LOG).rc 2>/dev/null || echo 1); \
	if [ "$$lrc" != 0 ]; then echo "the lowest-versions tests failed (pytest exit $$lrc)"; rc=1; fi; \
	if [ $$rc != 0 ]; then echo "make test: FAILED (the main suite or the lowest-versions tests above)"; fi; \
	exit $$rc

# The fast unit tests alone (seconds: no JVM, no server, no real Airflow; tests/markers.py marks the rest
# `integration`): SEATUNNEL_UNIT=1 fails a unit test that starts Java or a server, and runs the property tests
# with a quarter of their examples. `make integration` runs the integration tests, `MARK=postgres` (or spark,
# mariadb, redis, rabbitmq, sftp, ftp, s3, kafka, hive, hdfs, airflow, airflow_services, browser, zeta) those of one server.
.PHONY: unit integration
# the unit tests keep both cores busy on their own (no waits): one worker per core
UNIT_WORKERS ?= 2
unit: $(STAMP)
	SEATUNNEL_UNIT=1 $(BIN)/python -m pytest -q -p no:cacheprovider -n $(UNIT_WORKERS) -m "not integration and not slow"

MARK ?= integration
integration: check-java test-deps $(STAMP)
	$(BIN)/python -m pytest -q -p no:cacheprovider -n $(TEST_WORKERS) --dist loadfile --no-loadscope-reorder \
	  -m "($(MARK)) and not slow"

# The end-to-end trials too long for `make test` (pytest marker `slow`: the 5,000,000-row Console run with the
# driver capped at 512 MB, the CeleryExecutor with two workers); run before a release and after changing what they cover.
.PHONY: test-slow
test-slow: check-java test-deps $(STAMP)
	$(BIN)/python -m pytest -q -m slow

bench: $(STAMP)
	$(BIN)/python benchmarks/compile_speed.py

docs: $(STAMP)
	$(BIN)/python scripts/option_docs.py

clean:
	rm -rf $(VENV) .cache .pytest_cache .demo dist build

# The wheel and sdist of a release, into dist/ (docs/install.md: installing from the wheel), checked by twine.
# Built without isolation, with the venv's setuptools (the `test` extra): nothing is downloaded. The build leaves
# <name>.egg-info beside the sources: removed, as after `make venv`.
DIST_DIR := dist
dist: $(STAMP)
	rm -rf $(DIST_DIR) build
	$(BIN)/python -m build --no-isolation --outdir $(DIST_DIR) .
	@rm -rf build airflow_provider_seatunnel.egg-info
	$(BIN)/twine check --strict $(DIST_DIR)/*

# -- A Spark Connect server (Connect mode): `make connect-server`, `make connect-server-stop` ----------
# From the venv's PySpark, in the background, bound to loopback, clients authenticated by a token
# kept in .cache/connect/token (0600). CONNECT_MASTER=spark://127.0.0.1:7077 runs it on `make cluster`.
CONNECT_DIR := $(abspath .cache/connect)
SPARK_CONNECT_PORT ?= 15002
CONNECT_MASTER ?= local[*]

.PHONY: connect-server connect-server-stop

connect-server: check-java $(STAMP)
	@$(BIN)/python -m airflow_provider_seatunnel.runtime.connect_server start --dir $(CONNECT_DIR) \
	  --port $(SPARK_CONNECT_PORT) --master '$(CONNECT_MASTER)'

connect-server-stop:
	@if [ -x $(BIN)/python ]; then \
	  $(BIN)/python -m airflow_provider_seatunnel.runtime.connect_server stop --dir $(CONNECT_DIR); fi

# -- A Spark standalone cluster on this machine: `make cluster`, `make cluster-stop` -------------------
# One master and one worker from the venv's PySpark, in the background, on loopback; pids, logs and
# the worker's work directory live under .cache/cluster. Point Airflow at it with the connection
# printed at start (client deploy mode: Python drivers cannot run in standalone cluster mode).
CLUSTER_DIR := $(abspath .cache/cluster)
SPARK_MASTER_PORT ?= 7077
SPARK_MASTER_WEBUI_PORT ?= 8080
SPARK_WORKER_WEBUI_PORT ?= 8081
SPARK_WORKER_CORES ?= 2
SPARK_WORKER_MEMORY ?= 2g

.PHONY: cluster cluster-stop

cluster: check-java $(STAMP)
	@mkdir -p $(CLUSTER_DIR)/work $(CLUSTER_DIR)/logs $(CLUSTER_DIR)/local
	@if [ -f $(CLUSTER_DIR)/master.pid ] && kill -0 "$$(cat $(CLUSTER_DIR)/master.pid)" 2>/dev/null; then \
	  echo "a Spark cluster is already running (master pid $$(cat $(CLUSTER_DIR)/master.pid)); make cluster-stop stops it"; \
	  exit 0; \
	fi; \
	export SPARK_HOME="$$($(BIN)/python -c 'import importlib.util as u; print(u.find_spec("pyspark").submodule_search_locations[0])')" \
	  SPARK_WORKER_DIR=$(CLUSTER_DIR)/work SPARK_LOG_DIR=$(CLUSTER_DIR)/logs SPARK_LOCAL_DIRS=$(CLUSTER_DIR)/local \
	  PYSPARK_PYTHON=$(BIN)/python; \
	nohup $(BIN)/spark-class org.apache.spark.deploy.master.Master --host 127.0.0.1 --port $(SPARK_MASTER_PORT) \
	  --webui-port $(SPARK_MASTER_WEBUI_PORT) > $(CLUSTER_DIR)/master.log 2>&1 < /dev/null & \
	echo $$! > $(CLUSTER_DIR)/master.pid; \
	nohup $(BIN)/spark-class org.apache.spark.deploy.worker.Worker spark://127.0.0.1:$(SPARK_MASTER_PORT) \
	  --host 127.0.0.1 --cores $(SPARK_WORKER_CORES) --memory $(SPARK_WORKER_MEMORY) \
	  --webui-port $(SPARK_WORKER_WEBUI_PORT) --work-dir $(CLUSTER_DIR)/work > $(CLUSTER_DIR)/worker.log 2>&1 < /dev/null & \
	echo $$! > $(CLUSTER_DIR)/worker.pid; \
	for i in $$(seq 1 120); do \
	  if $(BIN)/python -c "import json, sys, urllib.request as r; \
	      s = json.load(r.urlopen('http://127.0.0.1:$(SPARK_MASTER_WEBUI_PORT)/json/', timeout=2)); \
	      sys.exit(0 if s.get('aliveworkers', 0) >= 1 else 1)" 2>/dev/null; then \
	    echo "Spark standalone cluster: spark://127.0.0.1:$(SPARK_MASTER_PORT) (UI http://127.0.0.1:$(SPARK_MASTER_WEBUI_PORT), $(SPARK_WORKER_CORES) cores, $(SPARK_WORKER_MEMORY))"; \
	    echo 'Airflow connection: AIRFLOW_CONN_SPARK_CLUSTER={"conn_type": "spark", "host": "spark://127.0.0.1", "port": $(SPARK_MASTER_PORT), "extra": {"deploy-mode": "client", "master_ui_port": $(SPARK_MASTER_WEBUI_PORT)}}'; \
	    echo "logs: $(CLUSTER_DIR); stop: make cluster-stop"; \
	    exit 0; \
	  fi; \
	  sleep 1; \
	done; \
	echo "error: the Spark worker did not register with the master within 120 s; logs:" >&2; \
	tail -n 20 $(CLUSTER_DIR)/master.log $(CLUSTER_DIR)/worker.log >&2; \
	$(MAKE) --no-print-directory cluster-stop; exit 1

cluster-stop:
	@for name in worker master; do \
	  f=$(CLUSTER_DIR)/$$name.pid; [ -f $$f ] || continue; pid=$$(cat $$f); \
	  if kill -0 $$pid 2>/dev/null; then \
	    kill $$pid; \
	    for i in $$(seq 1 40); do kill -0 $$pid 2>/dev/null || break; sleep 0.5; done; \
	    if kill -0 $$pid 2>/dev/null; then kill -9 $$pid; fi; \
	    echo "stopped the Spark $$name (pid $$pid)"; \
	  fi; \
	  rm -f $$f; \
	done

