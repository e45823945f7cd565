"""The parity harness's comparisons and its known-differences table (benchmarks/parity), on hand-made outputs of
both engines: no engine runs here."""

from __future__ import annotations

import io
from datetime import datetime
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from benchmarks.parity import compare as cmp
from benchmarks.parity.cases import CASES, FileOut
from benchmarks.parity.compare import Difference
from benchmarks.parity.harness import Classified, Result, compare_files
from benchmarks.parity.known import CLASSES, KNOWN, classify, failing
from benchmarks.parity.report import as_markdown, counts, timing_table

ZETA_LINE = ("2026-11-29 07:02:57,725 INFO  [.a.s.c.s.c.s.ConsoleSinkWriter] [st-multi-table-sink-writer-1] - "
             "subtaskIndex=0  rowIndex=1:  SeaTunnelRow#tableId=fake SeaTunnelRow#kind=INSERT : 1, a,b, 1.50, true")
OURS_LINE = ("2026-11-29 07:01:50 INFO seatunnel.console: subtaskIndex=0  rowIndex=1:  SeaTunnelRow#tableId=fake "
             "SeaTunnelRow#kind=INSERT : 1, a,b, 1.50, true")


def test_console_lines_of_both_engines_are_the_same_rows():
    assert cmp.console_rows(ZETA_LINE) == cmp.console_rows(OURS_LINE)
    assert cmp.compare_console(ZETA_LINE, OURS_LINE) == []


def test_console_rows_differ_as_multisets_not_by_order_or_subtask():
    other = OURS_LINE.replace("rowIndex=1", "rowIndex=2").replace("subtaskIndex=0", "subtaskIndex=1")
    assert cmp.compare_console(ZETA_LINE + "\n" + ZETA_LINE, OURS_LINE + "\n" + other) == []
    diffs = cmp.compare_console(ZETA_LINE + "\n" + ZETA_LINE, OURS_LINE)
    assert [d.aspect for d in diffs] == ["console.rows"]
    assert "2 rows vs 1" in diffs[0].detail


def test_exit_codes_compare_as_finished_or_failed():
    assert cmp.compare_exit(0, 0) == [] and cmp.compare_exit(1, 2) == []
    assert cmp.compare_exit(1, 0) == [Difference("exit", "job", "zeta exit 1, ours exit 0")]


def test_csv_quoting_and_final_newline_are_named():
    zeta = [b'6,EVE,WITH COMMA\n7,QUOTE"D,plain']
    ours = [b'6,"EVE,WITH COMMA"\n7,"QUOTE""D",plain\n']
    aspects = {d.aspect for d in cmp.compare_bytes(zeta, ours, "csv")}
    assert aspects == {"file.bytes.final-newline", "file.bytes.quoting"}


def test_other_byte_differences_show_where_unless_the_rows_say_it():
    diffs = cmp.compare_bytes([b'{"d":1.5}'], [b'{"d":1.50000000}'], "json")
    assert [d.aspect for d in diffs] == ["file.bytes"]
    assert diffs[0].detail == "at byte 8: zeta b'{\"d\":1.5}', ours b'{\"d\":1.50000000}'"
    assert cmp.compare_bytes([b'{"d":1}'], [b'{"d":2}'], "json", rows_differ=True) == []


def test_files_pair_by_content_not_name():
    assert cmp.compare_bytes([b"a\n", b"b\n"], [b"b\n", b"a\n"], "text") == []
    assert cmp.compare_bytes([b"a\n"], [b"a\n", b""], "text")[0].aspect == "file.bytes.files"


def test_folder_extras_are_reported_per_side():
    zeta = ["T_1_0_1.parquet", ".T_1_0_1.parquet.crc"]
    ours = ["part-0.parquet", ".seatunnel-commits/run/0.json"]
    data = ["T_1_0_1.parquet", "part-0.parquet"]
    diffs = cmp.compare_folder(zeta, ours, data)
    assert [(d.aspect, d.detail) for d in diffs] == [("folder.extra.zeta", "only zeta leaves *.crc"),
                                                      ("folder.extra.ours", "only ours leaves .seatunnel-commits/")]


