"""How hard the puzzles were, when the results were made with `solve --rate`: how many puzzles
each grade of the technique ladder holds, how `difficulty` spreads, and how much search each
grade took. Runs without the rating columns have none of this (`rating_figures` is None)."""

from typing import Any

import polars as pl

from pipeline.rating import GRADES
from pipeline.results.measures import microseconds, percent, percentile_expr, searched

LADDER = {grade: i for i, grade in enumerate(GRADES)}
RATING_COLUMNS = ("grade", "difficulty")


def rating_figures(frame: pl.DataFrame) -> dict[str, Any] | None:
    """Per grade (in ladder order): rows, share, nodes, kernel time and difficulty at p50; the
    difficulty's percentiles; and the rank correlation of difficulty with nodes. None without
    ratings."""
    if not all(c in frame.columns for c in RATING_COLUMNS):
        return None
    done = searched(frame).filter(pl.col("grade").is_not_null())
    if not done.height:
        return None
    groups = (
        done.group_by(pl.col("grade").cast(pl.String))
        .agg(
            pl.len().alias("rows"),
            percentile_expr("nodes", 0.5).alias("nodes_p50"),
            percentile_expr("solve_ns", 0.5).alias("time_p50_ns"),
            pl.col("difficulty").quantile(0.5, interpolation="nearest").alias("difficulty_p50"),
        )
        .sort(pl.col("grade").replace_strict(LADDER, default=len(LADDER)))
    )
    by_grade = [
        {
            "grade": g["grade"],
            "rows": g["rows"],
            "nodes_p50": g["nodes_p50"],
            "time_p50_us": microseconds(g["time_p50_ns"]),
            "difficulty_p50": g["difficulty_p50"],
            "share_pct": percent(g["rows"], done.height),
        }
        for g in groups.iter_rows(named=True)
    ]
    rated = done.filter(pl.col("difficulty").is_not_null())
    quantiles = {
        name: rated["difficulty"].quantile(q, interpolation="nearest")
        for name, q in (("p50", 0.5), ("p90", 0.9), ("p99", 0.99), ("max", 1.0))
    }
    rank = rated.select(pl.corr("difficulty", "nodes", method="spearman")).item()
    return {
        "rated": done.height,
        "by_grade": by_grade,
        "difficulty": quantiles,
        "difficulty_nodes_spearman": rank,
    }
