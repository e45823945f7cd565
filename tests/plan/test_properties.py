"""Property tests of the compiler: random valid jobs plan sanely, corrupted ones fail cleanly.

The generator builds a job as plain data (:class:`Job`) and renders it as HOCON. The
expected pipeline count is computed here from that data, independently of the planner:
a weakly connected part with a multi-input vertex splits into one pipeline per
source→sink path, any other part is one pipeline (README "How a job becomes pipelines").
"""

from __future__ import annotations

import re
import string
from dataclasses import dataclass, replace
from itertools import pairwise

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from airflow_provider_seatunnel.config.errors import ConfigError
from airflow_provider_seatunnel.plan.compiler import compile_text
from airflow_provider_seatunnel.plan.model import JobPlan
from tests.markers import examples

FILE = "prop_job.conf"
TASK_ID = re.compile(r"^[A-Za-z0-9_.-]{1,250}$")
SETTINGS = settings(max_examples=examples(400), deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])


@pytest.fixture(autouse=True)
def _no_plan_cache(monkeypatch):
    monkeypatch.setenv("SEATUNNEL_PLAN_CACHE", "off")


# ---------------------------------------------------------------------------
# The job model and its HOCON rendering


@dataclass(frozen=True)
class Plugin:
    section: str  # source | transform | sink
    name: str  # FakeSource, Sql, Filter, Copy, Console, Assert, LocalFile
    output: str | None  # plugin_output (sources and transforms)
    inputs: tuple[str, ...]  # plugin_input (transforms and sinks)
    parallelism: object = None  # None: not set; else rendered as written
    input_style: str = "list"  # list | string (a single name or "a, b")
    tag: int = 0  # > 0 tells apart sinks that would otherwise be identical (see jobs())


@dataclass(frozen=True)
class Job:
    sources: tuple[Plugin, ...]
    transforms: tuple[Plugin, ...]  # in dependency order (every input defined earlier)
    sinks: tuple[Plugin, ...]
    env_parallelism: object = None
    job_mode: str | None = None
    transform_order: tuple[int, ...] = ()  # the order the transform blocks are written in
    row_num: int = 5  # FakeSource's row.num: tuning it must not rename tasks

    @property
    def plugins(self) -> tuple[Plugin, ...]:
        return self.sources + self.transforms + self.sinks


class Raw(str):
    """Text rendered into the config as written (no quotes added)."""


def _value(v: object) -> str:
    if isinstance(v, Raw):
        return str(v)
    return f'"{v}"' if isinstance(v, str) else str(v)


def _inputs(p: Plugin) -> str:
    if p.input_style == "string":
        return '"' + ", ".join(p.inputs) + '"'
    return "[" + ", ".join(f'"{i}"' for i in p.inputs) + "]"


def _block(p: Plugin, row_num: int = 5) -> str:
    lines = [f"  {p.name} {{"]
    if p.output is not None:
        lines.append(f'    plugin_output = "{p.output}"')
    if p.inputs:
        lines.append(f"    plugin_input = {_inputs(p)}")
    if p.parallelism is not None:
        lines.append(f"    parallelism = {_value(p.parallelism)}")
    if p.name == "FakeSource":
        lines.append(f"    row.num = {row_num}")
        lines.append("    schema = { fields { a = int, b = string } }")
    elif p.name == "Sql":
        lines.append(f'    query = "select * from {p.inputs[0]}"')
    elif p.name == "Filter":
        lines.append("    include_fields = [a]")
    elif p.name == "Copy":
        lines.append("    fields { b = a }")
    elif p.name == "Console" and p.tag:
        lines.append(f"    log.print.delay.ms = {p.tag}")
    elif p.name == "Assert":
        lines.append(f"    rules {{ row_rules = [{{rule_type = MIN_ROW, rule_value = {p.tag}}}] }}")
    elif p.name == "LocalFile":
        lines.append(f'    path = "/tmp/x{p.tag or ""}"')
        lines.append('    file_format_type = "csv"')
    lines.append("  }")
    return "\n".join(lines)


