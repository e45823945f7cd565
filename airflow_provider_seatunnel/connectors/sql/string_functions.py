"""SeaTunnel's string functions as native Spark SQL expressions.

Rules kept from SeaTunnel (its H2-derived implementations):

* Lengths (CHAR_LENGTH/LENGTH, BIT_LENGTH, OCTET_LENGTH) are BIGINT; ASCII, LOCATE/INSTR/POSITION INT.
* CONCAT and ``||`` skip nulls (all null: an empty string); CONCAT_WS skips null values and a null
  separator counts as none. Values are joined as Java prints them (a timestamp as ``2021-04-08T13:34:45``).
* CHAR/CHR(n) is the UTF-16 unit ``n``; HEXTORAW reads 4 hex digits per character and fails on
  another length; RAWTOHEX writes 4 per character (bytes: 2 per byte), lower case.
* LOCATE/INSTR/POSITION: 0 when the string is null; a negative start searches backwards from the end.
* LPAD/RPAD and LTRIM/RTRIM/TRIM use the first character of their padding or trim string (a space when
  it is null or empty); a padded string longer than the length is cut at the end.
* SUBSTRING/SUBSTR: start 0 is 1, a negative start counts from the end; an empty result is NULL.
* REPLACE with a null or missing replacement removes the search string; TRANSLATE with a null
  replacement deletes the characters found.
* REGEXP_SUBSTR takes 2 or 6 arguments (SeaTunnel returns NULL for 3 to 5); SOUNDEX is H2's (letters
  only, padded with zeros); TO_CHAR(number) is its text, TO_CHAR(date-time, pattern) formats it.
"""

from __future__ import annotations

from typing import Any

from sqlglot import exp

from .builders import FunctionError, TypeOf, arity, call, cast, flagged, is_null, kind, number, template, text

_HEXTORAW = ("CASE WHEN _s IS NULL THEN NULL WHEN LENGTH(_s) % 4 <> 0 OR NOT REGEXP_LIKE(_s, '^[0-9A-Fa-f]*$') "
             "THEN RAISE_ERROR('HEXTORAW: the argument must be 4 hex digits per character') "
             "ELSE DECODE(UNHEX(_s), 'UTF-16BE') END")
_INSERT = ("CASE WHEN _s IS NULL THEN _a WHEN _a IS NULL THEN _s "
           "WHEN _p < 1 OR _l <= 0 OR LENGTH(_a) = 0 OR _p - 1 > LENGTH(_s) THEN _s "
           "ELSE CONCAT(SUBSTRING(_s, 1, _p - 1), _a, SUBSTRING(_s, _p + _l)) END")
# java.lang.String#indexOf / #lastIndexOf from a 1-based start (negative: from the end), 1-based, 0 if absent
_LOCATE = ("CASE WHEN _s IS NULL THEN 0 WHEN _f IS NULL THEN RAISE_ERROR('LOCATE: the search string is null') "
           "WHEN _p >= 0 THEN LOCATE(_f, _s, GREATEST(_p, 1)) "
           "WHEN LENGTH(_s) + _p < 0 THEN 0 "
           "ELSE CASE WHEN LOCATE(REVERSE(_f), REVERSE(_s), GREATEST(1, 1 - _p - LENGTH(_f))) = 0 THEN 0 "
           "ELSE LENGTH(_s) - LOCATE(REVERSE(_f), REVERSE(_s), GREATEST(1, 1 - _p - LENGTH(_f))) "
           "- LENGTH(_f) + 2 END END")
_SUBSTRING = ("CASE WHEN _s IS NULL THEN NULL "
              "WHEN GREATEST(_st, 1) > LENGTH(_s) OR LEAST(_en, LENGTH(_s) + 1) <= GREATEST(_st, 1) THEN NULL "
              "ELSE SUBSTRING(_s, GREATEST(_st, 1), LEAST(_en, LENGTH(_s) + 1) - GREATEST(_st, 1)) END")
