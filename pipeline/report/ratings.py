"""How hard the puzzles were, when the results were made with `solve --rate`: how many puzzles
each grade of the technique ladder holds, how `difficulty` spreads, and how much search each
grade took. Runs without the rating columns have none of this (`rating_figures` is None)."""

from typing import Any

import polars as pl

from pipeline.jobs.measures import searched
from pipeline.rating import GRADES

LADDER = {grade: i for i, grade in enumerate(GRADES)}
RATING_COLUMNS = ("grade", "difficulty")


def rating_figures(frame: pl.DataFrame) -> dict[str, Any] | None:
    """Per grade (in ladder order): rows, share, median nodes and kernel time; the difficulty's
    percentiles; and the rank correlation of difficulty with nodes. None without ratings."""
    if not all(c in frame.columns for c in RATING_COLUMNS):
        return None
    done = searched(frame).filter(pl.col("grade").is_not_null())
    if not done.height:
        return None
    by_grade = (
        done.group_by(pl.col("grade").cast(pl.String))
        .agg(
            pl.len().alias("rows"),
            pl.col("nodes").median().alias("nodes_p50"),
            (pl.col("solve_ns").median() / 1000).alias("time_p50_us"),
            pl.col("difficulty").median().alias("difficulty_p50"),
        )
        .sort(pl.col("grade").replace_strict(LADDER, default=len(LADDER)))
        .with_columns((100 * pl.col("rows") / done.height).alias("share_pct"))
    )
    rated = done.filter(pl.col("difficulty").is_not_null())
    quantiles = {
        name: rated["difficulty"].quantile(q, interpolation="nearest")
        for name, q in (("p50", 0.5), ("p90", 0.9), ("p99", 0.99), ("max", 1.0))
    }
    rank = rated.select(pl.corr("difficulty", "nodes", method="spearman")).item()
    return {
        "rated": done.height,
        "by_grade": by_grade.to_dicts(),
        "difficulty": quantiles,
        "difficulty_nodes_spearman": rank,
    }