def render(job: Job, transform_order: tuple[int, ...] | None = None) -> str:
    order = transform_order if transform_order is not None else job.transform_order
    env = []
    if job.job_mode is not None:
        env.append(f"  job.mode = {_value(job.job_mode)}")
    if job.env_parallelism is not None:
        env.append(f"  parallelism = {_value(job.env_parallelism)}")
    parts = ["env {", *env, "}", "source {", *(_block(p, job.row_num) for p in job.sources), "}"]
    parts += ["transform {", *(_block(job.transforms[i]) for i in order), "}"]
    parts += ["sink {", *(_block(p) for p in job.sinks), "}"]
    return "\n".join(parts) + "\n"


# ---------------------------------------------------------------------------
# Strategies

PARALLELISM = st.one_of(st.none(), st.integers(1, 8))


@st.composite
def input_names(draw, available: list[str]) -> tuple[tuple[str, ...], str]:
    size = min(draw(st.sampled_from([1, 1, 2, 3])), len(available))  # mostly one input
    names = draw(st.lists(st.sampled_from(available), min_size=size, max_size=size, unique=True))
    return tuple(names), draw(st.sampled_from(["list", "string"]))


@st.composite
def jobs(draw) -> Job:
    n_sources = draw(st.integers(1, 4))
    sources = tuple(Plugin("source", "FakeSource", f"src{i}", (), draw(PARALLELISM)) for i in range(n_sources))
    available = [p.output for p in sources]
    transforms = []
    for i in range(draw(st.integers(0, 4))):
        inputs, style = draw(input_names(available))
        name = draw(st.sampled_from(["Sql", "Filter", "Copy"]))
        transforms.append(Plugin("transform", name, f"tr{i}", inputs, draw(PARALLELISM), style))
        available.append(f"tr{i}")
    sinks = []
    for _ in range(draw(st.integers(1, 3))):
        inputs, style = draw(input_names(available))
        name = draw(st.sampled_from(["Console", "Assert", "LocalFile"]))
        sinks.append(Plugin("sink", name, None, inputs, draw(PARALLELISM), style))
    read = {i for p in [*transforms, *sinks] for i in p.inputs}
    unread = [name for name in available if name not in read]
    if unread:
        if draw(st.booleans()):  # one Console per unread output
            sinks += [Plugin("sink", "Console", None, (name,), draw(PARALLELISM)) for name in unread]
        else:  # one Console reading all of them (a multi-input sink when several)
            sinks.append(Plugin("sink", "Console", None, tuple(unread), draw(PARALLELISM)))
    # Two sinks of one plugin with the same inputs and options make, in a split part, two
    # pipelines with the same content: the compiler refuses them ("two pipelines are
    # identical"), since task ids never depend on position. Tell such sinks apart.
    seen: dict[tuple, int] = {}
    for k, p in enumerate(sinks):
        key = (p.name, frozenset(p.inputs))
        seen[key] = seen.get(key, -1) + 1
        sinks[k] = replace(p, tag=seen[key])
    order = tuple(draw(st.permutations(range(len(transforms)))))
    assume(not mixes_row_types(Job(sources, tuple(transforms), tuple(sinks))))  # an error (test_engine_rules.py)
    return Job(sources, tuple(transforms), tuple(sinks), env_parallelism=draw(PARALLELISM),
               job_mode=draw(st.sampled_from([None, "BATCH", "STREAMING", "batch"])), transform_order=order)


# ---------------------------------------------------------------------------
# The independent oracle


def row_types(job: Job) -> dict[str, tuple[tuple[str, str], ...]]:
    """Each output's row type: FakeSource (a int, b string); Sql ``select *`` its first input's; Filter
    (a int); Copy ``b = a`` (a int, b int)."""
    types: dict[str, tuple[tuple[str, str], ...]] = {p.output: (("a", "int"), ("b", "string")) for p in job.sources}
    for p in job.transforms:
        types[p.output] = {"Sql": types[p.inputs[0]], "Filter": (("a", "int"),),
                           "Copy": (("a", "int"), ("b", "int"))}[p.name]
    return types