_START = "CASE WHEN _p = 0 THEN 1 WHEN _p < 0 THEN LENGTH(_s) + _p + 1 ELSE _p END"
#: H2's soundex codes for the characters 'A'..'z' ('0': not coded; '7': a vowel, which separates equal codes)
_SOUNDEX_CODES = "71237128722455712623718272" + "000000" + "71237128722455712623718272"
_SOUNDEX = ("CASE WHEN _s IS NULL THEN NULL ELSE RPAD(AGGREGATE(SEQUENCE(1, LENGTH(_s) + 1), "
            "NAMED_STRUCT('o', '', 'l', '0'), (acc, i) -> CASE "
            "WHEN i > LENGTH(_s) OR LENGTH(acc.o) >= 4 THEN acc "
            "WHEN SUBSTRING(_s, i, 1) < 'A' OR SUBSTRING(_s, i, 1) > 'z' THEN acc "
            "WHEN SUBSTRING(_codes, ASCII(SUBSTRING(_s, i, 1)) - 64, 1) = '0' THEN acc "
            "WHEN LENGTH(acc.o) = 0 THEN NAMED_STRUCT('o', UPPER(SUBSTRING(_s, i, 1)), "
            "'l', SUBSTRING(_codes, ASCII(SUBSTRING(_s, i, 1)) - 64, 1)) "
            "WHEN SUBSTRING(_codes, ASCII(SUBSTRING(_s, i, 1)) - 64, 1) = '7' "
            "THEN NAMED_STRUCT('o', acc.o, 'l', '7') "
            "WHEN SUBSTRING(_codes, ASCII(SUBSTRING(_s, i, 1)) - 64, 1) = acc.l THEN acc "
            "ELSE NAMED_STRUCT('o', CONCAT(acc.o, SUBSTRING(_codes, ASCII(SUBSTRING(_s, i, 1)) - 64, 1)), "
            "'l', SUBSTRING(_codes, ASCII(SUBSTRING(_s, i, 1)) - 64, 1)) END, acc -> acc.o), 4, '0') END")
# java.time.LocalDateTime#toString: seconds only when not zero, then 3 or 6 fraction digits as needed
_JAVA_TIMESTAMP = ("CONCAT(DATE_FORMAT(_x, 'yyyy-MM-dd'), 'T', CASE "
                   "WHEN CAST(DATE_FORMAT(_x, 'SSSSSS') AS INT) % 1000 <> 0 THEN DATE_FORMAT(_x, 'HH:mm:ss.SSSSSS') "
                   "WHEN CAST(DATE_FORMAT(_x, 'SSSSSS') AS INT) <> 0 THEN DATE_FORMAT(_x, 'HH:mm:ss.SSS') "
                   "WHEN SECOND(_x) <> 0 THEN DATE_FORMAT(_x, 'HH:mm:ss') ELSE DATE_FORMAT(_x, 'HH:mm') END)")


def java_string(node: Any, type_of: TypeOf) -> Any:
    """``node`` as Java's ``toString()`` prints it (a timestamp with a ``T``), as Spark's text elsewhere."""
    found = kind(node, type_of)
    if found == "string":
        return node.copy()
    if found == "timestamp":
        return template(_JAVA_TIMESTAMP, x=node)
    return cast(node, "string")


def concat(args: list[Any], type_of: TypeOf) -> Any:
    """SeaTunnel's CONCAT (and ``||``): nulls count as empty strings; arrays and bytes concatenate as such."""
    if any(kind(a, type_of) in ("array", "binary") for a in args):
        return call("concat", *args)
    return call("concat", *[call("coalesce", java_string(a, type_of), text("")) for a in args])


def _concat(name: str, a: list[Any], type_of: TypeOf) -> Any:
    return concat(a, type_of)


def _concat_ws(name: str, a: list[Any], type_of: TypeOf) -> Any:
    if len(a) < 2:
        raise FunctionError("CONCAT_WS takes a separator and at least one value")
    values = [v.copy() if kind(v, type_of) == "array" else java_string(v, type_of) for v in a[1:]]
    return call("concat_ws", call("coalesce", a[0], text("")), *values)


