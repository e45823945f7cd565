"""The connection forms of Airflow's UI for the connection extras this provider reads.

A form belongs to a connection type, and a type to one provider: the types the connectors read by
default (``spark``, ``jdbc``, ``redis``, ``kafka``, ``http``, ``aws``, ``ftp``, ``sftp``) are other
providers' and keep those providers' forms. So this provider declares types of its own, one per
connection it reads, each a form with every extra that connection's reader takes (its
``conn-fields``) and the standard fields relabelled or hidden (its ``ui-field-behaviour``): a
``seatunnel_redis`` connection is read exactly as a ``redis`` one, and so on, with no JSON extra to
write by hand. The readers take any connection type, so existing connections keep working.

The forms are declared as data in the provider's metadata (``connection-types`` with ``conn-fields``
and ``ui-field-behaviour``), which Airflow reads without importing a hook; each type's hook class
(``hooks.connections``) only names it. tests/test_docs_match_code.py checks that every extra the code
reads is a field of a form here, and every field is read.

Standard library only, and nothing from this package: Airflow loads it with the provider's metadata
in every process.
"""

from __future__ import annotations

from typing import Any

_HOOKS = "airflow_provider_seatunnel.hooks.connections"

#: The Spark connection extra naming the Spark History Server (``http://host:18080``), for the task's Spark UI link.
HISTORY_SERVER_EXTRA = "history_server_url"
#: The connection types of this provider that are read as Spark connections (the master in the host).
SPARK_TYPES = frozenset({"spark", "seatunnel_spark"})


def _field(label: str, description: str, kind: str = "string", **schema: Any) -> dict[str, Any]:
    """One extra of a form: its label, help text and JSON schema (``type`` may be null: the field is optional)."""
    return {"label": label, "description": description, "schema": {"type": [kind, "null"], **schema}}


def _secret(label: str, description: str) -> dict[str, Any]:
    return _field(label, description, format="password")


def _flag(label: str, description: str) -> dict[str, Any]:
    return _field(label, description, "boolean")