def mixes_row_types(job: Job) -> bool:
    """Whether a transform or sink reads inputs of different row types (SeaTunnel refuses the job)."""
    types = row_types(job)
    return any(len({types[i] for i in p.inputs}) > 1 for p in [*job.transforms, *job.sinks])


def _graph(job: Job) -> tuple[list[set[int]], list[set[int]], list[int]]:
    """Upstream and downstream sets per plugin (index in job.plugins), and a component id each."""
    producer = {p.output: k for k, p in enumerate(job.plugins) if p.output is not None}
    n = len(job.plugins)
    ups: list[set[int]] = [{producer[i] for i in p.inputs} for p in job.plugins]
    downs: list[set[int]] = [set() for _ in range(n)]
    for k, us in enumerate(ups):
        for u in us:
            downs[u].add(k)
    # weakly connected components by flood fill
    comp = [-1] * n
    for start in range(n):
        if comp[start] >= 0:
            continue
        comp[start], todo = start, [start]
        while todo:
            k = todo.pop()
            for m in ups[k] | downs[k]:
                if comp[m] < 0:
                    comp[m] = start
                    todo.append(m)
    return ups, downs, comp


def _split_paths(job: Job) -> list[list[int]]:
    """The source-to-sink paths of every part that has a multi-input vertex."""
    ups, downs, comp = _graph(job)

    def paths_from(k: int) -> list[list[int]]:
        return [[k]] if not downs[k] else [[k, *rest] for m in sorted(downs[k]) for rest in paths_from(m)]

    out = []
    for root in sorted(set(comp)):
        members = [k for k in range(len(comp)) if comp[k] == root]
        if any(len(ups[k]) >= 2 for k in members):
            out += [path for k in members if not ups[k] for path in paths_from(k)]
    return out


def expected_pipeline_count(job: Job) -> int:
    """Count pipelines from the job's own structure, in plain Python."""
    ups, _, comp = _graph(job)
    split_parts = {comp[k] for k in range(len(comp)) if len(ups[k]) >= 2}
    return len(_split_paths(job)) + len(set(comp) - split_parts)


def has_twin_paths(job: Job) -> bool:
    """Two split pipelines with the same source and sink (e.g. src -> sink and src -> tr -> sink)."""
    ends = [(path[0], path[-1]) for path in _split_paths(job)]
    return len(ends) != len(set(ends))


# ---------------------------------------------------------------------------
# Valid jobs


def _compile(text: str, file: str = FILE) -> JobPlan:
    return compile_text(file, text, None, environ={})


