"""The configs the parity harness runs on both engines, and what to compare of each.

A :class:`Case` names its config (under ``configs/``), the variables it is given besides ``out`` (the target
folder, one per engine and run), the file outputs it writes under ``out`` (sub-folder -> :class:`FileOut`),
and whether its rows are random (FakeSource without ``rows``: compared by count, columns and types, not
values; partition folders by their keys and number, not their values). Jdbc, Kafka, Elasticsearch, RabbitMQ,
InfluxDB, Cassandra and Paimon cases name their target (``postgres``, ``mariadb``, ``kafka``, ``elasticsearch``,
``rabbitmq``, ``influxdb``, ``cassandra``; ``paimon``: a fresh local warehouse, and one holding the source tables):
the runner starts the test server and passes its address. ``ci`` marks the fast subset tests/parity runs.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

CONFIGS = Path(__file__).resolve().parent / "configs"
DATA = Path(__file__).resolve().parent / "data"


@dataclass(frozen=True)
class FileOut:
    """A file sink's target sub-folder: its format and the options that change how its files parse."""

    fmt: str
    delimiter: str | None = None
    header: bool = False


@dataclass(frozen=True)
class Case:
    name: str
    config: str
    files: dict[str, FileOut] = field(default_factory=dict)
    variables: dict[str, str] = field(default_factory=dict)
    random: bool = False
    target: str | None = None
    ci: bool = False
    #: compare what a Console sink printed (off where even the count is random: a filter over random values)
    console: bool = True
    #: how many times each engine runs the job on the same target (save modes: what a second run finds)
    repeat: int = 1
    #: environment both engines run with (``TZ``: the JVM's and the session's time zone)
    env: dict[str, str] = field(default_factory=dict)

    @property
    def path(self) -> Path:
        return CONFIGS / self.config


def _st(name: str, **kw: object) -> Case:
    return Case(name, f"seatunnel/{name}.conf", **kw)  # type: ignore[arg-type]


def _ours(name: str, **kw: object) -> Case:
    return Case(name, f"ours/{name}.conf", **kw)  # type: ignore[arg-type]


_TEXT = {"csv": FileOut("csv"), "json": FileOut("json"), "text": FileOut("text")}
_ALL = {**_TEXT, "parquet": FileOut("parquet"), "orc": FileOut("orc")}

CASES: tuple[Case, ...] = (
    # SeaTunnel's own e2e configs (configs/seatunnel/NOTICE)
    _st("fakesource_to_assert", random=True), _st("fake_row_to_assert"), _st("fake_to_assert", random=True),
    _st("fake_to_assert_with_range", random=True), _st("copy_transform", random=True),
    _st("filter_transform", random=True), _st("filter_row_kind_exclude_delete", random=True),
    _st("filter_row_kind_include_insert", random=True), _st("split_transform", random=True),
    _st("field_mapper_transform", random=True), _st("replace_transform", random=True),
    _st("sql_transform", random=True), _st("binary_expression"), _st("case_when"),
    _st("criteria_filter"), _st("sql_all_columns", random=True), _st("not_like_filter"),
    _st("batch_fakesource_to_file_complex", random=True, files={"text": FileOut("text", "\t")}),
    Case("fake_to_console.variables", "seatunnel/fake_to_console.variables.conf", random=True,
         variables={"resName": "a20261122", "rowNum": "10", "strTemplate": "[abc,def]", "nameType": "string",
                    "nameVal": "abc", "sourceTableName": "sql"},
         console=False),  # its Sql keeps the random rows whose random name is 'abc': a random count
    # the eight differences issue 36 starts from (6, the sink folder, shows in every file case)
    _ours("k1_fractional_seconds", files={"csv": FileOut("csv")}),
    _ours("k2_csv_quoting", files={"csv": FileOut("csv")}),
    _ours("k3_text_final_newline", files={"text": FileOut("text")}),
    _ours("k4_parquet_timestamps", files={"parquet": FileOut("parquet")}),
    _ours("k5_json_timestamps", files={"json": FileOut("json")}),
    _ours("k7_file_source_parallelism2", variables={"data": str(DATA)}, ci=True),
    _ours("a_archive_zip_text", variables={"data": str(DATA)}),
    _ours("a_archive_tar_gz_json", variables={"data": str(DATA)}),
    _ours("k8_sql_where_true", ci=True),
    # types, formats and options
    _ours("t_scalar_types", files=_ALL),
    _ours("t_scalar_xml_excel", files={"xml": FileOut("xml"), "excel": FileOut("excel")}),
    _ours("t_complex_types", random=True, files={"json": FileOut("json"), "parquet": FileOut("parquet"),
                                                  "orc": FileOut("orc")}),
    _ours("t_time_parquet", files={"parquet": FileOut("parquet")}),
    # csv: both engines write ',' whatever field_delimiter says
    _ours("o_delimiter_header", files={"csv": FileOut("csv", header=True), "text": FileOut("text", "|")}),
    _ours("o_compression", files={"parquet": FileOut("parquet"), "orc": FileOut("orc")}),
    _ours("o_partition_filename", files={"part": FileOut("csv"), "named": FileOut("json")}),
    _ours("o_sql_functions", ci=True),
    _ours("o_sql_edge"),
    _ours("t_xml_text", files={d: FileOut("xml") for d in ("xml", "attr", "xml_st", "attr_st")}),
    _ours("o_timezone", files={"parquet": FileOut("parquet"), "json": FileOut("json"), "csv": FileOut("csv")},
          env={"TZ": "America/New_York"}),
    _ours("o_timezone_session", files={"parquet": FileOut("parquet"), "json": FileOut("json"), "csv": FileOut("csv")},
          env={"TZ": "America/New_York"}),
    _ours("o_save_modes", files={d: FileOut("csv") for d in ("append", "drop", "recreate")}, repeat=2),
    _ours("o_save_mode_error", files={"csv": FileOut("csv")}, repeat=2),
    # Jdbc and Kafka targets (the runner starts the servers)
    _ours("j_postgres", target="postgres"),
    _ours("j_mariadb", target="mariadb"),
    _ours("q_kafka_json", target="kafka"),
    _ours("e_elasticsearch_sink", target="elasticsearch"),
    _ours("m_rabbitmq_sink", target="rabbitmq"),
    _ours("m_rabbitmq_source", target="rabbitmq", files={"json": FileOut("json")}),
    _ours("n_influxdb_sink", target="influxdb"),
    _ours("n_influxdb_source", target="influxdb", files={"whole": FileOut("json"), "uneven": FileOut("json")}),
    # Cassandra (a keyspace per run) and Paimon (local warehouses: benchmarks/parity/paimon_tables.py)
    _ours("c_cassandra_sink", target="cassandra"),
    _ours("c_cassandra_source", target="cassandra", files={d: FileOut("json") for d in ("whole", "some", "nulls")}),
    _ours("p_paimon_sink", target="paimon"),
    _ours("p_paimon_source", target="paimon", files={"appended": FileOut("json"), "keyed": FileOut("json")}),
)


def by_name(names: list[str] | None) -> list[Case]:
    """The cases named (all when ``names`` is empty); an unknown name is an error."""
    if not names:
        return list(CASES)
    known = {c.name: c for c in CASES}
    missing = [n for n in names if n not in known]
    if missing:
        raise SystemExit(f"no such case: {', '.join(missing)} (known: {', '.join(known)})")
    return [known[n] for n in names]
