"""The hook classes that name this provider's connection types (their forms: :mod:`..connection_forms`).

Each class only names its type for Airflow (``conn_type``, the id attribute, the shown name): Airflow
reads the forms from the provider's metadata without importing them. A connection of one of these
types is read by the connector (or, for ``seatunnel_spark``, by :class:`.seatunnel.SeaTunnelHook`)
exactly as a connection of the usual type.
"""

from __future__ import annotations

from typing import Any

from airflow.sdk import BaseHook

from ..connection_forms import SPARK_TYPES


class _ConnectionType(BaseHook):
    """A connection type of this provider: nothing to connect to by itself."""

    conn_type: str

    def get_conn(self) -> Any:
        raise NotImplementedError(f"a {self.conn_type} connection is read by the SeaTunnel tasks that name it")


class SeaTunnelSparkConnection(_ConnectionType):
    conn_type = "seatunnel_spark"
    conn_name_attr = "spark_conn_id"
    default_conn_name = "spark_default"
    hook_name = "Spark (Apache SeaTunnel)"


class SeaTunnelJdbcConnection(_ConnectionType):
    conn_type = "seatunnel_jdbc"
    conn_name_attr = "jdbc_conn_id"
    default_conn_name = "jdbc_default"
    hook_name = "JDBC (Apache SeaTunnel Jdbc)"


class SeaTunnelRedisConnection(_ConnectionType):
    conn_type = "seatunnel_redis"
    conn_name_attr = "redis_conn_id"
    default_conn_name = "redis_default"
    hook_name = "Redis (Apache SeaTunnel Redis)"


class SeaTunnelKafkaConnection(_ConnectionType):
    conn_type = "seatunnel_kafka"
    conn_name_attr = "kafka_conn_id"
    default_conn_name = "kafka_default"
    hook_name = "Kafka (Apache SeaTunnel Kafka)"


class SeaTunnelHttpConnection(_ConnectionType):
    conn_type = "seatunnel_http"
    conn_name_attr = "http_conn_id"
    default_conn_name = "http_default"
    hook_name = "HTTP API (Apache SeaTunnel Http)"


class SeaTunnelS3Connection(_ConnectionType):
    conn_type = "seatunnel_s3"
    conn_name_attr = "aws_conn_id"
    default_conn_name = "aws_default"
    hook_name = "S3 (Apache SeaTunnel S3File)"


class SeaTunnelFtpConnection(_ConnectionType):
    conn_type = "seatunnel_ftp"
    conn_name_attr = "ftp_conn_id"
    default_conn_name = "ftp_default"
    hook_name = "FTP (Apache SeaTunnel FtpFile)"


class SeaTunnelSftpConnection(_ConnectionType):
    conn_type = "seatunnel_sftp"
    conn_name_attr = "sftp_conn_id"
    default_conn_name = "sftp_default"
    hook_name = "SFTP (Apache SeaTunnel SftpFile)"


class SeaTunnelModelConnection(_ConnectionType):
    conn_type = "seatunnel_model"
    conn_name_attr = "model_conn_id"
    default_conn_name = "model_default"
    hook_name = "Model API (Apache SeaTunnel LLM, Embedding)"


class SeaTunnelElasticsearchConnection(_ConnectionType):
    conn_type = "seatunnel_elasticsearch"
    conn_name_attr = "elasticsearch_conn_id"
    default_conn_name = "elasticsearch_default"
    hook_name = "Elasticsearch (Apache SeaTunnel Elasticsearch, Easysearch)"


class SeaTunnelDorisConnection(_ConnectionType):
    conn_type = "seatunnel_doris"
    conn_name_attr = "doris_conn_id"
    default_conn_name = "doris_default"
    hook_name = "Doris (Apache SeaTunnel Doris)"


class SeaTunnelStarRocksConnection(_ConnectionType):
    conn_type = "seatunnel_starrocks"
    conn_name_attr = "starrocks_conn_id"
    default_conn_name = "starrocks_default"
    hook_name = "StarRocks (Apache SeaTunnel StarRocks)"


class SeaTunnelSelectDBConnection(_ConnectionType):
    conn_type = "seatunnel_selectdb"
    conn_name_attr = "selectdb_conn_id"
    default_conn_name = "selectdb_default"
    hook_name = "SelectDB Cloud (Apache SeaTunnel SelectDBCloud)"


class SeaTunnelCassandraConnection(_ConnectionType):
    conn_type = "seatunnel_cassandra"
    conn_name_attr = "cassandra_conn_id"
    default_conn_name = "cassandra_default"
    hook_name = "Cassandra (Apache SeaTunnel Cassandra)"


class SeaTunnelPulsarConnection(_ConnectionType):
    conn_type = "seatunnel_pulsar"
    conn_name_attr = "pulsar_conn_id"
    default_conn_name = "pulsar_default"
    hook_name = "Pulsar (Apache SeaTunnel Pulsar)"


class SeaTunnelMongoDBConnection(_ConnectionType):
    conn_type = "seatunnel_mongodb"
    conn_name_attr = "mongo_conn_id"
    default_conn_name = "mongo_default"
    hook_name = "MongoDB (Apache SeaTunnel MongoDB)"


class SeaTunnelRocketMQConnection(_ConnectionType):
    conn_type = "seatunnel_rocketmq"
    conn_name_attr = "rocketmq_conn_id"
    default_conn_name = "rocketmq_default"
    hook_name = "RocketMQ (Apache SeaTunnel Rocketmq)"


class SeaTunnelIcebergConnection(_ConnectionType):
    conn_type = "seatunnel_iceberg"
    conn_name_attr = "iceberg_conn_id"
    default_conn_name = "iceberg_default"
    hook_name = "Iceberg catalog (Apache SeaTunnel Iceberg)"


def spark_master(conn_type: str, host: str | None, port: int | None) -> str:
    """The master URL of a Spark connection, as the Spark provider reads a ``spark`` one: a host holding
    a whole URL (or with no port) is the master as it is; else ``<type>://host``; the port appended."""
    if conn_type in SPARK_TYPES and host and ("://" in host or not port):
        master = host
    else:
        master = f"{conn_type}://{host or ''}"
    return f"{master}:{port}" if port else master


def seatunnel_spark_submit_hook() -> type:
    """The Spark provider's ``SparkSubmitHook``, reading a ``seatunnel_spark`` connection as a ``spark`` one
    (the provider builds a ``<type>://`` master for any other type)."""
    from airflow.providers.apache.spark.hooks.spark_submit import SparkSubmitHook

    class SparkSubmit(SparkSubmitHook):
        def _resolve_connection(self) -> dict[str, Any]:
            data = super()._resolve_connection()
            try:
                conn = self.get_connection(self._conn_id)
            except Exception:  # the provider defaulted to its master already and said so
                return data
            if conn.conn_type == "seatunnel_spark":
                data["master"] = spark_master("spark", conn.host, conn.port)
            return data

    return SparkSubmit
