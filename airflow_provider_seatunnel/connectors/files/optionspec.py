"""The file connectors' options, declared once: the file options every store shares
(:data:`FILE_OPTIONS`: format, names, partitions, codecs, save modes...), then each store's own
(:data:`S3_OPTIONS`, :data:`SERVER_OPTIONS`, :data:`HDFS_OPTIONS`, :func:`object_store_options`),
joined into one :class:`OptionSpec` per plugin (:func:`file_spec`).

Names, defaults and older names are SeaTunnel's. What a spec cannot state stays a check on the typed
values (:mod:`.checks`): a format's codecs, ``path`` or ``file_format_type`` required in a block or
each ``tables_configs`` item, the save modes' combinations, ``${transactionId}`` in file names while
transactions are on. Those options are declared as strings here, so that each problem is reported
once, by its check.
"""

from __future__ import annotations

from ...spi import SINK, SOURCE
from ...spi.optionspec import Option, OptionSpec
from .csvquote import QUOTE_MODES
from .options import DEFAULT_DELIMITER, DEFAULT_FILE_NAME, FORMATS

__all__ = ["FILE_OPTIONS", "HDFS_OPTIONS", "S3_OPTIONS", "SERVER_OPTIONS", "file_spec", "object_store_options"]

_SINK, _SOURCE = (SINK,), (SOURCE,)

FILE_OPTIONS: tuple[Option, ...] = (
    Option("path", identity=True, description="The directory (or, for a source, file) read or written; required."),
    Option("file_format_type", description=f"The files' format, one of {', '.join(FORMATS)}; required."),
    Option("tables_configs", "list", description="One block of these options per table (a multi-table source).",
           sections=_SOURCE),
    Option("field_delimiter", fallback=("delimiter",),
           description=f"Between the fields of text files (default {DEFAULT_DELIMITER!r}; csv: ',')."),
    Option("row_delimiter", default="\n", description="Between the rows of text files."),
    Option("compress_codec", default="none", description="The files' codec; which ones depend on the format."),
    Option("archive_compress_codec", default="none",
           description="The files read are archives (none, zip, tar, tar_gz): their text, csv, json, xml or excel "
           "entries are read, each as a file (parquet, orc and binary files are read as they are).",
           sections=_SOURCE),
    Option("encoding", default="UTF-8", description="The charset of text, csv, json and xml files."),
    Option("date_format", default="yyyy-MM-dd", description="How dates are written or read in text files."),
    Option("datetime_format", default="yyyy-MM-dd HH:mm:ss",
           description="How timestamps are written or read in text files (unset: a value's fraction of a second "
           "is written after the default pattern; set: the pattern exactly)."),
    Option("time_format", default="HH:mm:ss", description="How times are written or read in text files (unset: "
           "a value's fraction of a second is written after the default pattern; set: the pattern exactly)."),
    Option("parquet_timestamp_unit", "enum", "MILLIS", "parquet timestamps' unit: MILLIS (SeaTunnel's; a value "
           "with digits under the millisecond fails the write) or MICROS.", choices=("MILLIS", "MICROS"),
           sections=_SINK),
    Option("schema", "map", description="The fields of text, csv, json, xml and excel files read.",
           sections=_SOURCE),
    Option("read_columns", "list", description="The fields a source keeps.", sections=_SOURCE),
    Option("read_partitions", "list", description="The partition directories read (k=v).", sections=_SOURCE),
    Option("parse_partition_from_path", "bool", True, "k=v directories become columns.", sections=_SOURCE),
    Option("skip_header_row_number", "int", 0, "Rows skipped at the start of each file.", minimum=0,
           sections=_SOURCE),
    Option("file_filter_pattern", description="A regular expression the files read must match.",
           sections=_SOURCE),
    Option("sheet_name", description="The excel sheet read or written."),
    Option("xml_row_tag", default="RECORD", description="The element of each row in xml files."),
    Option("xml_root_tag", default="RECORDS", description="The root element of written xml files.",
           sections=_SINK),
    Option("xml_use_attr_format", "bool", False, "xml fields as attributes rather than elements."),
    Option("xml_whitespace", "enum", "KEEP", "Whitespace in written xml values: KEEP (as it is) or NORMALIZE "
           "(SeaTunnel 2.3.8's bytes: element text trimmed, each run of whitespace one space).",
           choices=("KEEP", "NORMALIZE"), sections=_SINK),
    Option("file_name_expression", default=DEFAULT_FILE_NAME,
           description="The written files' name; must contain ${transactionId} while transactions are on.",
           sections=_SINK),
    Option("filename_time_format", default="yyyy.MM.dd", description="The ${now} pattern in file names.",
           sections=_SINK),
    Option("is_enable_transaction", "bool", True, "Write through staging, published by the commit.",
           sections=_SINK),
    Option("batch_size", "int", 1000000, "Rows per written file at most.", minimum=1, sections=_SINK),
    Option("partition_by", "list", description="The fields partitioning the written files.", sections=_SINK),
    Option("partition_dir_expression", description="The partition directories' names (${k0}=${v0}...).",
           sections=_SINK),
    Option("is_partition_field_write_in_file", "bool", False, "Partition fields are written in the files too.",
           sections=_SINK),
    Option("sink_columns", "list", description="The fields written (all when unset).", sections=_SINK),
    Option("csv_string_quote_mode", "enum", "MINIMAL",
           "csv: ALL quotes every string field, MINIMAL only fields a reader would misread unquoted, NONE none "
           "(SeaTunnel 2.3.8's bytes; a field holding the delimiter or a line break is then unreadable).",
           choices=QUOTE_MODES, sections=_SINK),
    Option("enable_header_write", "bool", description="csv: a header row (default false); excel: the header "
           "row (default true).", sections=_SINK),
    Option("max_rows_in_memory", "int", description="excel: accepted, not needed here.", sections=_SINK),
    Option("schema_save_mode", default="CREATE_SCHEMA_WHEN_NOT_EXIST",
           description="What happens to the target directory before the write.", sections=_SINK),
    Option("data_save_mode", default="APPEND_DATA", description="What happens to the files already there.",
           sections=_SINK),
    Option("save_mode", "any", description="Legacy: accepted and ignored.", sections=_SINK),
    Option("custom_filename", "bool", description="Accepted and ignored, as in SeaTunnel.", sections=_SINK),
    Option("have_partition", "bool", description="Accepted and ignored, as in SeaTunnel.", sections=_SINK),
    Option("tmp_path", description="Where the staging goes (default: hidden under path).", sections=_SINK),
    Option("commit_lock_timeout", "any", 600, "Seconds a commit waits for the target's commit lock.",
           sections=_SINK),
)

