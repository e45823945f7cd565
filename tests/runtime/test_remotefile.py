"""FtpFile and SftpFile on real Spark against real servers on loopback (tests/file_servers.py:
pyftpdlib's FTP server, Debian's OpenSSH): formats round-trip, partitions, the fenced commit
(a killed committer rolled forward, an overlapping older attempt fenced) and the server's
refusal of a second version of a fence record. The files are checked on the server's disk."""

from __future__ import annotations

import datetime as dt
import re

import pytest

from airflow_provider_seatunnel.runtime import faults, twophase
from airflow_provider_seatunnel.runtime.executor import RunContext
from airflow_provider_seatunnel.spi import get_connector
from airflow_provider_seatunnel.spi.rows import with_kind
from tests import file_servers

FIELDS = "id = int, name = string, day = date"
PLUGINS = {"ftp": "FtpFile", "sftp": "SftpFile"}


@pytest.fixture(scope="module", params=["ftp", "sftp"])
def server(request):
    with file_servers.running(request.param) as running:
        yield running


def connector(server):
    return get_connector(PLUGINS[server.scheme])


def sink(server):
    """The engine's two phases over the plugin's storage verbs."""
    return twophase.driver(connector(server))


def frame(spark, start: int, n: int, parts: int = 2):
    rows = [(i, f"n{i}", dt.date(2024, 1, 1 + i % 3)) for i in range(start, start + n)]
    return {"t": with_kind(spark.createDataFrame(rows, "id int, name string, day date").repartition(parts))}


def block(server, folder: str, **options) -> str:
    extra = "".join(f', {k} = "{v}"' if isinstance(v, str) else f", {k} = {str(v).lower()}"
                    for k, v in options.items())
    mode = ', connection_mode = "passive_local"' if server.scheme == "ftp" else ""
    return f'{server.options()}{mode}, path = "{server.path(folder)}"{extra}'


def sink_ctx(plan_of, spark, server, options: str, run_id: str, attempt: int = 1, fault: str | None = None):
    plan = plan_of(f"""
source {{ LocalFile {{ plugin_output = "t", path = "/nowhere", file_format_type = "parquet" }} }}
sink {{ {PLUGINS[server.scheme]} {{ {options} }} }}
""")
    p = plan.pipelines[0]
    opts = faults.from_environment({faults.ENV: fault}) if fault else None
    return RunContext(spark, plan, p, run_id, attempt=attempt, options=opts), p.sinks[0]


def read_rows(plan_of, spark, server, options: str, columns: str = "id") -> list:
    plan = plan_of(f'source {{ {PLUGINS[server.scheme]} {{ plugin_output = "r", {options} }} }}\n'
                   "sink { Console { } }")
    p = plan.pipelines[0]
    tables = connector(server).read(RunContext(spark, plan, p, "reader"), p.sources[0])
    return sorted(tuple(r) for df in tables.values() for r in df.select(*columns.split(",")).collect())


def published(server, folder: str) -> list[str]:
    """The data files on the server's disk: everything but the sink's bookkeeping."""
    root = server.local(folder)
    return sorted(str(p.relative_to(root)) for p in root.rglob("*")
                  if p.is_file() and ".seatunnel-" not in str(p)) if root.exists() else []


@pytest.mark.parametrize("fmt", ["csv", "parquet", "excel"])
def test_each_format_round_trips(spark, plan_of, server, fmt):
    folder = f"round-{fmt}"
    options = block(server, folder, file_format_type=fmt)
    ctx, vertex = sink_ctx(plan_of, spark, server, options, "run-1")
    info = sink(server).prepare(ctx, vertex, frame(spark, 0, 20))
    assert published(server, folder) == []  # staged only
    sink(server).commit(ctx, vertex, info)
    files = published(server, folder)
    ext = "xlsx" if fmt == "excel" else fmt
    assert len(files) == 2 and all(re.fullmatch(rf"T_\w+_run-1_0_1_{i}\.{ext}", f) for i, f in enumerate(files)), files
    assert not list(server.local(folder).glob(".seatunnel-staging/**/*.*"))
    if fmt == "csv":  # the row delimiter goes between rows, not after the last (SeaTunnel's files)
        bodies = [(server.local(folder) / f).read_bytes() for f in files]
        assert sum(b.count(b"\n") for b in bodies) == 20 - len(bodies), bodies  # 20 rows
        assert not any(b.endswith(b"\n") for b in bodies), bodies
    schema = f", schema = {{ fields {{ {FIELDS} }} }}" if fmt in ("csv", "excel") else ""
    schema += ", skip_header_row_number = 1" if fmt == "excel" else ""  # the sink wrote a header row
    rows = read_rows(plan_of, spark, server, options + schema, "id,name,day")
    assert rows == [(i, f"n{i}", dt.date(2024, 1, 1 + i % 3)) for i in range(20)]


