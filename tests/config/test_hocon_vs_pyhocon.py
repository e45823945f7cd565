"""Our HOCON reader against pyhocon, on configs where SeaTunnel's dialect and plain HOCON agree.

The generator writes a random config together with the value it must read as (the
model). Our reader must give the model, and pyhocon must give the same. Shared syntax
only: no dotted keys, no repeated keys, no plugin sections (``source``/``transform``/
``sink`` blocks), which the dialect reads differently on purpose (see the tests at the
end).

pyhocon 0.3.x departs from HOCON (and from Typesafe Config, which SeaTunnel uses) in a
few places; the generator avoids them, and hand-written tests below pin our (spec)
behaviour there:

* ``\\uXXXX``, ``\\b``, ``\\f`` and ``\\/`` escapes are left undecoded;
* a boolean or null substituted into a string concatenation reads ``True``/"" (HOCON:
  ``true``/``null``), and ``true false`` unquoted reads ``TrueFalse``;
* ``b = ${a}`` with ``a = null`` drops ``b``;
* a number followed by trailing spaces at the very end of the text reads as a string;
* a tab inside an unquoted value becomes a space, inside a triple-quoted string spaces;
* an empty string in a list is dropped (``[""]`` reads ``[]``);
* ``a += 1`` reads ``1`` (HOCON: ``[1]``);
* ``.5`` reads 0.5 (not a HOCON number: the text ".5").

Also left out, where ours departs from Typesafe Config rather than pyhocon (reported,
minor): numbers with leading zeros (``01``: ours the text "01", Typesafe and pyhocon 1)
and floats substituted into a concatenation (Typesafe keeps the number's original text,
``"a"${f}`` with ``f = 1e5`` is ``a1e5``; pyhocon and ours print the float, ``a100000.0``).
"""

from __future__ import annotations

import json
import math
import string

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pyhocon import ConfigFactory
from pyhocon.config_tree import NoneValue

from airflow_provider_seatunnel.config import hocon
from airflow_provider_seatunnel.config.errors import ConfigError
from tests.markers import examples

SETTINGS = settings(max_examples=examples(300), deadline=None, suppress_health_check=[HealthCheck.too_slow])


def ours(text: str):
    root = hocon.parse(text, "diff.conf")
    hocon.resolve(root, lambda name: hocon.MISSING, "diff.conf")
    return hocon.to_plain(root)


def theirs(text: str):
    return _plain(ConfigFactory.parse_string(text))


def _plain(value):
    """pyhocon's ConfigTree/lists as plain dicts and lists, key order kept."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return None if isinstance(value, NoneValue) else value


def same(a, b) -> bool:
    """Equal values of equal types (1 is not 1.0 nor True), keys in the same order."""
    if isinstance(a, dict) or isinstance(b, dict):
        return (isinstance(a, dict) and isinstance(b, dict) and list(a) == list(b)
                and all(same(a[k], b[k]) for k in a))
    if isinstance(a, list) or isinstance(b, list):
        return isinstance(a, list) and isinstance(b, list) and len(a) == len(b) and all(map(same, a, b))
    if type(a) is not type(b):
        return False
    if isinstance(a, float):
        return a == b or (math.isnan(a) and math.isnan(b))
    return a == b


def test_same_is_strict():
    assert same({"a": [1, 2.5, None]}, {"a": [1, 2.5, None]})
    assert not same(1, 1.0) and not same(1, True) and not same("1", 1)
    assert not same({"a": 1, "b": 2}, {"b": 2, "a": 1})


# ---------------------------------------------------------------------------
# The generator: (text, model value) pairs

# keywords, and the plugin sections (read differently at the top level) as keys or words
RESERVED = {"include", "true", "false", "null", "yes", "no", "on", "off", *hocon.PLUGIN_SECTIONS}

KEY = st.from_regex(r"[a-z][a-z0-9_-]{0,7}", fullmatch=True).filter(lambda k: k not in RESERVED)
QUOTED_KEY = st.text(string.ascii_letters + string.digits + " -_éß中", min_size=1, max_size=8).filter(
    lambda k: k.strip() == k and k not in RESERVED)
WORD = st.from_regex(r"[A-Za-zé][A-Za-z0-9_é-]{0,7}", fullmatch=True).filter(lambda w: w.lower() not in RESERVED)
# characters for quoted strings: printable text and some non-ASCII, plus the escapes both decode
STRING_CHARS = st.characters(codec="utf-8", exclude_categories=["Cs", "Cc"]) | st.sampled_from(
    ["\n", "\t", '"', "\\", "$", "{", "}", "#", "/", "é", "😀"])
INDENT = st.sampled_from(["", " ", "  ", "\t", "    "])


def quote(s: str) -> str:
    out = s.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\t", "\\t")
    return f'"{out}"'


@st.composite
def float_text(draw) -> tuple[str, float]:
    if draw(st.booleans()):
        x = draw(st.floats(allow_nan=False, allow_infinity=False))
        text = repr(x)
    else:
        text = f"{draw(st.sampled_from(['', '-']))}{draw(st.integers(0, 10**6))}.{draw(st.integers(0, 999)):03d}"
        if draw(st.booleans()):
            text += f"{draw(st.sampled_from('eE'))}{draw(st.sampled_from(['', '+', '-']))}{draw(st.integers(0, 30))}"
    return text, float(text)


@st.composite
def scalar(draw, scalars: dict) -> tuple[str, object]:
    """A scalar (or a substitution/concatenation yielding one) and its value."""
    kinds = ["int", "float", "bool", "null", "quoted", "unquoted", "triple"]
    targets = [n for n, v in scalars.items() if v is not None]  # pyhocon drops b in a = null, b = ${a}
    if targets:
        kinds += ["subst", "concat", "concat"]
    kind = draw(st.sampled_from(kinds))
    if kind == "int":
        n = draw(st.integers(-(10**20), 10**20))
        return str(n), n
    if kind == "float":
        return draw(float_text())
    if kind == "bool":
        b = draw(st.booleans())
        return ("true" if b else "false"), b
    if kind == "null":
        return "null", None
    if kind == "quoted":
        s = draw(st.text(STRING_CHARS, max_size=12))
        return quote(s), s
    if kind == "unquoted":
        words = draw(st.lists(WORD, min_size=1, max_size=3))
        gaps = [draw(st.sampled_from([" ", "  "])) for _ in words[1:]]
        text = words[0] + "".join(g + w for g, w in zip(gaps, words[1:], strict=True))
        return text, text
    if kind == "triple":
        s = draw(st.text(STRING_CHARS, max_size=12).filter(lambda t: '"""' not in t and "\t" not in t))
        return f'"""{s}"""', s
    if kind == "subst":
        name = draw(st.sampled_from(targets))
        return "${" + name + "}", scalars[name]
    return draw(concatenation(scalars))