def _first_char(chars: Any) -> Any:
    """The first character of ``chars``, a space when it is null or empty."""
    return call("coalesce", call("nullif", call("substring", chars, number(1), number(1)), text("")), text(" "))


def _trim(name: str, a: list[Any], type_of: TypeOf) -> Any:
    """LTRIM/RTRIM/TRIM(s[, chars]): trims the first character of ``chars`` (a space without one)."""
    arity(name, a, 1, 2)
    chars = _first_char(a[1]) if len(a) == 2 else text(" ")
    position = {"LTRIM": "LEADING", "RTRIM": "TRAILING"}.get(name, "BOTH")
    return exp.Trim(this=a[0].copy(), expression=chars, position=position)


def _pad(name: str, a: list[Any], type_of: TypeOf) -> Any:
    arity(name, a, 2, 3)
    padding = _first_char(a[2]) if len(a) == 3 else text(" ")
    return call(name.lower(), a[0], a[1], padding)


def _regexp_replace(name: str, a: list[Any], type_of: TypeOf) -> Any:
    arity(name, a, 3, 4)
    return call("regexp_replace", a[0], flagged(a[1], a[3] if len(a) == 4 else None), a[2])


def _regexp_like(name: str, a: list[Any], type_of: TypeOf) -> Any:
    arity(name, a, 2, 3)
    return call("regexp_like", a[0], flagged(a[1], a[2] if len(a) == 3 else None))


def _regexp_substr(name: str, a: list[Any], type_of: TypeOf) -> Any:
    """REGEXP_SUBSTR(s, regex[, position, occurrence, flags, group]): 2 or 6 arguments; SeaTunnel yields
    NULL for 3 to 5."""
    n = len(a)
    if n == 2:
        return call("regexp_substr", a[0], a[1])
    if n in (3, 4, 5):
        return cast(exp.Null(), "string")
    arity(name, a, 2, 6)

    def given(i: int, default: Any) -> Any:
        return default if is_null(a[i]) else a[i]

    found = call("regexp_extract_all", call("substring", a[0], given(2, number(1))), flagged(a[1], a[4]),
                 given(5, number(0)))
    return call("try_element_at", found, given(3, number(1)))


def _locate(name: str, a: list[Any], type_of: TypeOf) -> Any:
    """LOCATE(search, s[, start]), POSITION(search, s), INSTR(s, search[, start])."""
    arity(name, a, 2, 3) if name != "POSITION" else arity(name, a, 2)
    search, s = (a[1], a[0]) if name == "INSTR" else (a[0], a[1])
    return template(_LOCATE, f=search, s=s, p=a[2] if len(a) == 3 else number(1))


def _insert(name: str, a: list[Any], type_of: TypeOf) -> Any:
    arity(name, a, 4)
    return template(_INSERT, s=a[0], p=a[1], l=a[2], a=a[3])


def _hextoraw(name: str, a: list[Any], type_of: TypeOf) -> Any:
    arity(name, a, 1)
    return template(_HEXTORAW, s=a[0])


def _rawtohex(name: str, a: list[Any], type_of: TypeOf) -> Any:
    arity(name, a, 1)
    raw = a[0] if kind(a[0], type_of) == "binary" else call("encode", java_string(a[0], type_of), text("UTF-16BE"))
    return call("lower", call("hex", raw))


def _chr(name: str, a: list[Any], type_of: TypeOf) -> Any:
    """CHAR/CHR(n): the UTF-16 code unit ``n`` (Java's ``(char) n``)."""
    arity(name, a, 1)
    unit16 = call("lpad", call("hex", call("pmod", cast(a[0], "int"), number(65536))), number(4), text("0"))
    return call("decode", call("unhex", unit16), text("UTF-16BE"))