def _check_plan(job: Job, plan: JobPlan) -> None:
    d = plan.to_dict()
    pipelines = d["pipelines"]
    assert d["job"]["pipeline_count"] == len(pipelines) == len(plan.pipelines)

    refs_seen = {v["ref"] for p in pipelines for v in p["vertices"]}
    assert {f"sink[{i}]" for i in range(len(job.sinks))} <= refs_seen
    assert {f"source[{i}]" for i in range(len(job.sources))} <= refs_seen
    assert {f"transform[{i}]" for i in range(len(job.transforms))} <= refs_seen

    task_ids = [p["task_id"] for p in pipelines]
    assert len(set(task_ids)) == len(task_ids), task_ids
    for t in task_ids:
        assert TASK_ID.match(t), t
    assert [p["id"] for p in pipelines] == list(range(1, len(pipelines) + 1))

    env_par = job.env_parallelism or 1
    for p in pipelines:
        ids = [v["id"] for v in p["vertices"]]
        assert len(set(ids)) == len(ids)
        for a, b in p["edges"]:
            assert a in ids and b in ids, (a, b, ids)
        kinds = [v["kind"] for v in p["vertices"]]
        assert "source" in kinds and "sink" in kinds
        for v in p["vertices"]:
            assert type(v["parallelism"]) is int and v["parallelism"] >= 1
            if v["kind"] == "source":  # its own parallelism, else env.parallelism
                own = job.sources[int(v["ref"][len("source["):-1])].parallelism
                assert v["parallelism"] == (own or env_par)
        for g in p["task_groups"]:
            assert type(g["parallelism"]) is int and g["parallelism"] >= 1
            assert set(g["vertices"]) <= set(ids)
        assert sorted(m for g in p["task_groups"] for m in g["vertices"]) == sorted(ids)
        for c in p["chains"]:
            assert type(c["parallelism"]) is int and c["parallelism"] >= 1
        assert len(p["physical_vertices"]) == sum(g["parallelism"] for g in p["task_groups"])
        if p["split"]["split"]:  # one source-to-sink path: a line
            assert kinds.count("source") == 1 and kinds.count("sink") == 1
            assert [list(e) for e in p["edges"]] == [list(e) for e in pairwise(ids)]
        for key in ("with_fusion", "without_fusion", "zeta"):
            assert type(p["slots"][key]) is int and p["slots"][key] >= 1

    assert len(pipelines) == expected_pipeline_count(job)


@SETTINGS
@given(job=jobs())
def test_valid_jobs_compile_to_sane_plans(job):
    text = render(job)
    plan = _compile(text)
    _check_plan(job, plan)
    # deterministic: the same text compiles to the same plan
    assert _compile(text).to_dict() == plan.to_dict()
    # the JSON plan round-trips
    assert JobPlan.from_dict(plan.to_dict(secrets=True)).to_dict() == plan.to_dict()


@SETTINGS
@given(job=jobs(), data=st.data())
def test_transform_block_order_does_not_matter(job, data):
    other = data.draw(st.permutations(range(len(job.transforms))))
    a = _compile(render(job))
    b = _compile(render(job, tuple(other)))
    assert len(a.pipelines) == len(b.pipelines)
    assert {p.task_id for p in a.pipelines} == {p.task_id for p in b.pipelines}


@SETTINGS
@given(job=jobs(), row_num=st.integers(1, 10**6), extra_sink=st.sampled_from(["Console", "Assert", "LocalFile"]))
def test_task_ids_survive_tuning_and_new_pipelines(job, row_num, extra_sink):
    """README: tuning an option such as row.num renames no task; adding a pipeline renames no other."""
    before = {p.task_id for p in _compile(render(job)).pipelines}
    assert {p.task_id for p in _compile(render(replace(job, row_num=row_num))).pipelines} == before
    extra = Plugin("source", "FakeSource", "extra_src", ())
    grown = replace(job, sources=(*job.sources, extra),
                    sinks=(*job.sinks, Plugin("sink", extra_sink, None, ("extra_src",), tag=9)))
    after = {p.task_id for p in _compile(render(grown)).pipelines}
    assert before < after and len(after) == len(before) + 1


def test_oracle_on_known_shapes():
    """The oracle itself, on shapes whose count the README states."""
    src = [Plugin("source", "FakeSource", f"src{i}", ()) for i in range(2)]
    # two sources into one sink: two pipelines
    fan_in = Job(tuple(src), (), (Plugin("sink", "Console", None, ("src0", "src1")),))
    assert expected_pipeline_count(fan_in) == 2
    # one source to two sinks: one pipeline
    fan_out = Job(tuple(src[:1]), (), (Plugin("sink", "Console", None, ("src0",)),) * 2)
    assert expected_pipeline_count(fan_out) == 1
    # disconnected: one each
    apart = Job(tuple(src), (), (Plugin("sink", "Console", None, ("src0",)),
                                 Plugin("sink", "Console", None, ("src1",))))
    assert expected_pipeline_count(apart) == 2
    # diamond: src0 -> tr0, tr1 -> sink reading both: 2 paths
    copies = (Plugin("transform", "Copy", "tr0", ("src0",)), Plugin("transform", "Copy", "tr1", ("src0",)))
    diamond = Job(tuple(src[:1]), copies, (Plugin("sink", "Console", None, ("tr0", "tr1")),), transform_order=(0, 1))
    assert expected_pipeline_count(diamond) == 2
    for job in (fan_in, fan_out, apart, diamond):
        assert len(_compile(render(job)).pipelines) == expected_pipeline_count(job)