def test_partition_folders_are_compared():
    assert cmp.compare_partitions(["k=a/x.csv", "k=b/y.csv"], ["k=b/1.csv", "k=a/2.csv"]) == []
    assert cmp.compare_partitions(["k=a/x.csv"], ["k=A/x.csv"])[0].aspect == "file.folders"


def _parquet(table: pa.Table) -> bytes:
    sink = io.BytesIO()
    pq.write_table(table, sink)
    return sink.getvalue()


def test_parquet_timestamp_unit_and_zone_are_a_type_difference_same_values():
    when = datetime(2020, 2, 6, 5, 3, 12)
    zeta = pa.table({"ts": pa.array([when], pa.timestamp("ms", tz="UTC"))})
    ours = pa.table({"ts": pa.array([when], pa.timestamp("us"))})
    diffs = cmp.compare_tables([cmp.parse(_parquet(zeta), "parquet")], [cmp.parse(_parquet(ours), "parquet")])
    assert [(d.aspect, d.detail) for d in diffs] == [("types.timestamp", "zeta timestamp[ms, tz=UTC], ours "
                                                                         "timestamp[us] (ts)")]


def test_rows_are_multisets_and_a_lost_fraction_shows():
    zeta = cmp.parse(b"1,2021-07-04 17:45:30.123\n1,2021-07-04 17:45:30.123", "csv")
    ours = cmp.parse(b"1,2021-07-04 17:45:30\n1,2021-07-04 17:45:30.123\n", "csv")
    aspects = [d.aspect for d in cmp.compare_tables([zeta], [ours])]
    assert aspects == ["rows.values"]
    assert cmp.compare_tables([zeta], [cmp.parse(b"1,2021-07-04 17:45:30.123\n" * 2, "csv")]) == []


def test_csv_header_and_delimiter_and_json_key_order():
    t = cmp.parse(b"a;b\n1;x", "csv", ";", header=True)
    assert t.columns == ("a", "b") and t.rows == (("1", "x"),)
    z, o = cmp.parse(b'{"a":1,"b":"x"}', "json"), cmp.parse(b'{"b":"x","a":1}', "json")
    aspects = {d.aspect for d in cmp.compare_tables([z], [o])}
    assert "columns.order" in aspects


def test_kafka_records_json_text_versus_values():
    assert cmp.compare_records([(None, b'{"a":1,"b":2}')], [(None, b'{"b": 2, "a": 1}')], "t")[0].aspect == \
        "records.json-text"
    assert cmp.compare_records([(b"1", b"x")], [(b"2", b"x")], "t")[0].aspect == "records.values"


def test_random_rows_compare_by_count_and_columns_only():
    spec = FileOut("json")
    zeta = {"T_0.json": b'{"a":"xyz"}\n{"a":"q"}'}
    ours = {"part-0.json": b'{"a":"abc"}\n{"a":"r"}\n'}
    assert compare_files("json", spec, zeta, ours, random=True) == []
    fewer = {"part-0.json": b'{"a":"abc"}\n'}
    assert [d.aspect for d in compare_files("json", spec, zeta, fewer, random=True)] == ["rows.count"]


def test_the_table_classifies_the_known_differences():
    quoting = Difference("file.bytes.quoting", "csv", "double quotes: zeta 1, ours 5")
    assert classify("k2_csv_quoting", quoting).cls == "deviation"
    read_twice = Difference("console.rows", "console", "3000 rows vs 2000")
    assert classify("k7_file_source_parallelism2", read_twice).cls == "seatunnel-bug"
    assert classify("t_scalar_types", read_twice) is None  # only where the bug shows
    newline = Difference("file.bytes.final-newline", "csv", "...")
    assert classify("anything", newline).cls == "fixed"


def test_unexplained_and_fixed_fail_a_run_deviations_and_bugs_do_not():
    assert failing(None) and failing("fixed")
    assert not failing("deviation") and not failing("seatunnel-bug")


def test_every_entry_is_well_formed():
    ids = [k.id for k in KNOWN]
    assert len(ids) == len(set(ids))
    for k in KNOWN:
        assert k.cls in CLASSES and k.reason and k.anchor


def test_docs_have_an_anchor_for_every_entry():
    docs = (Path(__file__).resolve().parents[2] / "docs" / "parity.md").read_text()
    for k in KNOWN:
        assert f'<a id="{k.anchor}"></a>' in docs, k.anchor


