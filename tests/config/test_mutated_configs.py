"""`plan` on mutated job configs: whatever the text, it plans (exit 0) or says what is wrong
(exit 2, located problems on stderr); it never ends in a traceback."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from airflow_provider_seatunnel.cli import main
from tests.markers import examples

SEEDS = [
    '''env {
  job.mode = "BATCH"
  parallelism = 2
  parallelism = ${?PAR}
}
source {
  FakeSource {
    plugin_output = "fake"
    row.num = 16
    schema = { fields { id = bigint, name = string, m = "map<string, {a = int, b = string}>" } }
  }
}
transform {
  Sql { plugin_input = "fake", plugin_output = "t", query = "select id, upper(name) as name from fake" }
  Filter { plugin_input = "t", plugin_output = "f", include_fields = [id] }
}
sink {
  Console { plugin_input = "f" }
  Assert { plugin_input = "t", rules { row_rules = [{ rule_type = MIN_ROW, rule_value = 1 }] } }
}
''',
    '''base = { job.mode = "BATCH", parallelism = 1 }
env = ${base}
env { job.name = "seed" }
fields = { a = int }
source { FakeSource { schema = { fields = ${fields} }, tables_configs = [] } }
sink { LocalFile { path = "/tmp/st_fuzz", file_format_type = "${fmt:csv}", compress_codec = "none" } }
''',
]
# what a mutation puts in: HOCON's punctuation, quotes, substitutions, newlines, odd bytes
PIECES = ["{", "}", "[", "]", "=", ":", ",", '"', '"""', "${", "${?", "}", "\n", "#", "//", "+=", "\\", "->",
          ".", "source", "sink", "include ", 'include "x"', "FakeSource {", "null", "-1", "1e400", "\u00e9",
          "\ufeff", "\t", " ", "$", "?", "plugin_input = \"nope\"", "parallelism = 0"]


@st.composite
def mutated(draw) -> str:
    text = draw(st.sampled_from(SEEDS))
    for _ in range(draw(st.integers(1, 4))):
        at = draw(st.integers(0, len(text)))
        kind = draw(st.sampled_from(["insert", "delete", "duplicate", "truncate"]))
        if kind == "insert":
            text = text[:at] + draw(st.sampled_from(PIECES)) + text[at:]
        elif kind == "delete":
            text = text[:at] + text[at + draw(st.integers(1, 12)):]
        elif kind == "duplicate":
            lines = text.splitlines(keepends=True)
            k = draw(st.integers(0, max(len(lines) - 1, 0)))
            text = "".join(lines[:k + 1] + lines[k:k + 1] + lines[k + 1:])
        else:
            text = text[:at]
    return text


@pytest.fixture(scope="module")
def conf_path(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("fuzz") / "job.conf"


@settings(max_examples=examples(400), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                  HealthCheck.too_slow])
@given(text=mutated())
def test_plan_never_ends_in_a_traceback(text, conf_path, capsys):
    conf_path.write_text(text, encoding="utf-8")
    code = main(["plan", str(conf_path), "--no-cache"])  # any exception fails the test
    _, err = capsys.readouterr()
    assert code in (0, 2)
    if code == 2:
        assert err.strip() and "Traceback" not in err
        assert all(line.startswith((str(conf_path), "error:", "warning:", "<config>")) or not line.strip()
                   for line in err.splitlines()), err
