"""What the reader says about configs it cannot take (or doubts), through the CLI: every
unresolved variable at once, warnings kept beside errors, lines for undecodable or truncated
files, SeaTunnel's own template placeholders, and a closed pipe."""

from __future__ import annotations

import json
import subprocess
import sys

from airflow_provider_seatunnel.cli import main
from airflow_provider_seatunnel.plan.compiler import compile_job

from ..conftest import ROOT

SOURCE = 'source { FakeSource { schema = { fields { a = int } } } }\n'


def test_validate_json_keeps_the_warnings_beside_the_error(write_conf, capsys):
    # problem 8: "warnings": [] before, losing the hint that explains the error
    conf = write_conf('env { job.mode = "BATCH" }\n' + SOURCE
                      + 'sink { LocalFile { path = "/tmp/st_w", file_format_type = "${fmt}" } }\n')
    assert main(["validate", str(conf), "--format", "json"]) == 2
    out = json.loads(capsys.readouterr().out)
    assert [e["key"] for e in out["errors"]] == ["file_format_type"]
    assert [w["hint"] for w in out["warnings"]] == ["pass -i fmt=VALUE or give a default: ${fmt:default}"]
    assert main(["plan", str(conf)]) == 2
    err = capsys.readouterr().err
    assert "warning" in err and "pass -i fmt=VALUE" in err


def test_every_unresolved_substitution_is_reported_in_one_run(write_conf, capsys):
    conf = write_conf("env {\n  job.mode = ${MODE}\n  parallelism = ${PAR}\n}\n" + SOURCE
                      + "sink { Console { log.print.data = ${PRINT} } }\n")
    assert main(["validate", str(conf), "--format", "json"]) == 2
    errors = json.loads(capsys.readouterr().out)["errors"]
    assert [(e["line"], e["col"], e["message"]) for e in errors] == [
        (2, 14, "unresolved variable ${MODE}"), (3, 17, "unresolved variable ${PAR}"),
        (6, 35, "unresolved variable ${PRINT}")]


def test_save_mode_template_placeholders_are_not_unknown_variables(write_conf):
    conf = write_conf('env { job.mode = "BATCH" }\n' + SOURCE + 'sink { Jdbc {\n  url = "jdbc:postgresql://h/db"\n'
                      '  driver = "org.postgresql.Driver"\n  database = "db"\n  table = "t"\n'
                      '  generate_sink_sql = true\n  save_mode_create_template = '
                      '"CREATE TABLE ${database}.${table} (${rowtype_fields}, PRIMARY KEY (${rowtype_primary_key}))"\n'
                      '  remark = "${database}"\n} }\n')
    plan = compile_job(str(conf), use_cache=False)
    doubted = [w["message"] for w in plan.warnings if "quoted string" in w["message"]]
    assert doubted == ["variable ${database} in a quoted string has no value and stays as written"]  # not a template


def test_an_undecodable_byte_is_located(tmp_path, capsys):
    conf = tmp_path / "latin1.conf"
    conf.write_bytes(b'env {\n  job.mode = "BATCH"\n  job.name = "caf\xe9"\n}\n')
    assert main(["validate", str(conf)]) == 2
    assert f"{conf}:3:18: the config file is not UTF-8: byte 0xe9" in capsys.readouterr().err


def test_a_config_cut_inside_its_licence_header_is_located(tmp_path, capsys):
    conf = tmp_path / "cut.conf"
    conf.write_text("#\n# Licensed to the Apache Software Foundation (ASF) under one or more\n"
                    "# contributor license agreements.\n")
    assert main(["validate", str(conf)]) == 2
    assert f"{conf}:3: the config holds no settings, only comments and blank lines (3 lines): " \
           "is the file truncated?" in capsys.readouterr().err


def test_a_newline_inside_a_generic_row_type(write_conf):
    # problem 9: "unknown type 'intc_string=string'" before
    conf = write_conf('env { job.mode = "BATCH" }\nsource { FakeSource { schema = { fields {\n'
                      '  c_0 = "map<string, {c_int=int\\nc_string=string}>"\n'
                      '  c_1 = "array<int>"\n} } } }\nsink { Console { } }\n')
    plan = compile_job(str(conf), use_cache=False)
    schema = json.dumps(plan.to_dict())
    assert "map<string, {c_int = int, c_string = string}>" in schema


def test_plan_into_a_closed_pipe_prints_no_traceback(write_conf):
    conf = write_conf('env { job.mode = "BATCH" }\n' + "source {\n" + "".join(
        f'  FakeSource {{ plugin_output = "s{i}", schema = {{ fields {{ a = int }} }} }}\n' for i in range(200))
        + "}\nsink {\n" + "".join(f'  Console {{ plugin_input = "s{i}" }}\n' for i in range(200)) + "}\n")
    pipe = subprocess.run(f"{sys.executable} -m airflow_provider_seatunnel.cli plan --format json {conf} | head -c 10",
                          shell=True, capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert len(pipe.stdout) == 10
    assert "Traceback" not in pipe.stderr and "BrokenPipeError" not in pipe.stderr, pipe.stderr


def test_a_key_quoted_over_several_lines_is_reported_on_one_line(write_conf, capsys):
    # found by the mutation test: a triple-quoted string opened where a key was due ran over ten lines,
    # and the error quoted it whole, so the message's later lines carried no location
    conf = write_conf('env { job.mode = "BATCH" }\nsource {\n  FakeSource {\n    schema = { fields { id ="""'
                      ' bigint\n  }\n}\nsink { Console {} }\n'
                      'x = 1\n"""a\nb\nc""" , y = 2\n')
    assert main(["validate", str(conf)]) == 2
    err = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    assert err and all(line.startswith(("error:", "warning:", str(conf))) for line in err), err