def test_partitions_and_lzo_text(spark, plan_of, server):
    folder = "parts"
    options = block(server, folder, file_format_type="text", compress_codec="lzo", field_delimiter=",")
    write = options + ', have_partition = true, partition_by = ["day"]'
    ctx, vertex = sink_ctx(plan_of, spark, server, write, "run-p")
    sink(server).commit(ctx, vertex, sink(server).prepare(ctx, vertex, frame(spark, 0, 9)))
    files = published(server, folder)
    assert {f.split("/")[0] for f in files} == {"day=2024-01-01", "day=2024-01-02", "day=2024-01-03"}
    assert all(f.endswith(".txt.lzo") for f in files), files
    rows = read_rows(plan_of, spark, server, options + ", schema = { fields { id = int, name = string } }", "id,day")
    assert rows == [(i, f"2024-01-0{1 + i % 3}") for i in range(9)]


def test_a_killed_committer_is_rolled_forward_once(spark, plan_of, server):
    folder = "killed"
    options = block(server, folder, file_format_type="json")
    read_options = f"{options}, schema = {{ fields {{ {FIELDS} }} }}"
    dying, vertex = sink_ctx(plan_of, spark, server, options, "run-1", fault="sink.move+1")
    info = sink(server).prepare(dying, vertex, frame(spark, 100, 10))
    with pytest.raises(faults.InjectedFault, match=r"sink\.move"):
        sink(server).commit(dying, vertex, info)
    sink(server).abort(dying, vertex, info)  # as the engine does: the recorded commit stays
    assert len(published(server, folder)) == 1  # half published...
    assert read_rows(plan_of, spark, server, read_options) == []  # ...and invisible to readers
    retry, _ = sink_ctx(plan_of, spark, server, options, "run-1", attempt=2)
    again = sink(server).prepare(retry, vertex, frame(spark, 100, 10))
    assert [t.committed for t in again.tables] == [True]  # the killed commit was rolled forward...
    assert read_rows(plan_of, spark, server, read_options) == [(i,) for i in range(100, 110)]  # ...by the retry
    sink(server).commit(retry, vertex, again)
    assert read_rows(plan_of, spark, server, read_options) == [(i,) for i in range(100, 110)]
    third, _ = sink_ctx(plan_of, spark, server, options, "run-1", attempt=3)
    assert [t.committed for t in sink(server).prepare(third, vertex, frame(spark, 100, 10)).tables] == [True]
    assert len(published(server, folder)) == 2


def test_a_fence_record_version_is_written_once(server):
    """The compare-and-swap: two writers naming the same version, one wins."""
    from airflow_provider_seatunnel.connectors.files.bucket import Conflict
    from airflow_provider_seatunnel.connectors.remotefile.options import settings, store

    s = settings(PLUGINS[server.scheme], server.scheme, {
        "host": server.host, "port": server.port, "user": server.user, "password": server.password,
        "key_file": server.key_file, "path": server.path("cas"), "connection_mode": "passive_local",
        "host_key_fingerprint": server.host_key_fingerprint})
    one, two = store(s), store(s)
    key = s.key("fence.json")
    first = one.write_json(key, {"token": 1}, None)
    with pytest.raises(Conflict):
        two.write_json(key, {"token": 9}, None)
    assert one.write_json(key, {"token": 2}, first) != first
    with pytest.raises(Conflict):
        two.write_json(key, {"token": 3}, first)  # stale: names the version it read
    got = two.read_json(key)
    assert got is not None and got.value == {"token": 2}
    assert [k for k, _ in one.objects(s.prefix + "/")] == [key]
    one.close()
    two.close()


def test_a_planted_or_escaping_fence_record_is_refused_and_nothing_is_copied(server):
    """A fence record not sealed by the target, or sealed but naming a file outside its path, fails
    the run before anything is copied (docs/security.md)."""
    import posixpath

    from airflow_provider_seatunnel.connectors.files import storecommits as commits
    from airflow_provider_seatunnel.connectors.remotefile.options import settings, store
    from airflow_provider_seatunnel.spi.journals import TamperedRecord, seal

    s = settings(PLUGINS[server.scheme], server.scheme, {
        "host": server.host, "port": server.port, "user": server.user, "password": server.password,
        "key_file": server.key_file, "path": server.path("planted"), "connection_mode": "passive_local",
        **({"host_key_fingerprint": server.host_key_fingerprint} if server.host_key_fingerprint else {})})
    client = store(s)
    keys = commits.slot_keys(s, "run1", "p0", "FtpFile[0]", "t", "run1")  # type: ignore[arg-type]
    outside = posixpath.join(posixpath.dirname(s.prefix), "private-planted", "secret.csv")
    client.mkdirs(posixpath.dirname(outside))
    client.put(outside, b"1,secret\n")
    final = s.key("stolen.csv")
    commit = {"token": 1, "moves": [[outside, final]], "drops": [], "done": False,
              "staging": keys["staging"] + "token-1/", "pending": commits.pending_key(keys, 1), "table": "t"}
    client.write_json(keys["fence"], {"token": 1, "commit": commit}, None)
    with pytest.raises(TamperedRecord, match="not a sealed record"):
        commits.take_token(client, keys)
    sealed = seal({"token": 1, "commit": commit}, commits.journal_key(client, s.prefix), keys["fence"][len(s.prefix) + 1:])
    client.write_json(keys["fence"], sealed, client.read_json(keys["fence"]).etag)
    with pytest.raises(TamperedRecord, match="outside its target"):
        commits.take_token(client, keys)
    assert client.get(final) is None and client.get(outside) == b"1,secret\n"
    client.close()
