"""The `--json` of every command, its numbers rounded to what they mean: a time to the
millisecond (`wall_s` 0.414, not 0.4135820359997524; `_ms`, `_us` and `_ns` figures to a
thousandth of their unit), a rate to 3 significant figures (`rows_per_s` 2480), a percentage to
a hundredth, an accuracy to a millionth. A number's meaning is read from its key (or, for the
figures of a dict such as `time_us: {p50, mean}`, its parent's key); other numbers are left
as they are, and integers always are.

    print(json_text(asdict(summary)))
"""

import json
import math
from dataclasses import asdict
from typing import Any

RATE_DIGITS = 3  # significant figures of a rate: the noise of a shared machine is larger


def json_text(data: Any) -> str:
    """`data` as indented JSON, its floats `rounded` (anything else JSON cannot say: `str`)."""
    return json.dumps(rounded(data), indent=2, default=str)


def summary_json(summary: Any) -> str:
    """A job's summary (a dataclass) as its `--json`: every field but `metadata` (the run's
    metadata, written into the output file, not said again on stdout)."""
    data = asdict(summary)
    data.pop("metadata", None)
    return json_text(data)


def rounded(value: Any, key: str = "") -> Any:
    """`value` (dicts, lists and numbers) with each float rounded by its key's meaning."""
    if isinstance(value, dict):
        return {
            k: rounded(v, str(k) if _places(str(k)) is not None else key) for k, v in value.items()
        }
    if isinstance(value, list | tuple):
        return [rounded(v, key) for v in value]
    if isinstance(value, float) and math.isfinite(value):
        places = _places(key)
        if places == "rate":
            return significant(value, RATE_DIGITS)
        if isinstance(places, int):
            return round(value, places)
    return value


def significant(value: float, digits: int) -> float:
    """`value` to `digits` significant figures (2476.9 -> 2480.0; 0.012345 -> 0.0123)."""
    return float(f"{value:.{digits}g}") if value else 0.0


def _places(key: str) -> int | str | None:
    """How a number under `key` is rounded: decimal places, "rate", or None (as it is)."""
    key = key.lower()
    if key.endswith("per_s") or key in ("rate", "rates") or key.endswith("_rate"):
        return "rate"
    if key.endswith(("_s", "_ms", "_us", "_ns", "_per_puzzle")) or key in ("seconds", "mean"):
        return 3  # a time to the millisecond (or a thousandth of its unit); a mean per puzzle
    if key.endswith("_pct"):
        return 2
    if "accuracy" in key:
        return 6
    return None
