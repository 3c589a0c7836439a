"""Runs compared puzzle by puzzle: which runs share a corpus, and the per-puzzle ratios.

Runs are joined by *puzzle*, never by row: on the `canonical` column when both result files
have one (a puzzle and its symmetric variants then count as one), else on the `puzzle` string
as `solve` wrote it (81 characters, `.` for blanks; a `0` blank is read as `.` too). Rows of
`malformed` puzzles have no key and take no part.

* Repeated puzzles: a corpus may hold the same puzzle twice; each run keeps the first row of
  each key (in file order) and says how many it set aside, so that a join never multiplies
  rows.
* Same corpus or not: two runs are of one corpus when at least `SAME_CORPUS` of the puzzles of
  the smaller run are in the other (a run of the first 1,000 rows of a file and a run of the
  whole file are one corpus). Runs of one corpus are compared with its first run, the
  baseline; runs of different corpora are shown side by side without per-puzzle ratios.
* Ratios: the run's figure over the baseline's for the same puzzle, over the puzzles both
  searched with a positive time and node count.
"""

import math
from dataclasses import dataclass, field
from typing import Any

import polars as pl

from pipeline.report.runs import Run
from pipeline.results.measures import NOT_SEARCHED, percent

SAME_CORPUS = 0.5  # share of the smaller run's puzzles that the other must hold
KEYS = ("canonical", "puzzle")  # the join key, by preference: canonical form when both have it


@dataclass
class Pair:
    """Two runs joined by puzzle: the figures of the join and, when they are of one corpus,
    the per-puzzle ratios of `run` over `baseline`."""

    baseline: Run
    run: Run
    figures: dict[str, Any]
    joined: pl.DataFrame = field(repr=False)  # one row per puzzle both searched

    @property
    def same_corpus(self) -> bool:
        return bool(self.figures["same_corpus"])


def join_key(a: Run, b: Run) -> str:
    """`canonical` when both runs have that column, else `puzzle`."""
    return next(k for k in KEYS if k in a.frame.columns and k in b.frame.columns)


def keyed(run: Run, key: str) -> tuple[pl.DataFrame, int]:
    """The run's rows with a key (column `key`), the first row of each key only, and how many
    rows repeated an earlier key."""
    column = pl.col(key)
    if key == "puzzle":
        column = column.str.replace_all("0", ".", literal=True)
    rows = (
        run.frame.filter(pl.col("verdict") != "malformed")
        .with_columns(column.alias("key"))
        .filter(pl.col("key").is_not_null())
        .select("key", "row", "verdict", "nodes", "solve_ns")
    )
    first = rows.unique(subset="key", keep="first", maintain_order=True)
    return first, rows.height - first.height


def _ratio_stats(ratio: pl.Expr, name: str) -> list[pl.Expr]:
    return [
        ratio.quantile(0.5, interpolation="nearest").alias(f"{name}_p50"),
        ratio.log().mean().exp().alias(f"{name}_geomean"),
        ratio.quantile(0.1, interpolation="nearest").alias(f"{name}_p10"),
        ratio.quantile(0.9, interpolation="nearest").alias(f"{name}_p90"),
        (ratio < 1).sum().alias(f"{name}_less"),  # a count: `compare` makes it a percent
    ]


RATIO_FIGURES = [
    f"{m}_{s}" for m in ("nodes", "time") for s in ("p50", "geomean", "p10", "p90", "less_pct")
]


def compare(base: Run, other: Run) -> Pair:
    """Join two runs by puzzle; the ratios of `other` over `base` when they share a corpus."""
    key = join_key(base, other)
    left, base_repeats = keyed(base, key)
    right, other_repeats = keyed(other, key)
    joined = left.join(right, on="key", how="inner", suffix="_other")
    common = joined.height
    smaller = min(left.height, right.height)
    share = common / smaller if smaller else 0.0
    same = smaller > 0 and share >= SAME_CORPUS
    both = joined.filter(
        ~pl.col("verdict").is_in(NOT_SEARCHED)
        & ~pl.col("verdict_other").is_in(NOT_SEARCHED)
        & (pl.col("solve_ns") > 0)
        & (pl.col("solve_ns_other") > 0)
        & ((pl.col("nodes") > 0) & (pl.col("nodes_other") > 0)).fill_null(True)
    )  # nodes null: a solver from outside (`--solver`), compared by time alone
    ratios: dict[str, Any] = dict.fromkeys(RATIO_FIGURES)
    if same and both.height:
        nodes = pl.col("nodes_other") / pl.col("nodes")  # null where either is not counted
        time = pl.col("solve_ns_other") / pl.col("solve_ns")
        row = both.select(
            *_ratio_stats(nodes, "nodes"),
            *_ratio_stats(time, "time"),
            nodes.count().alias("nodes_n"),
            time.count().alias("time_n"),
        )
        found = {
            k: None if v is None or (isinstance(v, float) and math.isnan(v)) else v
            for k, v in row.row(0, named=True).items()
        }
        for m in ("nodes", "time"):
            found[f"{m}_less_pct"] = percent(found[f"{m}_less"], found[f"{m}_n"])
        ratios = {k: found[k] for k in RATIO_FIGURES}
    figures = {
        "run": other.label,
        "baseline": base.label,
        "key": key,
        "same_corpus": same,
        "baseline_puzzles": left.height,
        "run_puzzles": right.height,
        "common": common,
        "common_pct": percent(common, smaller) if smaller else 0.0,
        "only_in_baseline": left.height - common,
        "only_in_run": right.height - common,
        "baseline_repeats": base_repeats,
        "run_repeats": other_repeats,
        "verdict_changes": joined.filter(pl.col("verdict") != pl.col("verdict_other")).height,
        "compared_rows": both.height if same else 0,
        **ratios,
    }
    return Pair(base, other, figures, both if same else both.clear())


@dataclass
class Corpus:
    """Runs that hold the same puzzles; the first is the baseline of the others."""

    name: str
    runs: list[Run]
    pairs: list[Pair]  # (baseline, run) for every run after the first
    # for every corpus but the first: the join with the closest earlier corpus's baseline,
    # which says why it is another corpus
    apart: Pair | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "runs": [r.label for r in self.runs],
            "baseline": self.runs[0].label,
            "apart_from": None if self.apart is None else self.apart.baseline.label,
            "common_with_it": None if self.apart is None else self.apart.figures["common"],
            "common_pct": None if self.apart is None else self.apart.figures["common_pct"],
        }


def group_corpora(runs: list[Run]) -> list[Corpus]:
    """Runs grouped by the puzzles they hold, in the order of `runs`: each run joins the first
    corpus whose baseline shares enough of its puzzles, or starts a corpus of its own."""
    corpora: list[Corpus] = []
    for run in runs:
        closest: Pair | None = None
        for corpus in corpora:
            pair = compare(corpus.runs[0], run)
            if pair.same_corpus:
                corpus.runs.append(run)
                corpus.pairs.append(pair)
                break
            if closest is None or pair.figures["common"] > closest.figures["common"]:
                closest = pair
        else:
            corpora.append(Corpus(run.corpus, [run], [], closest))
    names = [c.name for c in corpora]
    for i, corpus in enumerate(corpora):
        if names.count(corpus.name) > 1:
            corpus.name = f"{corpus.name} #{names[: i + 1].count(corpus.name)}"
    return corpora