def test_tuning_row_num_keeps_twin_pipeline_ids():
    """Two pipelines with the same source and sink (src0 -> Console and src0 -> Sql ->
    Console) collide on their short task ids; the fallback must not hash tunable options,
    so tuning FakeSource's row.num renames neither task."""
    job = Job((Plugin("source", "FakeSource", "src0", ()),),
              (Plugin("transform", "Sql", "tr0", ("src0",)),),
              (Plugin("sink", "Console", None, ("src0", "tr0")),), transform_order=(0,))
    assert has_twin_paths(job)
    before = [p.task_id for p in _compile(render(job)).pipelines]
    after = [p.task_id for p in _compile(render(replace(job, row_num=6))).pipelines]
    assert len(before) == 2
    assert after == before


# ---------------------------------------------------------------------------
# Corrupted jobs


def _assert_clean_error(err: ConfigError, file: str) -> None:
    assert err.problems
    for p in err.problems:
        assert isinstance(p.message, str) and p.message.strip()
    assert file in str(err)


def _compile_or_config_error(text: str, file: str) -> ConfigError | None:
    try:
        _compile(text, file)
    except ConfigError as err:
        _assert_clean_error(err, file)
        return err
    except Exception as err:  # the property under test: nothing but ConfigError
        pytest.fail(f"{type(err).__name__} (not ConfigError) from a corrupted config: {err!r}\n---\n{text}")
    return None


INSERTS = ["{", "}", "[", "]", '"', "=", ":", ",", "${x}", "${?x}", "$", "\\", '"""', "#", "\n", "+="]


@st.composite
def text_corruptions(draw) -> str:
    """A valid job's text with one to three random edits."""
    text = render(draw(jobs()))
    for _ in range(draw(st.integers(1, 3))):
        text = draw(text_edit(text))
    return text


@st.composite
def text_edit(draw, text: str) -> str:
    if not text:
        return draw(st.sampled_from(INSERTS))
    kind = draw(st.sampled_from(["delete", "insert", "truncate", "duplicate", "replace"]))
    if kind == "delete":
        i = draw(st.integers(0, len(text) - 1))
        return text[:i] + text[i + 1:]
    if kind == "insert":
        i = draw(st.integers(0, len(text)))
        return text[:i] + draw(st.sampled_from(INSERTS)) + text[i:]
    if kind == "truncate":
        return text[:draw(st.integers(0, len(text) - 1))]
    if kind == "duplicate":
        lines = text.splitlines(keepends=True)
        i = draw(st.integers(0, len(lines) - 1))
        return "".join(lines[:i + 1] + lines[i:])
    i = draw(st.integers(0, len(text) - 1))
    return text[:i] + draw(st.characters(codec="utf-8")) + text[i + 1:]


@SETTINGS
@given(text=text_corruptions(), file=st.sampled_from(["bad.conf", "dir/with space/job.hocon", "x.conf"]))
def test_text_corruptions_fail_only_with_config_error(text, file):
    _compile_or_config_error(text, file)


BAD_PARALLELISM = st.sampled_from([0, -1, 1.5, "abc", "", "1.0", "0"]
                                  + [Raw(t) for t in ("abc", "true", "[1]", "{ a = 1 }", "2.0", "1e3")])