def test_every_case_config_exists_and_the_ci_subset_is_small():
    for case in CASES:
        assert case.path.is_file(), case.path
    assert 3 <= sum(c.ci for c in CASES) <= 5


def test_report_counts_and_verdicts():
    bug = Classified(Difference("exit", "job", "zeta exit 1, ours exit 0"), "seatunnel-bug", "x", "x")
    odd = Classified(Difference("rows.values", "csv", "?"), None, None, None)
    results = [Result("same", (10.0,), (20.0,), 0, 0), Result("bug", (9.0,), (3.0,), 1, 0, (bug,)),
               Result("odd", (1.0, 3.0), (4.0, 2.0), 0, 0, (odd,))]
    assert counts(results) == {"compared": 3, "identical": 1, "deviations": 0, "seatunnel_bugs": 1,
                               "open": 0, "fixed_seen": 0, "unexplained": 1}
    assert [r.verdict for r in results] == ["identical", "seatunnel-bug", "unexplained"]
    assert [r.failed for r in results] == [False, False, True]
    assert timing_table(results)[2] == "| same | 10.0 | 20.0 | 2.00 |"
    assert "**UNEXPLAINED** `rows.values`" in as_markdown(results, {"runs": 2})


@pytest.mark.parametrize("fmt", ["csv", "text"])
def test_delimited_parse_defaults(fmt):
    sep = "," if fmt == "csv" else "\x01"
    assert cmp.parse(f"1{sep}a\n".encode(), fmt).rows == (("1", "a"),)


def test_the_zeta_folder_comes_from_the_environment_first(tmp_path, monkeypatch):
    from benchmarks.parity import engines

    (tmp_path / "run-zeta.sh").write_text("#!/bin/sh\n")
    monkeypatch.setenv("SEATUNNEL_ZETA_DIR", str(tmp_path))
    assert engines.zeta_dir() == tmp_path
    monkeypatch.setenv("SEATUNNEL_ZETA_DIR", str(tmp_path / "nothing-here"))
    assert engines.zeta_dir() != tmp_path / "nothing-here"


def test_a_failed_job_is_compared_by_exit_code_only(tmp_path):
    from benchmarks.parity.cases import Case
    from benchmarks.parity.engines import EngineRun
    from benchmarks.parity.harness import Output, compare_case

    case = Case("c", "ours/c.conf", files={"csv": FileOut("csv")})
    (tmp_path / "ours" / "csv").mkdir(parents=True)
    (tmp_path / "ours" / "csv" / "part-0.csv").write_bytes(b"1,a\n")
    zeta = Output(EngineRun("zeta", 1, 1.0, "boom"), tmp_path / "zeta")
    ours = Output(EngineRun("ours", 0, 1.0, ""), tmp_path / "ours")
    assert [d.aspect for d in compare_case(case, zeta, ours)] == ["exit"]
    finished = Output(EngineRun("zeta", 0, 1.0, ""), tmp_path / "zeta")
    assert "rows.count" in {d.aspect for d in compare_case(case, finished, ours)}


def test_a_report_reads_back_and_merges_first_wins():
    from benchmarks.parity.report import as_json, from_json, merged

    bug = Classified(Difference("exit", "job", "zeta exit 1, ours exit 0"), "seatunnel-bug", "x", "x")
    odd = Classified(Difference("rows.values", "csv", "?"), None, None, None)
    first = [Result("a", (1.0,), (2.0,), 1, 0, (bug,)), Result("b", (1.0,), (2.0,), 0, 0, (odd,))]
    second = [Result("b", (5.0,), (6.0,), 0, 0), Result("c", (3.0,), (4.0,), 0, 0)]
    back, meta = from_json(as_json(first, {"notes": ["n1"]}))
    assert back == first and meta["notes"] == ["n1"]
    results, meta = merged([(back, meta), (second, {"notes": ["n2"]})], ["c", "b", "a"])
    assert [(r.case, r.zeta_s) for r in results] == [("c", (3.0,)), ("b", (1.0,)), ("a", (1.0,))]
    assert meta["notes"] == ["n1", "n2"] and results[1].verdict == "unexplained"


