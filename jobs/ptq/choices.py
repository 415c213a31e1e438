"""The choices a quantization takes (bits, range methods, granularity) and their checks, with no
torch: the orchestrator validates study files with them on a login node. A choice among names is
checked by jobs.core.cell.check_choice, as every kind's."""
from __future__ import annotations

BITS_MIN, BITS_MAX = 2, 16
RANGE_METHODS = ("max", "3sigma", "percentile", "mse")
GRANULARITIES = ("tensor", "channel")
PERCENTILE = 99.99  # the "percentile" method's default: the range is this percentile of |values|


def check_bits(bits: object, field: str = "bits") -> int:
    if isinstance(bits, bool) or not isinstance(bits, int) or not BITS_MIN <= bits <= BITS_MAX:
        raise ValueError(f"{field} must be an integer from {BITS_MIN} to {BITS_MAX}, got {bits!r}")
    return bits


def check_percentile(p: object, field: str = "percentile") -> float:
    if isinstance(p, bool) or not isinstance(p, (int, float)) or not 0 < p <= 100:
        raise ValueError(f"{field} must be a number in (0, 100], got {p!r}")
    return float(p)