@st.composite
def concatenation(draw, scalars: dict) -> tuple[str, str]:
    """``"a"${x}"b"``-style: pieces on one line, the spaces between them kept."""
    joinable = [n for n, v in scalars.items() if isinstance(v, str) or (isinstance(v, int) and not isinstance(v, bool))]
    pieces = []
    for _ in range(draw(st.integers(2, 4))):
        kind = draw(st.sampled_from(["quoted", "word", "subst"] if joinable else ["quoted", "word"]))
        if kind == "quoted":
            s = draw(st.text(STRING_CHARS, max_size=6))
            pieces.append((quote(s), s))
        elif kind == "word":
            w = draw(WORD)
            pieces.append((w, w))
        else:
            name = draw(st.sampled_from(joinable))
            pieces.append(("${" + name + "}", str(scalars[name])))
    if all(not t.startswith(('"', "$")) for t, _ in pieces):  # only words: make it a real concatenation
        pieces[0] = ('"q"', "q")
    text, value = pieces[0]
    for t, v in pieces[1:]:
        gap = draw(st.sampled_from(["", " ", "  "]))
        if not gap and not t.startswith(('"', "$")) and not text.endswith(('"', "}")):
            gap = " "  # two bare words touching would be one word
        if not gap and t.startswith('"') and text.endswith('"'):
            gap = " "  # "" followed by "x" would open a triple-quoted string
        text += gap + t
        value += gap + v
    return text, value


@st.composite
def value(draw, scalars: dict, depth: int) -> tuple[str, object]:
    kinds = ["scalar", "scalar", "scalar"]
    if depth < 3:
        kinds += ["object", "list"]
    kind = draw(st.sampled_from(kinds))
    if kind == "scalar":
        return draw(scalar(scalars))
    if kind == "object":
        return draw(obj(scalars, depth + 1))
    return draw(array(scalars, depth + 1))


def _sep_and_comment(draw) -> str:
    """What follows an entry: a comma, or an end of line with perhaps a comment."""
    choice = draw(st.sampled_from([",", ", ", "\n", "\n", ",\n", "\n\n", " # c", " // c d", ", # x"]))
    if "#" in choice or "//" in choice:
        choice += "\n"
    return choice


@st.composite
def array(draw, scalars: dict, depth: int) -> tuple[str, list]:
    # not "" in a list: pyhocon drops it
    items = draw(st.lists(value(scalars, depth).filter(lambda item: item[1] != ""), max_size=4))
    pad = draw(INDENT) * depth
    text = "[" + draw(st.sampled_from(["", " ", "\n"]))
    for k, (t, _) in enumerate(items):
        text += pad + t
        if k < len(items) - 1 or draw(st.booleans()):
            text += _sep_and_comment(draw)
    text += draw(st.sampled_from(["", " ", "\n"])) + "]"
    return text, [v for _, v in items]


