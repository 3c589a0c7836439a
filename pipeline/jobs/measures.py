"""What every figure of a result table means, defined once for `report` and `bench`.

* *searched* rows: every verdict but `invalid` and `malformed` (no search ran for those);
  time, nodes and guesses statistics are over searched rows;
* *% no guess*: searched rows with verdict `solved` (or `found`) and `guesses == 0`, over
  searched rows.

(Apart from `results`, so that solving a file does not import polars: figures are polars.)
"""

from typing import Any

import polars as pl

NOT_SEARCHED = ("invalid", "malformed")
SOLVED_VERDICTS = ("solved", "found")  # a solution, unique or not looked further


def searched(frame: pl.DataFrame) -> pl.DataFrame:
    """The rows a search ran on (every verdict but invalid and malformed)."""
    return frame.filter(~pl.col("verdict").cast(pl.String).is_in(NOT_SEARCHED))


def effort(frame: pl.DataFrame) -> dict[str, Any]:
    """Mean effort over the searched rows of a result table: `searched` rows, `time_us`,
    `nodes`, `guesses` per puzzle (None without searched rows), `no_guess_pct`, and `limit`
    (rows left at the node budget)."""
    done = searched(frame)
    n = done.height
    if not n:
        return dict(searched=0, time_us=None, nodes=None, guesses=None, no_guess_pct=None,
                    limit=0)  # fmt: skip
    verdict = pl.col("verdict").cast(pl.String)
    row = done.select(
        (pl.col("solve_ns").mean() / 1000).alias("time_us"),
        pl.col("nodes").mean().alias("nodes"),
        pl.col("guesses").mean().alias("guesses"),
        (100 * (verdict.is_in(SOLVED_VERDICTS) & (pl.col("guesses") == 0)).mean()).alias(
            "no_guess_pct"
        ),
        (verdict == "limit").sum().alias("limit"),
    ).row(0, named=True)
    return {"searched": n, **row}