def _substring(name: str, a: list[Any], type_of: TypeOf) -> Any:
    arity(name, a, 2, 3)
    s, start = a[0], template(_START, p=a[1], s=a[0])
    length = a[2] if len(a) == 3 else exp.Null()
    end = (template("GREATEST(LENGTH(_s) + 1, _st)", s=s, st=start) if is_null(length)
           else template("CASE WHEN _l IS NULL THEN GREATEST(LENGTH(_s) + 1, _st) ELSE _st + _l END",
                         l=length, s=s, st=start))
    return template(_SUBSTRING, s=s, st=start, en=end)


def _replace(name: str, a: list[Any], type_of: TypeOf) -> Any:
    arity(name, a, 2, 3)
    return call("replace", a[0], a[1], call("coalesce", a[2], text("")) if len(a) == 3 else text(""))


def _translate(name: str, a: list[Any], type_of: TypeOf) -> Any:
    arity(name, a, 3)
    return call("translate", a[0], a[1], call("coalesce", a[2], text("")))


def _soundex(name: str, a: list[Any], type_of: TypeOf) -> Any:
    arity(name, a, 1)
    return template(_SOUNDEX, s=a[0], codes=text(_SOUNDEX_CODES))


def _to_char(name: str, a: list[Any], type_of: TypeOf) -> Any:
    arity(name, a, 1, 2)
    found = kind(a[0], type_of)
    if len(a) == 2 and found in ("date", "timestamp", "time"):
        return call("date_format", a[0], a[1])
    if found == "string":
        return a[0].copy()
    return java_string(a[0], type_of)


def _length(spark_name: str) -> Any:
    def rewrite(name: str, a: list[Any], type_of: TypeOf) -> Any:
        arity(name, a, 1)
        return cast(call(spark_name, a[0]), "bigint")

    return rewrite


def _same(name: str, a: list[Any], type_of: TypeOf) -> Any:
    """Spark's function of the same name and meaning."""
    return None


def _left_right(name: str, a: list[Any], type_of: TypeOf) -> Any:
    arity(name, a, 2)
    return None


#: string functions by upper-case name
STRING_REWRITERS = {
    "ASCII": _same, "BIT_LENGTH": _length("bit_length"), "CHAR_LENGTH": _length("char_length"),
    "LENGTH": _length("char_length"), "OCTET_LENGTH": _length("octet_length"), "CHR": _chr, "CHAR": _chr,
    "CONCAT": _concat, "CONCAT_WS": _concat_ws, "HEXTORAW": _hextoraw, "RAWTOHEX": _rawtohex, "INSERT": _insert,
    "LOWER": _same, "LCASE": _same, "UPPER": _same, "UCASE": _same, "LEFT": _left_right, "RIGHT": _left_right,
    "LOCATE": _locate, "INSTR": _locate, "POSITION": _locate, "LPAD": _pad, "RPAD": _pad, "LTRIM": _trim,
    "RTRIM": _trim, "TRIM": _trim, "REGEXP_REPLACE": _regexp_replace, "REGEXP_LIKE": _regexp_like,
    "REGEXP_SUBSTR": _regexp_substr, "REPEAT": _same, "REPLACE": _replace, "SOUNDEX": _soundex, "SPACE": _same,
    "SUBSTRING": _substring, "SUBSTR": _substring, "TO_CHAR": _to_char, "TRANSLATE": _translate,
}
#: result types of the string functions whose rewrite does not end in a CAST (for the compiled schema)
STRING_TYPES = {**dict.fromkeys(("CHR", "CHAR", "CONCAT", "CONCAT_WS", "HEXTORAW", "RAWTOHEX", "INSERT", "LOWER",
                                 "LCASE", "UPPER", "UCASE", "LEFT", "RIGHT", "LPAD", "RPAD", "LTRIM", "RTRIM", "TRIM",
                                 "REGEXP_REPLACE", "REGEXP_SUBSTR", "REPEAT", "REPLACE", "SOUNDEX", "SPACE",
                                 "SUBSTRING", "SUBSTR", "TO_CHAR", "TRANSLATE"), "string"),
                "ASCII": "int", "LOCATE": "int", "INSTR": "int", "POSITION": "int", "REGEXP_LIKE": "boolean"}