def _key_text(draw, key: str) -> str:
    if any(c not in string.ascii_lowercase + string.digits + "_-" for c in key) or draw(st.booleans()):
        return quote(key)
    return key


@st.composite
def fields(draw, scalars: dict, depth: int, top: bool = False) -> tuple[str, dict]:
    """Entries of an object (or the root): text and model. At the top level scalars are
    recorded as substitution targets as they are defined."""
    names = draw(st.lists(KEY | QUOTED_KEY, max_size=6 if top else 4, unique=True))
    pad = draw(INDENT) * depth
    text, model = "", {}
    for k, name in enumerate(names):
        t, v = draw(value(scalars, depth))
        key = _key_text(draw, name)
        if isinstance(v, dict) and draw(st.booleans()):
            entry = f"{key} {t}"  # key { ... }
        else:
            entry = key + draw(st.sampled_from([" = ", " : ", "=", ":", " =  "])) + t
        text += pad + entry
        if k < len(names) - 1:
            text += _sep_and_comment(draw)
        elif draw(st.booleans()):
            text += draw(st.sampled_from([",", "\n", " # end\n"]))
        model[name] = v
        if top and not isinstance(v, (dict, list)) and all(c.isalnum() or c in "_-" for c in name) \
                and name.isascii():
            scalars[name] = v
    return text, model


@st.composite
def obj(draw, scalars: dict, depth: int) -> tuple[str, dict]:
    text, model = draw(fields(scalars, depth))
    open_, close = draw(st.sampled_from([("{", "}"), ("{ ", " }"), ("{\n", "\n}"), ("{", "\n}")]))
    return open_ + text + close, model


@st.composite
def configs(draw) -> tuple[str, dict]:
    scalars: dict = {}
    text, model = draw(fields(scalars, 0, top=True))
    assert not set(model) & set(hocon.PLUGIN_SECTIONS)
    if draw(st.booleans()):
        text = "{\n" + text + "\n}"
    head = draw(st.sampled_from(["", "# a config\n", "// header\n\n", "\n"]))
    return head + text + "\n", model


@SETTINGS
@given(case=configs())
def test_our_reader_agrees_with_pyhocon_and_the_model(case):
    text, model = case
    mine = ours(text)
    assert same(mine, model), f"ours differs from the model\n--- text\n{text}\n--- ours\n{mine!r}\n--- model\n{model!r}"
    other = theirs(text)
    assert same(mine, other), f"ours differs from pyhocon\n--- text\n{text}\n--- ours\n{mine!r}\n--- pyhocon\n{other!r}"


@settings(SETTINGS, max_examples=examples(150))
@given(case=configs())
def test_json_output_of_the_model_reads_back_the_same(case):
    """JSON is a subset of HOCON: the model dumped as JSON reads back as itself, both ways."""
    _, model = case
    text = json.dumps(model, ensure_ascii=False)
    if "Infinity" in text:
        return  # 1e400 is a HOCON float but not JSON
    assert same(ours(text), model)
    assert same(theirs(text), model)


# ---------------------------------------------------------------------------
# Hand-written cases where both read the same


@pytest.mark.parametrize("text, expected", [
    ('a = 1\nb = -5\nc = 1.5\nd = 1e5\ne = -0.25e-3\nf = true\ng = null', {
        "a": 1, "b": -5, "c": 1.5, "d": 100000.0, "e": -0.00025, "f": True, "g": None}),
    ('a = "x\\ny\\t\\"q\\"\\\\"', {"a": 'x\ny\t"q"\\'}),
    ('a = """x"y\nz"""', {"a": 'x"y\nz'}),
    ('a = """"x""""', {"a": '"x"'}),
    ('x = hello\nb = "a"${x}"b"\nc = "a" ${x} "b"', {"x": "hello", "b": "ahellob", "c": "a hello b"}),
    ("n = 5\nb = ${n}${n}\nc = ${n}", {"n": 5, "b": "55", "c": 5}),
    ("base { a = 1 }\nderived = ${base} { b = 2 }", {"base": {"a": 1}, "derived": {"a": 1, "b": 2}}),
    ("l = [1]\na = ${l} [2]\nb = [1, 2] [3]", {"l": [1], "a": [1, 2], "b": [1, 2, 3]}),
    ("a { b { c = 1 } }\nd = ${a.b.c}", {"a": {"b": {"c": 1}}, "d": 1}),
    ("b = ${a}\na = 1", {"b": 1, "a": 1}),
    ("a = ${?nope}\nb = [1, ${?nope}, 2]", {"b": [1, 2]}),
    ("a { x = 1 }\na { y = 2 }", {"a": {"x": 1, "y": 2}}),
    ("a = 1\na = 2", {"a": 2}),
    ("a = [ # c\n1 // d\n2,\n]", {"a": [1, 2]}),
    ("a = foo  bar # c", {"a": "foo  bar"}),
    ('"a b" = 1\nc = ${"a b"}', {"a b": 1, "c": 1}),
    ("a b = 1", {"a b": 1}),
    ("{ a = 1, b = 2 }", {"a": 1, "b": 2}),
    ("a = 10000000000000000000000\nb = 1e400", {"a": 10**22, "b": float("inf")}),
])
def test_examples_both_read_alike(text, expected):
    assert same(ours(text), expected)
    assert same(theirs(text), expected)