def test_an_exit_difference_says_why_the_job_failed(tmp_path):
    from benchmarks.parity.cases import Case
    from benchmarks.parity.engines import EngineRun
    from benchmarks.parity.harness import Output, compare_case

    log = "INFO x\nCaused by: java.time.format.DateTimeParseException: Text '2021-07-04T17:45:30.123'\nmore"
    zeta = Output(EngineRun("zeta", 1, 1.0, log), tmp_path)
    ours = Output(EngineRun("ours", 0, 1.0, ""), tmp_path)
    (diff,) = compare_case(Case("c", "ours/c.conf"), zeta, ours)
    assert diff.detail.startswith("zeta exit 1, ours exit 0; zeta: Caused by: java.time.format.DateTimeParse")
    assert classify("k1_fractional_seconds", diff).id == "fractional-seconds"



def test_a_merged_result_is_classified_by_the_table_as_it_is_now():
    from benchmarks.parity.harness import reclassified

    stale = Classified(Difference("file.bytes.final-newline", "csv", "x"), None, None, None)
    (d,) = reclassified(Result("k2_csv_quoting", (1.0,), (1.0,), 0, 0, (stale,))).diffs
    assert (d.cls, d.known) == ("fixed", "final-newline")



def test_row_differences_are_named_per_column():
    zeta = cmp.Table(("d", "ts"), (), (("1E-8", "2020-01-01T00:00:00"), ("1", "2020-01-02T00:00:00")))
    ours = cmp.Table(("d", "ts"), (), (("0.00000001", "2020-01-01T00:00:00.000"), ("1", "2020-01-02T00:00:00")))
    details = [d.detail for d in cmp.compare_tables([zeta], [ours])]
    assert [x.split(":")[0] for x in details] == ["column d", "column ts"]
    wider = cmp.Table(None, (), (("1", "a", "b"),))
    assert [d.aspect for d in cmp.compare_tables([wider], [cmp.Table(None, (), (("1", "a,b"),))])] == ["rows.values"]


def test_xml_rows_and_binary_bytes():
    xml = b'<?xml version="1.0"?><RECORDS><RECORD><a>1</a><b>x</b></RECORD><RECORD><a>2</a><b/></RECORD></RECORDS>'
    t = cmp.parse(xml, "xml")
    assert t.columns == ("a", "b") and t.rows == (("1", "x"), ("2", None))
    assert cmp.compare_bytes([b"PAR1..a"], [b"PAR1..bb"], "parquet")[0].aspect == "file.bytes.binary"





def test_random_partition_folders_compare_by_key_and_number():
    assert cmp.compare_partition_keys(["k=ab/1.txt", "k=cd/2.txt"], ["k=xy/a.txt", "k=zz/b.txt"]) == []
    assert cmp.compare_partition_keys(["k=ab/1.txt"], ["k=xy/a.txt", "k=zz/b.txt"])[0].aspect == "file.folders"
    assert cmp.compare_partition_keys(["k=ab/1.txt"], ["j=ab/1.txt"])[0].aspect == "file.folders"


