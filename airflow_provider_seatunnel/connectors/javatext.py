"""Java's text of a value where SeaTunnel's output or its checks show it: ``Double.toString`` (what
Jackson gives a JSON double, what ``String.valueOf`` gives a spreadsheet's numeric cell). Shared by the
Assert sink's expected values and the files family's Excel reader; ``BigDecimal.toString`` (what SeaTunnel's
text and csv writers give a decimal) as a Spark column."""

from __future__ import annotations

import math
from decimal import Decimal
from typing import Any

__all__ = ["java_decimal_column", "java_double"]


def java_double(value: float) -> str:
    """``value`` as Java's ``Double.toString``: the shortest digits that read back to it, plain from
    10^-3 up to 10^7 (at least one digit after the point), else ``d.dddE<n>``; ``NaN``, ``Infinity``,
    ``-0.0`` as Java spells them."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    if value == 0:
        return "-0.0" if math.copysign(1.0, value) < 0 else "0.0"
    sign = "-" if value < 0 else ""
    t = Decimal(repr(abs(value))).normalize().as_tuple()
    digits = "".join(map(str, t.digits))
    exponent = int(t.exponent)  # a finite number's exponent is an int
    if 1e-3 <= abs(value) < 1e7:
        if exponent >= 0:
            return f"{sign}{digits}{'0' * exponent}.0"
        point = len(digits) + exponent
        whole = digits[:point] if point > 0 else "0"
        return f"{sign}{whole}.{'0' * max(0, -point)}{digits[max(point, 0):]}"
    return f"{sign}{digits[0]}.{digits[1:] or '0'}E{len(digits) - 1 + exponent}"


def java_decimal_column(column: Any, scale: int) -> Any:
    """A decimal column of ``scale`` as Java's ``BigDecimal.toString`` writes its values (null stays null):
    the plain digits (``1.50000000``) unless the adjusted exponent (digits of the unscaled value - 1 - scale)
    is below -6, then one digit, the rest after a point, and ``E`` with the exponent (``1E-8`` for
    0.00000001 at scale 8, ``1.0E-8`` at scale 9, ``0E-8`` for zero at scale 8)."""
    from pyspark.sql import functions as F

    plain = column.cast("string")
    if scale <= 6:  # the adjusted exponent of a value of this scale is at least -scale
        return plain
    unscaled = F.regexp_replace(F.abs(column).cast("string"), r"\.", "")
    digits = F.when(F.regexp_replace(unscaled, "^0+", "") == "", F.lit("0")) \
        .otherwise(F.regexp_replace(unscaled, "^0+", ""))
    adjusted = F.length(digits) - 1 - F.lit(scale)
    rest = F.when(F.length(digits) > 1, F.concat(F.lit("."), F.substring(digits, 2, 1 << 20))).otherwise(F.lit(""))
    sign = F.when(column < 0, F.lit("-")).otherwise(F.lit(""))
    scientific = F.concat(sign, F.substring(digits, 1, 1), rest, F.lit("E"), adjusted.cast("string"))
    return F.when(adjusted < -6, scientific).otherwise(plain)