@st.composite
def semantic_corruptions(draw) -> tuple[str, str]:
    """A job made invalid on purpose, and the text its error must mention."""
    job = draw(jobs())
    kind = draw(st.sampled_from(["input", "parallelism", "env_parallelism", "mode", "cycle", "same_output"]))
    if kind == "cycle" and job.transforms:  # a transform reading its own output
        k = draw(st.integers(0, len(job.transforms) - 1))
        transforms = list(job.transforms)
        t = transforms[k]
        transforms[k] = replace(t, inputs=(*t.inputs, t.output))
        return render(replace(job, transforms=tuple(transforms))), "cycle"
    if kind == "same_output" and len(job.sources) > 1:  # two sources, one plugin_output
        sources = list(job.sources)
        sources[1] = replace(sources[1], output=sources[0].output)
        return render(replace(job, sources=tuple(sources))), "already used"
    if kind in ("cycle", "same_output"):
        kind = "mode"
    if kind == "input":
        # one source, one sink, at most one transform: SeaTunnel's simple graph reads the previous plugin
        # instead, with a warning (test_engine_rules.py)
        assume(not (len(job.sources) == 1 and len(job.sinks) == 1 and len(job.transforms) <= 1))
        readers = [(s, k) for s, plugins in (("transforms", job.transforms), ("sinks", job.sinks))
                   for k in range(len(plugins))]
        section, k = draw(st.sampled_from(readers))
        plugins = list(getattr(job, section))
        p = plugins[k]
        j = draw(st.integers(0, len(p.inputs) - 1))
        ghost = draw(st.sampled_from(["nowhere", "src9", "tr9", "SRC0x"]))
        plugins[k] = replace(p, inputs=(*p.inputs[:j], ghost, *p.inputs[j + 1:]))
        # the renamed dataset may now be read by nobody: an error too, but the ghost must be named
        return render(replace(job, **{section: tuple(plugins)})), ghost
    if kind == "parallelism":
        bad = draw(BAD_PARALLELISM)
        k = draw(st.integers(0, len(job.plugins) - 1))
        plugins = list(job.plugins)
        plugins[k] = replace(plugins[k], parallelism=bad)
        ns, nt = len(job.sources), len(job.transforms)
        job = replace(job, sources=tuple(plugins[:ns]), transforms=tuple(plugins[ns:ns + nt]),
                      sinks=tuple(plugins[ns + nt:]))
        return render(job), "parallelism"
    if kind == "env_parallelism":
        return render(replace(job, env_parallelism=draw(BAD_PARALLELISM))), "parallelism"
    junk = draw(st.text(string.ascii_letters + "_ -", min_size=0, max_size=12)
                | st.sampled_from([Raw("1"), Raw("true"), Raw("[BATCH]"), "BATCH STREAMING", "BATCHX"]))
    assume(junk.strip().upper() not in ("BATCH", "STREAMING"))
    return render(replace(job, job_mode=junk)), "job.mode"


@SETTINGS
@given(case=semantic_corruptions())
def test_invalid_jobs_raise_a_located_config_error(case):
    text, mention = case
    err = _compile_or_config_error(text, FILE)
    assert err is not None, f"compiled without error:\n{text}"
    assert mention in str(err)
    assert all(p.file == FILE for p in err.problems), [p.format() for p in err.problems]


TOKENS = st.sampled_from([*INSERTS, " ", "a", "1", ".", "-", "?", "env", "source", "transform", "sink", "FakeSource",
                          "Sql", "Console", "plugin_input", "plugin_output", "parallelism", "query", "job.mode",
                          "CREATE TABLE t WITH (", ")", "INSERT INTO", "SELECT * FROM", "/* config", "*/", "'"])


@SETTINGS
@given(tokens=st.lists(TOKENS, max_size=40), file=st.sampled_from(["t.conf", "t.json", "t.sql", "t.hocon"]))
def test_token_soup_fails_only_with_config_error(tokens, file):
    """Any text, in any of the three formats: a plan or a ConfigError naming the file."""
    _compile_or_config_error("".join(tokens), file)
