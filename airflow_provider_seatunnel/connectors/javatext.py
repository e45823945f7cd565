"""Java's text of a value where SeaTunnel's output or its checks show it: ``Double.toString`` (what
Jackson gives a JSON double, what ``String.valueOf`` gives a spreadsheet's numeric cell). Shared by the
Assert sink's expected values and the files family's Excel reader."""

from __future__ import annotations

import math
from decimal import Decimal

__all__ = ["java_double"]


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
