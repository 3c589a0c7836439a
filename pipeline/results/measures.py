"""What every figure of a result table means, defined once for `report` and `bench`.

* *searched* rows: every verdict but `invalid` and `malformed` (no search ran for those);
  time, nodes and guesses statistics are over searched rows;
* *% no guess*: searched rows with verdict `solved` (or `found`) and `guesses == 0`, over
  searched rows (`solved_without_guess`);
* percentiles: nearest rank, an observed value (`percentile`), never interpolated: a p50 is
  the middle row's value;
* time: the kernel's `solve_ns`, shown in microseconds.

How a figure is computed, and printed (the same for text, JSON, HTML and the tests):
* from integers only (ns, counts, sums), the exact value rounded once to the nearest double
  (`microseconds`, `mean`, `percent`: Python's int / int); that double is what `--json` holds.
  polars' float arithmetic is not used for a figure: on a column it computes `solve_ns / 1000`
  as a multiplication by 0.001 (12950 ns -> 12.950000000000001 us) and `100 * mean(bool)`
  with two roundings (23 of 80 -> 28.749999999999996).
* printed (`fixed`) as its decimal, rounded half up, as on paper: 12.95 -> `13.0`, 28.75 ->
  `28.8`, 71.25 -> `71.3`. The decimal of a double is its shortest repr, which is the exact
  value whenever that has at most 15 significant digits (every ns / 1000, every k / n whose n
  has no prime factor but 2 and 5) and is never a tie otherwise (a k / n that is not a tie is
  at least 1 / 20n away from one): so the printed figure is the exact value rounded half up,
  and any exact computation rounded half up agrees with it.

(Apart from `results`, so that solving a file does not import polars: figures are polars.)
"""

import math
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

import polars as pl

NOT_SEARCHED = ("invalid", "malformed", "solver_error")  # no search, or none we can time
SOLVED_VERDICTS = ("solved", "found")  # a solution, unique or not looked further


def searched(frame: pl.DataFrame) -> pl.DataFrame:
    """The rows a search ran on (every verdict but invalid and malformed)."""
    return frame.filter(~pl.col("verdict").cast(pl.String).is_in(NOT_SEARCHED))


def solved_without_guess() -> pl.Expr:
    """True for a row solved without a guess: the rows counted by *% no guess*."""
    return pl.col("verdict").cast(pl.String).is_in(SOLVED_VERDICTS) & (pl.col("guesses") == 0)


def microseconds(ns: int | None) -> float | None:
    """`ns / 1000`, rounded once: 12950 -> 12.95 (the double nearest 12.95)."""
    return None if ns is None else int(ns) / 1000


def mean(total: int, n: int, scale: int = 1) -> float | None:
    """`total / (n * scale)`, rounded once (`scale` 1000: a mean of ns in microseconds); None
    when `n` is 0."""
    return int(total) / (int(n) * scale) if n else None


def percent(part: int, whole: int) -> float | None:
    """`100 * part / whole`, rounded once: 23 of 80 -> 28.75; None when `whole` is 0."""
    return 100 * int(part) / int(whole) if whole else None


def percentile(values: pl.Series, q: float) -> int | None:
    """The nearest-rank `q` quantile of integer `values` (nodes, guesses, ns): an observed
    value; None without values."""
    value = values.quantile(q, interpolation="nearest")
    return None if value is None else int(value)


def percentile_expr(column: str, q: float) -> pl.Expr:
    """`percentile` as a polars expression (in a `group_by`), an integer column."""
    return pl.col(column).quantile(q, interpolation="nearest").cast(pl.Int64)


def exact(value: float | int) -> Decimal:
    """The decimal a figure stands for: an integer as it is, a double as its shortest repr
    (12950 / 1000 -> Decimal("12.95"), not the 12.9499999999999992894572642398998141 it
    holds)."""
    return Decimal(value) if isinstance(value, int) else Decimal(repr(float(value)))


def fixed(value: float | int | Decimal, places: int = 1) -> str:
    """A figure as printed: its decimal (`exact`) rounded half up to `places`, with thousands
    separators: 12.95 -> `13.0`, 1234.56 -> `1,234.6`, (places 0) 2.5 -> `3`."""
    if not isinstance(value, Decimal):
        if isinstance(value, float) and not math.isfinite(value):
            return f"{value:,.{places}f}"
        value = exact(value)
    rounded = value.quantize(Decimal(1).scaleb(-places), rounding=ROUND_HALF_UP)
    return f"{rounded:,.{places}f}"


def effort(frame: pl.DataFrame) -> dict[str, Any]:
    """Mean effort over the searched rows of a result table: `searched` rows, `time_us`,
    `nodes`, `guesses` per puzzle (None without searched rows; over the rows that report
    them: a solver from outside may not), `no_guess_pct`, and `limit`
    (rows left at the node budget)."""
    done = searched(frame)
    n = done.height
    sums = done.select(
        pl.col("solve_ns").sum().alias("solve_ns"),
        pl.col("nodes").sum().alias("nodes"),
        pl.col("guesses").sum().alias("guesses"),
        pl.col("nodes").count().alias("nodes_n"),  # null: a solver from outside that
        pl.col("guesses").count().alias("guesses_n"),  # does not count them
        solved_without_guess().sum().alias("no_guess"),
        (pl.col("verdict").cast(pl.String) == "limit").sum().alias("limit"),
    ).row(0, named=True)
    return {
        "searched": n,
        "time_us": mean(sums["solve_ns"], n, 1000),
        "nodes": mean(sums["nodes"], sums["nodes_n"]),
        "guesses": mean(sums["guesses"], sums["guesses_n"]),
        "no_guess_pct": percent(sums["no_guess"], n),
        "limit": int(sums["limit"] or 0),
    }
