"""The one table of known differences between SeaTunnel's engine (Zeta) and the project.

Every difference the harness finds is classified here, by the first entry whose patterns match it:

* ``fixed``: the project matches SeaTunnel; the difference must not be seen (seen: the run fails, it is a
  regression or a fix still under way);
* ``open``: a difference found and not fixed yet (listed in the report as work to do; it does not fail a run,
  so a fix becomes ``fixed`` with the same entry);
* ``deviation``: the project differs on purpose, because SeaTunnel's behaviour loses or corrupts data; documented
  in docs/parity.md under the entry's anchor, with a test and (where file bytes differ) an option for SeaTunnel's
  bytes;
* ``seatunnel-bug``: SeaTunnel's result is wrong, the project's right (docs/parity.md, "Known SeaTunnel
  differences").

A difference no entry matches is *unexplained* and fails the run. Patterns are regular expressions searched in
the case's name, the difference's aspect, its detail and where (an empty pattern matches anything).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .compare import Difference

CLASSES = ("fixed", "open", "deviation", "seatunnel-bug")


@dataclass(frozen=True)
class Known:
    """One known difference: ``id``, the patterns it matches (``case``, ``aspect``, ``detail``), its class, the
    reason and the anchor of its section in docs/parity.md."""

    id: str
    cls: str
    aspect: str
    reason: str
    anchor: str
    case: str = ""
    detail: str = ""
    where: str = ""

    def matches(self, case: str, diff: Difference) -> bool:
        return all(re.search(pattern, text) for pattern, text in
                   ((self.case, case), (self.aspect, diff.aspect), (self.detail, diff.detail),
                    (self.where, diff.where)))


KNOWN: tuple[Known, ...] = (
    Known("fractional-seconds", "deviation", r"^(exit|rows\.values)$",
          "measured: SeaTunnel 2.3.8 drops the fraction of a FakeSource timestamp silently (it writes 17:45:30 for "
          "17:45:30.123 to csv and exits 0; the project on main did the same); the project keeps the value "
          "(issue 36, item 1: never lose data silently)", "fractional-seconds", case=r"k1_fractional_seconds",
          detail=r"\.123|exit"),
    Known("csv-quoting", "deviation", r"^file\.bytes\.quoting$",
          "SeaTunnel writes csv fields raw: a field holding the delimiter or a quote makes a file its own reader "
          "splits wrongly; the project quotes such fields (RFC 4180)", "csv-quoting"),
    Known("csv-quoting-rows", "deviation", r"^rows\.values$",
          "the unquoted field holding a comma reads back as two fields from SeaTunnel's file (see csv-quoting)",
          "csv-quoting", case=r"k2_csv_quoting"),
    Known("final-newline", "fixed", r"^file\.bytes\.final-newline$",
          "SeaTunnel's csv/text/json files have no newline after the last row; the project's had one", "final-newline"),
    Known("parquet-timestamp-type", "fixed", r"^types\.timestamp$",
          "SeaTunnel writes parquet timestamps as timestamp[ms, tz=UTC]; the project wrote timestamp[us]",
          "parquet-timestamps", detail=r"zeta timestamp\[ms, tz=UTC\], ours timestamp\[us\]"),
    Known("mariadb-datetime-precision", "deviation", r"^(types\.type|rows\.values)$",
          "SeaTunnel 2.3.8 creates a MariaDB/MySQL timestamp column as DATETIME (whole seconds: it drops the "
          "fraction of every value it writes); the project creates DATETIME(6) and keeps microseconds",
          "mariadb-datetime", case=r"^j_mariadb$", detail=r"datetime|\d\d:\d\d:\d\d\.000000'"),
    Known("decimal-text", "fixed", r"^(rows\.values|file\.bytes)$",
          "SeaTunnel writes a decimal to csv/text as Java's BigDecimal text (1E-8 for 0.00000001, scientific below "
          "1E-6); the project writes the plain digits", "decimal-text", detail=r"1E-8.*0\.00000001"),
    Known("json-decimal-text", "deviation", r"^file\.bytes$",
          "SeaTunnel's FakeSource keeps each literal's own scale (1.5 in a decimal(30, 8) field), so its json has "
          "1.5; a Spark decimal column has one scale, so the project writes 1.50000000, as SeaTunnel does for a "
          "decimal read from a database; the values are equal", "decimal-text", case=r"t_scalar_types",
          where=r"json", detail=r"c_decimal"),
    Known("json-timestamp-text", "fixed", r"^(rows\.values|file\.bytes|records\.values)$",
          "SeaTunnel writes json timestamps without fractional seconds when they are zero "
          "(\"2020-02-06T05:03:12\"); the project wrote \".000\" in json files and \".000000\" in Kafka's json "
          "records",
          "json-timestamps",
          detail=r"\d\d:\d\d:\d\d\.000(000)?(?!\d)"),
    Known("commit-folder", "deviation", r"^folder\.extra\.ours$",
          "the project keeps its commit log (.seatunnel-commits/, hidden) in the sink's target: a restore reads it "
          "there to publish each commit exactly once; SeaTunnel leaves no folder of its own", "sink-folder",
          detail=r"\.seatunnel-commits/"),
    Known("crc-files", "deviation", r"^folder\.extra\.zeta$",
          "SeaTunnel writes parquet/orc through Hadoop's local file system, which leaves a .crc checksum file "
          "beside each file; the project writes no checksum files (no reader needs them)", "sink-folder",
          detail=r"\*\.crc"),
    Known("binary-writer", "deviation", r"^file\.bytes(\.binary)?$",
          "parquet, orc and excel files hold their writer's name, version and page layout (SeaTunnel: parquet-mr, "
          "orc-core, POI; the project: Spark's and pyarrow's writers), so their bytes differ by construction; what a "
          "reader sees (rows, column names, logical types) is compared separately", "binary-files",
          detail=r"(parquet|orc|excel) (files )?differ"),
    Known("parquet-small-ints", "fixed", r"^types\.type$",
          "SeaTunnel writes tinyint and smallint columns to parquet as plain INT32; the project annotated them "
          "INT(8)/INT(16) (pyarrow read int8/int16)", "parquet-small-ints", detail=r"zeta int32, ours int(8|16)",
          where=r"parquet"),
    Known("parquet-list-layout", "deviation", r"^types\.type$",
          "SeaTunnel writes parquet arrays in the legacy two-level layout (element 'array', required: an array "
          "cannot hold a null); the project writes the standard three-level list (element 'element', optional)",
          "parquet-lists", detail=r"zeta list<array: [^>]* not null>, ours list<element: ", where=r"parquet"),
    Known("orc-timestamp-as-long", "fixed", r"^(types\.type|rows\.values)$",
          "the project writes an ORC timestamp column as a bigint of microseconds (a reader sees numbers); SeaTunnel "
          "writes ORC timestamps", "orc-timestamps", detail=r"zeta timestamp\[ns\], ours int64|\d\d:\d\d:\d\d'",
          where=r"orc"),
    Known("xml-layout", "fixed", r"^file\.bytes$",
          "SeaTunnel's xml documents have an empty line after the declaration and escape > as &gt;; Spark's xml "
          "writer, which the project used, wrote neither", "xml-layout", where=r"^(xml|attr)",
          detail=r"\?>\\n<|c>d"),
    Known("xml-whitespace", "deviation", r"^(rows\.values|file\.bytes)$",
          "SeaTunnel 2.3.8's xml writer trims an element's text and collapses its whitespace (\" pad \" is written "
          "pad, a tab a space) and writes an attribute's tabs and line breaks raw (read back as spaces): data it "
          "changes; the project keeps values as they are; xml_whitespace = NORMALIZE gives SeaTunnel's bytes",
          "xml-whitespace", case=r"^t_(xml_text|scalar_xml_excel)$", where=r"^(xml|attr)$"),
    Known("session-time-zone", "deviation", r"^rows\.values$",
          "a timestamp (a wall-clock time) becomes a parquet instant in the session's time zone: SeaTunnel's is its "
          "JVM's (the machine's), the project's UTC unless env spark.sql.session.timeZone sets it, so the file does "
          "not depend on the machine (o_timezone_session: set to the JVM's zone, SeaTunnel's instants)",
          "session-time-zone", case=r"^o_timezone$", where=r"parquet"),
    Known("time-in-files", "deviation", r"^exit$",
          "SeaTunnel 2.3.8's file writers refuse a TIME column (\"not supported for this data type [TIME]\"); the "
          "project writes it; a config with one is not portable (validate's portability warnings)", "time-type",
          case=r"t_time_parquet", detail=r"zeta exit [^0]\d*, ours exit 0"),
    Known("excel-big-integers", "deviation", r"^rows\.values$",
          "SeaTunnel rounds an integer beyond 2^53 to a double in an excel cell (9.223372036854776E18 for "
          "9223372036854775807): data loss; the project keeps its digits (other numbers: doubles, as SeaTunnel)",
          "excel-cells", where=r"excel", detail=r"only ours: .*'-?922337203685477580[78]'"),
    Known("excel-cells", "fixed", r"^rows\.(count|values)$",
          "the excel sheets differed in their cells: SeaTunnel's holds numbers as doubles (-128.0), an empty string "
          "as an empty text cell and a row of nulls as a row; the project's had integers as integers, no cell for an "
          "empty string or a null, and doubles cut to 16 digits", "excel-cells", where=r"excel"),
    Known("queue-decimal-text", "deviation", r"^records\.json-text$",
          "SeaTunnel's FakeSource keeps each decimal literal's own value text (2.5 for \"2.50\" in a decimal(10, 2) "
          "field), so its RabbitMQ messages hold 2.5; a Spark decimal column has one scale, so the project's hold "
          "2.50; the JSON values are equal", "decimal-text", case=r"^m_rabbitmq_sink$"),
    Known("influxdb-split-overlap", "seatunnel-bug", r"^rows\.(count|values)$",
          "SeaTunnel 2.3.8's InfluxDB split ranges overlap when partition_num does not divide the range ([0,4), "
          "[3,7), [6,10) over 0..9): the rows on a boundary are read twice; the project's ranges neither overlap "
          "nor leave values out", "influxdb-split-overlap", case=r"^n_influxdb_source$", where=r"^uneven$"),
    Known("rabbitmq-bounded-read-loses", "seatunnel-bug", r"^rows\.(count|values)$",
          "SeaTunnel 2.3.8's bounded RabbitMQ read (for_e2e_testing) ends after its first message and consumes with "
          "automatic acknowledgement: the messages delivered ahead are acknowledged and lost (1 row written of 3, the "
          "queue left empty); the project writes the three and acknowledges them after the commit", "rabbitmq-source",
          case=r"^m_rabbitmq_source$"),
    Known("rabbitmq-stream-worker-timeout", "open", r"^exit$",
          "the project's STREAMING run failed on a machine at load 45-60 (\"Python worker failed to connect back\": "
          "Spark waits a fixed 10 s for the stream reader's Python worker to start); not yet compared on a quiet "
          "machine", "rabbitmq-source", case=r"^m_rabbitmq_source$", detail=r"Python worker failed to connect back"),
    Known("paimon-format-versions", "open", r"^exit$",
          "SeaTunnel 2.3.8's Paimon connector is Paimon 0.7: it fails on a table pypaimon 2.1 wrote (its snapshot's "
          "newer fields: 'Unrecognized field \"baseManifestListSize\"'), and the project's source (pypaimon 2.1) "
          "fails on a table Paimon 0.7 wrote (KeyError '_VALUE_STATS_COLS' in its manifests); neither engine reads "
          "the other's tables, so the source case compares exit codes only", "paimon-format-versions",
          case=r"^p_paimon_source$", detail=r"baseManifestListSize|_VALUE_STATS_COLS"),
    Known("cassandra-blob-array", "fixed", r"^rows\.values$",
          "SeaTunnel 2.3.8 reads a Cassandra blob as array<tinyint> (a json file gets [-54, -2]); the project read "
          "it as bytes (base64 in json: 'yv4='), now as SeaTunnel does", "cassandra-source",
          case=r"^c_cassandra_source$", detail=r"column c_blob"),
    Known("cassandra-null-scalars", "seatunnel-bug", r"^rows\.values$",
          "SeaTunnel 2.3.8's Cassandra source reads a NULL int, bigint, double or boolean as 0, 0, 0.0, false (the "
          "driver's primitive getters); the project keeps NULL", "cassandra-source", case=r"^c_cassandra_source$",
          where=r"^nulls$"),
    Known("file-source-read-twice", "seatunnel-bug", r"^(rows\.(count|values)|console\.rows)$",
          "SeaTunnel 2.3.8's LocalFile source at parallelism 2 hands one file to both readers (its split has no "
          "equals/hashCode): rows read twice", "file-source-parallelism", case=r"k7_file_source_parallelism2"),
    Known("sql-boolean-literal", "seatunnel-bug", r"^(exit|console\.rows)$",
          "SeaTunnel 2.3.8's Sql transform takes the literal true for a column (\"can't find field [true]\") and "
          "fails the job", "sql-boolean-literal", case=r"k8_sql_where_true"),
)


def classify(case: str, diff: Difference, table: tuple[Known, ...] = KNOWN) -> Known | None:
    """The first entry of ``table`` matching ``diff`` of ``case``; ``None``: unexplained."""
    return next((k for k in table if k.matches(case, diff)), None)


def failing(cls: str | None) -> bool:
    """Whether a difference of this class fails a run: unexplained ones, and ``fixed`` ones seen again."""
    return cls is None or cls == "fixed"