S3_OPTIONS: tuple[Option, ...] = (
    Option("bucket", identity=True, description="s3a://name; required."),
    Option("fs.s3a.endpoint", description="The S3 endpoint."),
    Option("region", description="The bucket's region (default us-east-1)."),
    Option("access_key", secret=True, description="The access key id."),
    Option("secret_key", fallback=("access_secret",), secret=True, description="The secret key."),
    Option("aws_session_token", secret=True, description="A session token with temporary keys."),
    Option("fs.s3a.aws.credentials.provider", description="The S3A credentials provider class."),
    Option("hadoop_s3_properties", "map", description="Further fs.s3a.* settings."),
    Option("aws_conn_id", description="An Airflow connection of type aws: keys, endpoint, region."),
)

SERVER_OPTIONS: tuple[Option, ...] = (
    Option("host", identity=True, description="The server; required unless a connection names it."),
    Option("port", "any", identity=True, description="The server's port (default 21 FTP, 22 SFTP)."),
    Option("user", description="The login; required unless a connection names it."),
    Option("password", secret=True, description="The password."),
)

FTP_OPTIONS: tuple[Option, ...] = (
    Option("connection_mode", default="active_local", description="active_local or passive_local."),
    Option("ftp_conn_id", description="An Airflow connection of type ftp."),
)

SFTP_OPTIONS: tuple[Option, ...] = (
    Option("key_file", description="A private key file on the driver and executors."),
    Option("private_key", secret=True, description="A private key's text."),
    Option("host_key", description="The server's public host key."),
    Option("host_key_fingerprint", description="SHA256 fingerprints of accepted host keys (comma-separated)."),
    Option("known_hosts", description="A known_hosts file (default ~/.ssh/known_hosts)."),
    Option("strict_host_key_checking", "any", description="false accepts any host key."),
    Option("no_host_key_check", "any", description="true accepts any host key (Airflow's SSH name)."),
    Option("sftp_conn_id", description="An Airflow connection of type sftp."),
)

HDFS_OPTIONS: tuple[Option, ...] = (
    Option("fs.defaultFS", identity=True, description="The file system's URI (hdfs://namenode:8020); required."),
    Option("hdfs_site_path", description="An hdfs-site.xml read for the file system's settings."),
    Option("remote_user", description="Not applied: Spark reaches HDFS as the user it runs as."),
    Option("kerberos_principal", description="Plans, cannot run here (no Kerberos login)."),
    Option("kerberos_keytab_path", description="Plans, cannot run here (no Kerberos login)."),
)


def object_store_options(key_id: str, secret: str) -> tuple[Option, ...]:
    """The options of a store with an S3 API under its own plugin (OssFile...): its credential names."""
    return (
        Option("bucket", identity=True, description="<scheme>://name; required."),
        Option("endpoint", description="The store's endpoint."),
        Option("region", description="The store's region."),
        Option(key_id, secret=True, description="The access key id."),
        Option(secret, secret=True, description="The secret key."),
        Option("aws_session_token", secret=True, description="A session token with temporary keys."),
        Option("hadoop_s3_properties", "map", description="Further fs.s3a.* settings."),
        Option("aws_conn_id", description="An Airflow connection of type aws: keys, endpoint, region."),
    )


def file_spec(*store: Option) -> OptionSpec:
    """A file plugin's spec: its store's options, then the file options (identity: the store's, then path)."""
    return OptionSpec((*store, *FILE_OPTIONS))


FILE_SPEC = file_spec()
S3_SPEC = file_spec(*S3_OPTIONS)
FTP_SPEC = file_spec(*SERVER_OPTIONS, *FTP_OPTIONS)
SFTP_SPEC = file_spec(*SERVER_OPTIONS, *SFTP_OPTIONS)
HDFS_SPEC = file_spec(*HDFS_OPTIONS)