#: Each connection type's form: (type, hook class, shown name, extras, field behaviour). The extras are
#: read by: seatunnel_spark, hooks/seatunnel.py and operators/seatunnel.py (spark_ui_url) besides the Spark
#: provider's SparkSubmitHook; the others, the connector named in the shown name (its connection_options).
_FORMS: tuple[tuple[str, str, str, dict[str, dict[str, Any]], dict[str, Any]], ...] = (
    ("seatunnel_spark", "SeaTunnelSparkConnection", "Spark (Apache SeaTunnel)", {
        "deploy-mode": _field("Deploy mode", "client (the driver in the task) or cluster (YARN, Kubernetes)",
                              enum=["client", "cluster", None]),
        "spark-binary": _field("Spark binary", "the spark-submit command (default: spark-submit on PATH)"),
        "queue": _field("YARN queue", "the YARN queue the application is submitted to"),
        "namespace": _field("Kubernetes namespace", "the Kubernetes namespace of the driver and executors"),
        HISTORY_SERVER_EXTRA: _field("Spark History Server URL", "e.g. http://history:18080: the task's Spark UI "
                                     "link goes there once the driver is gone", format="url"),
        "master_ui_port": _field("Standalone master UI port", "the web UI port of a spark:// master (default "
                                 "8080), for the Spark UI link", "integer", minimum=1, maximum=65535),
        "yarn_resourcemanager_webapp_address": _field("YARN ResourceManager web address", "e.g. http://rm:8088, "
                                                      "for the Spark UI link of a YARN application", format="url"),
    }, {"hidden-fields": ["schema", "login", "password"],
        "relabeling": {"host": "Master (local[*], spark://host, yarn, k8s://https://host)"},
        "placeholders": {"host": "local[*]"}}),
    ("seatunnel_jdbc", "SeaTunnelJdbcConnection", "JDBC (Apache SeaTunnel Jdbc)", {
        "url": _field("JDBC URL", "the whole jdbc: URL (else one is built from host, port and schema)",
                      pattern="^jdbc:"),
        "driver_class": _field("Driver class", "e.g. org.postgresql.Driver; used only where [providers.jdbc] "
                               "allow_driver_class_in_extra = True (default: the URL's usual driver)"),
        "driver_path": _field("Driver path", "the driver's jar files or folders (: or , separated); used only "
                              "where [providers.jdbc] allow_driver_path_in_extra = True"),
    }, {"hidden-fields": ["host", "port", "schema"], "relabeling": {"login": "User"},
        "placeholders": {"url": "jdbc:postgresql://db:5432/shop"}}),
    ("seatunnel_redis", "SeaTunnelRedisConnection", "Redis (Apache SeaTunnel Redis)", {
        "db": _field("Database number", "the Redis database (db_num); default 0", "integer", minimum=0),
    }, {"hidden-fields": ["schema"], "relabeling": {"login": "User (ACL)"}, "placeholders": {"port": "6379"}}),
    ("seatunnel_kafka", "SeaTunnelKafkaConnection", "Kafka (Apache SeaTunnel Kafka)", {
        "bootstrap.servers": _field("Bootstrap servers", "host:port,host:port (else the host and port)"),
        "security.protocol": _field("Security protocol", "the client's security.protocol",
                                    enum=["PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL", None]),
        "sasl.mechanism": _field("SASL mechanism", "the client's sasl.mechanism (with a login and password: "
                                 "PLAIN credentials)"),
    }, {"hidden-fields": ["schema"], "relabeling": {"login": "SASL user", "password": "SASL password"},
        "placeholders": {"extra": '{"ssl.ca.location": "/etc/kafka/ca.pem"}: any other client setting'}}),
    ("seatunnel_http", "SeaTunnelHttpConnection", "HTTP API (Apache SeaTunnel Http)", {
        "headers": _field("Headers", "request headers as a JSON object, sent with every request (as are the "
                          "extra's other plain values; credential headers are hidden wherever options are shown)",
                          "object", format="json"),
    }, {"hidden-fields": [], "relabeling": {"host": "Base URL or host", "schema": "Scheme (http, https)",
                                            "login": "User (basic auth)", "password": "Password (basic auth)"},
        "placeholders": {"host": "https://api.example.com"}}),
    ("seatunnel_s3", "SeaTunnelS3Connection", "S3 (Apache SeaTunnel S3File)", {
        "endpoint_url": _field("Endpoint URL", "an S3-compatible endpoint (default: AWS)", format="url"),
        "region_name": _field("Region", "e.g. eu-west-1"),
        "aws_session_token": _secret("Session token", "temporary credentials' session token"),
    }, {"hidden-fields": ["schema", "port", "host"],
        "relabeling": {"login": "Access key id", "password": "Secret access key"}, "placeholders": {}}),
    ("seatunnel_ftp", "SeaTunnelFtpConnection", "FTP (Apache SeaTunnel FtpFile)", {
        "passive": _flag("Passive mode", "passive (default) or active data connections"),
    }, {"hidden-fields": ["schema"], "relabeling": {}, "placeholders": {"port": "21"}}),
    ("seatunnel_sftp", "SeaTunnelSftpConnection", "SFTP (Apache SeaTunnel SftpFile)", {
        "key_file": _field("Private key file", "path of the private key on the machines that run the pipeline"),
        "private_key": _secret("Private key", "the private key itself (PEM)"),
        "host_key": _field("Host key", "the server's public host key (known_hosts format, without the host)"),
        "known_hosts": _field("Known hosts file", "a known_hosts file to check the server's key against"),
        "no_host_key_check": _flag("Skip the host key check", "accept any server key (not for production)"),
    }, {"hidden-fields": ["schema"], "relabeling": {}, "placeholders": {"port": "22"}}),
    ("seatunnel_model", "SeaTunnelModelConnection", "Model API (Apache SeaTunnel LLM, Embedding)", {
        "api_path": _field("API URL", "the model API's endpoint (default: the provider's own)", format="url"),
        "secret_key": _secret("Secret key", "QIANFAN's secret key (with the password as its API key)"),
        "oauth_path": _field("OAuth URL", "QIANFAN's token endpoint", format="url"),
    }, {"hidden-fields": ["host", "port", "schema", "login"], "relabeling": {"password": "API key"},
        "placeholders": {"api_path": "https://api.openai.com/v1/chat/completions"}}),
    ("seatunnel_elasticsearch", "SeaTunnelElasticsearchConnection",
     "Elasticsearch (Apache SeaTunnel Elasticsearch, Easysearch)", {
        "scheme": _field("Scheme", "http or https, for a host given without one (default http)",
                         enum=["http", "https", None]),
        "verify_certs": _flag("Verify certificates", "check the server's TLS certificate (default true)"),
        "ca_certs": _field("CA certificates file", "a PEM file of the certificates trusted (https), on the machines "
                           "that run the pipeline"),
    }, {"hidden-fields": ["schema"], "relabeling": {"host": "Host or URL"}, "placeholders": {"port": "9200"}}),
    ("seatunnel_doris", "SeaTunnelDorisConnection", "Doris (Apache SeaTunnel Doris)", {
        "query_port": _field("Query port", "the frontends' MySQL-protocol port (default 9030)", "integer",
                             minimum=1, maximum=65535),
    }, {"hidden-fields": ["schema"], "relabeling": {"host": "Frontend host", "port": "Frontend HTTP port"},
        "placeholders": {"port": "8030", "query_port": "9030"}}),
    ("seatunnel_starrocks", "SeaTunnelStarRocksConnection", "StarRocks (Apache SeaTunnel StarRocks)", {
        "query_port": _field("Query port", "the frontends' MySQL-protocol port (default 9030)", "integer",
                             minimum=1, maximum=65535),
    }, {"hidden-fields": ["schema"], "relabeling": {"host": "Frontend host", "port": "Frontend HTTP port"},
        "placeholders": {"port": "8030", "query_port": "9030"}}),
    ("seatunnel_selectdb", "SeaTunnelSelectDBConnection", "SelectDB Cloud (Apache SeaTunnel SelectDBCloud)", {
        "query_port": _field("Query port", "the warehouse's MySQL-protocol port (default 9030)", "integer",
                             minimum=1, maximum=65535),
    }, {"hidden-fields": ["schema"], "relabeling": {"host": "Warehouse host", "port": "Warehouse HTTP port"},
        "placeholders": {"port": "8080", "query_port": "9030"}}),
    ("seatunnel_mongodb", "SeaTunnelMongoDBConnection", "MongoDB (Apache SeaTunnel MongoDB)", {
        "srv": _flag("SRV record", "connect with mongodb+srv:// (the host is the SRV name; no port)"),
        "authSource": _field("Authentication database", "default: the schema, when a login is given"),
    }, {"hidden-fields": [], "relabeling": {"schema": "Authentication database (authSource)"},
        "placeholders": {"port": "27017",
                         "extra": '{"tls": true}: any other field is a connection-string option'}}),
    ("seatunnel_cassandra", "SeaTunnelCassandraConnection", "Cassandra (Apache SeaTunnel Cassandra)", {
        "datacenter": _field("Local datacenter", "the datacenter of the driver's load balancing (default "
                             "datacenter1)"),
    }, {"hidden-fields": [], "relabeling": {"host": "Hosts (host or host:port, comma-separated)",
                                            "schema": "Keyspace"},
        "placeholders": {"port": "9042", "datacenter": "datacenter1"}}),
    ("seatunnel_rocketmq", "SeaTunnelRocketMQConnection", "RocketMQ (Apache SeaTunnel Rocketmq)", {
        "name_srv_addr": _field("Name servers", "several name servers, host:port separated by ';' (default: the "
                                "host and port)"),
    }, {"hidden-fields": ["schema", "login", "password"], "relabeling": {"host": "Name server host",
                                                                        "port": "Name server port"},
        "placeholders": {"port": "9876", "name_srv_addr": "ns1:9876;ns2:9876"}}),
    ("seatunnel_pulsar", "SeaTunnelPulsarConnection", "Pulsar (Apache SeaTunnel Pulsar)", {
        "admin_url": _field("Admin service URL", "the admin REST URL (default http://<host>:8080)", format="url"),
    }, {"hidden-fields": ["schema", "login"], "relabeling": {"password": "Token (JWT)"},
        "placeholders": {"port": "6650", "admin_url": "http://broker:8080"}}),
    ("seatunnel_iceberg", "SeaTunnelIcebergConnection", "Iceberg catalog (Apache SeaTunnel Iceberg)", {
        "type": _field("Catalog type", "rest (host: the catalog's URL) or jdbc (host: the database)",
                       enum=["rest", "jdbc", None]),
        "warehouse": _field("Warehouse", "the catalog's warehouse location"),
    }, {"hidden-fields": [], "relabeling": {"password": "Password or token"},
        "placeholders": {"extra": '{"io-impl": "..."}: any other catalog property'}}),
)

def connection_types() -> list[dict[str, Any]]:
    """The provider metadata's ``connection-types``: each type, its hook class, and its form."""
    return [{"connection-type": conn_type, "hook-class-name": f"{_HOOKS}.{hook}", "hook-name": name,
             "conn-fields": fields, "ui-field-behaviour": behaviour}
            for conn_type, hook, name, fields, behaviour in _FORMS]


def hook_classes() -> dict[str, str]:
    """Each connection type's hook class name (in ``hooks.connections``) and its shown name."""
    return {hook: conn_type for conn_type, hook, _name, _fields, _behaviour in _FORMS}


def form_fields() -> dict[str, frozenset[str]]:
    """The extras each connection type's form declares."""
    return {conn_type: frozenset(fields) for conn_type, _hook, _name, fields, _behaviour in _FORMS}
