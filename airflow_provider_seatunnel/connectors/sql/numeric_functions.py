"""SeaTunnel's numeric functions as native Spark SQL expressions.

Rules kept from SeaTunnel:

* A number literal with a point (``10.3``) is a DOUBLE, not Spark's DECIMAL (done by the walk).
* The trigonometric and logarithmic functions, EXP, RADIANS, SQRT, PI, POWER, RAND and TRUNC/TRUNCATE
  return DOUBLE; CEIL/CEILING, FLOOR and SIGN return INT (SIGN of NULL is 0, of NaN 0); ABS and ROUND
  keep their argument's type (ROUND rounds half up); MOD takes its divisor's type and is computed on
  exact decimals (``MOD(13, 5.4)`` is 2.2).
* Errors where SeaTunnel throws: LN/LOG10 of a number <= 0, LOG with a base or number <= 0, COT where
  the tangent is 0, MOD by 0.
* RAND(seed)/RANDOM(seed) is ``new java.util.Random(seed).nextDouble()``, the same number on every row
  (java.util.Random's generator, computed in Spark SQL); without a seed, Spark's ``rand()``.
"""

from __future__ import annotations

from typing import Any

from sqlglot import exp

from .builders import INTEGRAL, TypeOf, arity, call, cast, full_type, kind, literal, number, template, typed

_TRUNC = "CASE WHEN _x < 0 THEN CEIL(_x, _n) ELSE FLOOR(_x, _n) END"
_SIGN = ("CASE WHEN _x IS NULL THEN 0 WHEN ISNAN(CAST(_x AS DOUBLE)) THEN 0 WHEN _x > 0 THEN 1 "
         "WHEN _x < 0 THEN -1 ELSE 0 END")
_POSITIVE = "CASE WHEN _x <= 0 THEN RAISE_ERROR(_message) ELSE _result END"
_LOG = ("CASE WHEN _b IS NULL THEN NULL WHEN _b <= 0 THEN RAISE_ERROR('LOG: the base must be positive') "
        "WHEN _x IS NULL THEN NULL WHEN _x <= 0 THEN RAISE_ERROR('LOG: the argument must be positive') "
        "WHEN _b = 10 THEN LOG10(_x) ELSE LN(_x) / LN(_b) END")
_COT = "CASE WHEN TAN(_x) = 0 THEN RAISE_ERROR('COT: division by zero') ELSE COT(_x) END"
#: one step of java.util.Random's 48-bit linear congruential generator, without 64-bit overflow
_LCG_STEP = ("((PMOD(SHIFTRIGHT(_s, 24) * 25214903917, 16777216) * 16777216 + (_s & 16777215) * 25214903917 + 11) "
             "& 281474976710655)")
_SCRAMBLED = "((CAST(CAST(_seed AS INT) AS BIGINT) ^ 25214903917) & 281474976710655)"
_NEXT_DOUBLE = "(CAST(SHIFTRIGHT(_a, 22) * 134217728 + SHIFTRIGHT(_b, 21) AS DOUBLE) / 9007199254740992)"


def _java_random(seed: Any) -> Any:
    """``new java.util.Random(seed).nextDouble()`` as a Spark expression."""
    first = template(_LCG_STEP, s=template(_SCRAMBLED, seed=seed))
    second = template(_LCG_STEP, s=first)
    return template(_NEXT_DOUBLE, a=first, b=second)


def _rand(name: str, a: list[Any], type_of: TypeOf) -> Any:
    arity(name, a, 0, 1)
    if not a or isinstance(a[0], exp.Null):
        return call("rand")
    return template("CASE WHEN _seed IS NULL THEN RAND() ELSE _value END", seed=a[0], value=_java_random(a[0]))