#: (case, difference, the entry that explains it; None: unexplained)
CLASSIFIED = [
    ("t_complex_types", Difference("types.type", "parquet", "zeta list<array: int32 not null>, ours list<element: "
                                                            "int32> (c)"), "parquet-list-layout"),
    ("t_scalar_types", Difference("types.type", "orc", "zeta timestamp[ns], ours int64 (c)"), "orc-timestamp-as-long"),
    ("t_scalar_types", Difference("types.type", "parquet", "zeta timestamp[ns], ours int64 (c)"), None),
    ("o_delimiter_header", Difference("rows.values", "csv", "column d: only zeta: ['1E-8']; only ours: ['0.00000001']"),
     "decimal-text"),
    ("t_scalar_types", Difference("file.bytes", "json", "at byte 9: zeta b'\"c_decimal\":1.5,', ours b'\"c_decimal\":1.50'"),
     "json-decimal-text"),
    ("t_scalar_types", Difference("file.bytes", "csv", "at byte 9: zeta b'\"c_decimal\":1.5,'"), None),
    ("t_scalar_xml_excel", Difference("rows.values", "xml", "column s: only zeta: ['tab and']; only ours: ['tab\\tand']"),
     "xml-whitespace"),
    ("t_xml_text", Difference("rows.values", "attr", "only zeta: [('3', 'tab and tabs')]; only ours: "
                                                     "[('3', 'tab\\tand\\ttabs')]"), "xml-whitespace"),
    ("t_xml_text", Difference("rows.values", "xml_st", "column s: only zeta: ['pad']; only ours: [' pad ']"), None),
    ("t_xml_text", Difference("file.bytes", "xml", "at byte 38: zeta b'?>\\n\\n<RECORDS>', ours b'?>\\n<RECORDS>'"),
     "xml-layout"),
    ("t_scalar_xml_excel", Difference("rows.values", "excel", "column 3: only zeta: ['9.223372036854776e+18']; "
                                                              "only ours: ['9223372036854775807']"), "excel-big-integers"),
    ("t_scalar_xml_excel", Difference("rows.count", "excel", "zeta 5 rows, ours 4"), "excel-cells"),
    ("o_compression", Difference("types.type", "parquet", "zeta int32, ours int8 (c_tinyint)"), "parquet-small-ints"),
    ("q_kafka_json", Difference("records.values", "topic", "only zeta: [(b'{\"ts\":\"2020-02-06T05:03:12\"}')]; only "
                                                           "ours: [(b'{\"ts\":\"2020-02-06T05:03:12.000000\"}')]"),
     "json-timestamp-text"),
    ("t_scalar_types", Difference("rows.values", "json", "only zeta: [('1970-01-01T00:00:00',)]; only ours: "
                                                         "[('1970-01-01T00:00:00.000',)]"), "json-timestamp-text"),
    ("t_scalar_types", Difference("rows.values", "csv", "only zeta: [('1E-8',)]; only ours: [('0.00000001',)]"),
     "decimal-text"),
]


@pytest.mark.parametrize(("case", "diff", "known"), CLASSIFIED)
def test_the_table_explains_what_the_harness_found(case, diff, known):
    found = classify(case, diff)
    assert (found.id if found else None) == known


def test_an_open_difference_is_reported_without_failing_the_run():
    assert "open" in CLASSES and not failing("open")
    assert failing("fixed") and failing(None) and not failing("deviation")
    still_open = [k for k in KNOWN if k.cls == "open"]  # none at the moment: every difference found is classified
    assert all(k.reason for k in still_open)


def test_paimon_tables_are_read_from_their_schema_and_data_files(tmp_path):
    """The harness's Paimon reader (benchmarks/parity/paimon_tables.py): the source tables pypaimon writes read back
    with their types, a primary-key table merged by sequence number (a key whose last row is -D or -U is gone), and
    a table of two snapshots refused."""
    pytest.importorskip("pypaimon")
    from benchmarks.parity import paimon_tables as pt

    pt.prepare_source(tmp_path)
    appended, keyed = pt.read_table(tmp_path, "appended"), pt.read_table(tmp_path, "keyed")
    assert appended.types == ("INT NOT NULL", "STRING", "DOUBLE") and keyed.types[0] == "INT NOT NULL PK"
    expected = sorted(tuple(None if v is None else str(v) for v in r) for r in pt.SOURCE_ROWS)
    assert sorted(appended.rows, key=repr) == sorted(keyed.rows, key=repr) == sorted(expected, key=repr)
    rows = [{"k": 1, "v": "a", "_SEQUENCE_NUMBER": 0, "_VALUE_KIND": 0},
            {"k": 1, "v": "b", "_SEQUENCE_NUMBER": 2, "_VALUE_KIND": 2},
            {"k": 2, "v": "c", "_SEQUENCE_NUMBER": 1, "_VALUE_KIND": 0},
            {"k": 2, "v": "c", "_SEQUENCE_NUMBER": 3, "_VALUE_KIND": 3}]
    assert [r["v"] for r in pt._merged(rows, ["k"])] == ["b"]
    assert [k for k, _ in pt.read_records(tmp_path)].count(b"appended") == 3
    snapshot = tmp_path / "parity.db" / "keyed" / "snapshot"
    (snapshot / "snapshot-2").write_bytes((snapshot / "snapshot-1").read_bytes())
    with pytest.raises(ValueError, match="2 snapshots"):
        pt.read_table(tmp_path, "keyed")