# ---------------------------------------------------------------------------
# Where pyhocon departs from HOCON: ours follows the spec (and Typesafe Config)


@pytest.mark.parametrize("text, expected", [
    ('a = "\\u0041\\u00e9\\/\\b\\f"', {"a": "Aé/\b\f"}),
    ('t = true\nz = null\nb = "a"${t}"b"${z}', {"t": True, "z": None, "b": "atruebnull"}),
    ("a = true false", {"a": "true false"}),
    ("a = null\nb = ${a}", {"a": None, "b": None}),
    ("a = 1.5 ", {"a": 1.5}),
    ("a = foo\tbar", {"a": "foo\tbar"}),
    ('a = """x\ty"""', {"a": "x\ty"}),
    ("a += 1\nb = [0]\nb += 1", {"a": [1], "b": [0, 1]}),
    ("a = .5", {"a": ".5"}),
    ('a = ["", 1, """"""]', {"a": ["", 1, ""]}),
])
def test_where_pyhocon_departs_from_hocon(text, expected):
    assert same(ours(text), expected)
    assert not same(theirs(text), expected)  # if pyhocon is fixed, widen the generator


# ---------------------------------------------------------------------------
# The dialect's intended differences


def test_duplicate_plugin_blocks_stay_two_where_pyhocon_merges():
    text = """
source {
  FakeSource { plugin_output = "a", row.num = 1 }
  FakeSource { plugin_output = "b" }
}
"""
    mine = ours(text)
    assert mine["source"] == [
        {"plugin_output": "a", "row.num": 1, "plugin_name": "FakeSource"},
        {"plugin_output": "b", "plugin_name": "FakeSource"},
    ]
    other = theirs(text)
    assert other["source"] == {"FakeSource": {"plugin_output": "b", "row": {"num": 1}}}


def test_two_source_sections_keep_every_block():
    mine = ours("source { A { x = 1 } }\nsource { A { x = 2 } }")
    assert [b["x"] for b in mine["source"]] == [1, 2]
    assert theirs("source { A { x = 1 } }\nsource { A { x = 2 } }") == {"source": {"A": {"x": 2}}}


def test_dotted_keys_stay_flat_where_pyhocon_nests():
    text = "env { job.mode = BATCH }\nrow.num = 5\n"
    assert ours(text) == {"env": {"job.mode": "BATCH"}, "row.num": 5}
    assert theirs(text) == {"env": {"job": {"mode": "BATCH"}}, "row": {"num": 5}}


def test_plugin_sections_nested_deeper_are_ordinary_objects():
    text = "env { source { A { x = 1 } } }"
    assert ours(text) == theirs(text) == {"env": {"source": {"A": {"x": 1}}}}


def test_unbalanced_input_is_a_config_error_naming_the_file():
    with pytest.raises(ConfigError) as info:
        ours("a { b = 1\n")
    assert "diff.conf" in str(info.value)


# ---------------------------------------------------------------------------
# Bugs: valid HOCON both pyhocon and Typesafe Config read, ours does not (reported)


def test_object_concatenation_merges():
    """HOCON value concatenation of objects, ``{ c = 1 } { d = 2 }``, is one merged object
    (pyhocon and Typesafe Config 1.4.1 agree)."""
    text = "a = { c = 1 } { d = 2 }\nl = [ { c = 1 } { d = 2 } ]"
    expected = {"a": {"c": 1, "d": 2}, "l": [{"c": 1, "d": 2}]}
    assert same(theirs(text), expected)
    assert same(ours(text), expected)


def test_self_referential_substitution_extends_the_earlier_value():
    """A HOCON self-reference, ``p = ${p}":y"``, extends the earlier value of ``p``
    (pyhocon and Typesafe Config 1.4.1 agree)."""
    text = 'p = x\np = ${p}":y"\nl = [1]\nl = ${l} [2]'
    expected = {"p": "x:y", "l": [1, 2]}
    assert same(theirs(text), expected)
    assert same(ours(text), expected)