def _positive(spark_name: str) -> Any:
    """LN/LOG10: an error for a number <= 0."""

    def rewrite(name: str, a: list[Any], type_of: TypeOf) -> Any:
        arity(name, a, 1)
        message = exp.Literal.string(f"{name}: the argument must be positive")
        return template(_POSITIVE, x=a[0], message=message, result=call(spark_name, a[0]))

    return rewrite


def _log(name: str, a: list[Any], type_of: TypeOf) -> Any:
    """LOG(base, x); LOG(x) is the natural logarithm."""
    arity(name, a, 1, 2)
    if len(a) == 1:
        return _positive("ln")(name, a, type_of)
    return template(_LOG, b=a[0], x=a[1])


def _cot(name: str, a: list[Any], type_of: TypeOf) -> Any:
    arity(name, a, 1)
    return template(_COT, x=a[0])


def _mod(name: str, a: list[Any], type_of: TypeOf) -> Any:
    """MOD(a, b): the remainder (sign of ``a``) in ``b``'s type, exact on decimals."""
    arity(name, a, 2)
    left, right = kind(a[0], type_of), kind(a[1], type_of)
    divisor_type = full_type(a[1], type_of)
    if left in INTEGRAL and right in INTEGRAL:
        return cast(exp.Mod(this=a[0].copy(), expression=a[1].copy()), divisor_type or "bigint")
    exact = exp.Mod(this=cast(a[0], "decimal(38, 18)"), expression=cast(a[1], "decimal(38, 18)"))
    return cast(exact, divisor_type) if divisor_type else exp.Mod(this=a[0].copy(), expression=a[1].copy())


def _ceil_floor(name: str, a: list[Any], type_of: TypeOf) -> Any:
    arity(name, a, 1, 2)
    return cast(call("floor" if name == "FLOOR" else "ceil", *a), "int")


def _round(name: str, a: list[Any], type_of: TypeOf) -> Any:
    """ROUND(x[, digits]): half up, in ``x``'s type."""
    arity(name, a, 1, 2)
    rounded = call("round", *a)
    return cast(rounded, full_type(a[0], type_of) or "double") if kind(a[0], type_of) == "decimal" else rounded


def _trunc(name: str, a: list[Any], type_of: TypeOf) -> Any:
    """TRUNC/TRUNCATE(x[, digits]): towards zero, a DOUBLE; TRUNC(date, 'unit') stays Spark's."""
    n = len(a)
    if n == 2 and literal(a[1]) is not None:
        return None
    arity(name, a, 1, 2)
    return cast(template(_TRUNC, x=a[0], n=a[1] if n == 2 else number(0)), "double")


def _sign(name: str, a: list[Any], type_of: TypeOf) -> Any:
    arity(name, a, 1)
    return template(_SIGN, x=a[0])


def _same(name: str, a: list[Any], type_of: TypeOf) -> Any:
    return None


_DOUBLES = ("ACOS", "ASIN", "ATAN", "COS", "COSH", "SIN", "SINH", "TAN", "TANH", "ATAN2", "EXP", "RADIANS", "SQRT",
            "PI", "POWER")

#: numeric functions by upper-case name
NUMERIC_REWRITERS = {
    **{name: typed(name.lower()) for name in _DOUBLES},
    "ABS": _same, "COT": _cot, "MOD": _mod, "CEIL": _ceil_floor, "CEILING": _ceil_floor, "FLOOR": _ceil_floor,
    "LN": _positive("ln"), "LOG": _log, "LOG10": _positive("log10"), "RAND": _rand, "RANDOM": _rand,
    "ROUND": _round, "SIGN": _sign, "TRUNC": _trunc, "TRUNCATE": _trunc,
}
#: result types of the numeric functions whose rewrite does not end in a CAST (for the compiled schema)
NUMERIC_TYPES = {**dict.fromkeys((*_DOUBLES, "COT", "LN", "LOG", "LOG10", "RAND", "RANDOM"), "double"), "SIGN": "int"}
#: functions whose result has their first argument's type
FIRST_ARGUMENT_TYPE = ("ABS", "ROUND")
