"""Runs read from result files, and the figures of each. Never re-solves; nothing here draws
or formats (`text`, `html` with `plots` do).

A *run* is one solver pass over one corpus: a result file of `solve`, or one dataset x strategy
group of a `bench` file (which has `dataset` and `strategy` columns). Which runs share a corpus
is decided from the puzzles they hold (`compare`), not from their names.

Definitions, the same in every table and plot (and in `bench`): `pipeline.results.measures`
(searched rows, % no guess, percentiles, and how a figure is computed: from integers, rounded
once). Two rates: the *kernel rate*, searched rows over the sum of their `solve_ns` (puzzles/s
on one core, nothing else counted); the *wall rate*, rows over the run's wall time as the file
records it (`solve`: all its workers, start-up and compiling included; `bench`: the solve step
alone, kernels loaded first, best of its repeats).
"""

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq

from pipeline.errors import ReportError, ResultNotFoundError, first_line, printable
from pipeline.io.runinfo import METADATA_KEY
from pipeline.kernels.codes import OUTSIDE_ONLY, VERDICT_NAMES
from pipeline.report.metadata import read_metadata, run_entries
from pipeline.report.ratings import rating_figures
from pipeline.results.measures import (
    mean,
    microseconds,
    percent,
    percentile,
    percentile_expr,
    searched,
    solved_without_guess,
)

REQUIRED_COLUMNS = ("row", "verdict", "clues", "nodes", "guesses", "solve_ns", "puzzle")
OPTIONAL_COLUMNS = (
    "id",
    "canonical",
    "dataset",
    "strategy",
    "grade",
    "difficulty",
    "kernel_agrees",
)
QUANTILES = {"p50": 0.5, "p90": 0.9, "p99": 0.99}
HARDEST = 10
_TYPES = {
    "row": pl.Int64,
    "clues": pl.Int64,
    "nodes": pl.Int64,
    "guesses": pl.Int64,
    "solve_ns": pl.Int64,
    "verdict": pl.String,
    "puzzle": pl.String,
    "canonical": pl.String,
}


@dataclass
class Run:
    """One solver pass over one corpus, as read from a result file."""

    label: str  # unique within a report: "sample / fast"
    corpus: str  # the corpus's name: a bench file's dataset, else the input file's stem
    strategy: str | None
    path: Path
    frame: pl.DataFrame = field(repr=False)
    meta: dict[str, Any] = field(default_factory=dict)  # throughput and options, as recorded
    from_bench: bool = False  # one dataset x strategy of a bench file
    notes: list[str] = field(default_factory=list)  # metadata left out, and why


def _read(path: Path) -> tuple[pl.DataFrame, dict[str, Any], list[str]]:
    if not path.exists():
        raise ResultNotFoundError(f"{path}: no such file", path)
    if path.is_dir():
        raise ReportError(
            f"{path}: is a folder: pass files, or a glob like "
            f"'{path.as_posix().rstrip('/')}/*.parquet'"
        )
    try:  # a file object: pyarrow cannot open a name that was not UTF-8 (`caf\xe9.parquet`)
        with open(path, "rb") as f:
            schema = pq.read_schema(f)
    except (pa.ArrowException, OSError) as e:
        detail = first_line(e)
        raise ReportError(f"{path}: not a Parquet file ({detail})") from None
    missing = [c for c in REQUIRED_COLUMNS if c not in schema.names]
    if missing:
        raise ReportError(
            f"{path}: not a sudoku-pipeline result file (no column {', '.join(missing)})"
        )
    meta, notes = read_metadata((schema.metadata or {}).get(METADATA_KEY))
    wanted = [*REQUIRED_COLUMNS, *(c for c in OPTIONAL_COLUMNS if c in schema.names)]
    try:
        with open(path, "rb") as f:
            frame = pl.read_parquet(f, columns=wanted)
        frame = frame.with_columns(
            pl.col(c).cast(t, strict=True) for c, t in _TYPES.items() if c in frame.columns
        )
        if "dataset" in frame.columns and "strategy" in frame.columns:
            frame = frame.with_columns(pl.col("dataset", "strategy").cast(pl.String, strict=True))
    except (pl.exceptions.PolarsError, pa.ArrowException, OSError) as e:
        detail = first_line(e)
        raise ReportError(f"{path}: not a readable result file ({detail})") from None
    return frame, meta, notes


def _dig(meta: dict[str, Any], *keys: str) -> Any:
    """`meta[k1][k2]...`, or None where a level is missing or not a mapping."""
    for key in keys:
        if not isinstance(meta, dict):
            return None
        meta = meta.get(key)
    return meta


def _corpus_name(path: Path, meta: dict[str, Any]) -> str:
    source = _dig(meta, "input", "path")
    name = printable(Path(str(source)).name if source else path.name)
    for suffix in (".parquet", ".solved", ".gz", ".zst", ".csv", ".tsv", ".txt", ".pq"):
        name = name.removesuffix(suffix)
    return name or printable(path.stem)


def _run_meta(meta: dict[str, Any], options: dict[str, Any] | None = None) -> dict[str, Any]:
    """What a report shows of a run's recorded metadata (None where it was not recorded)."""
    if options is None:
        options = _dig(meta, "options") or {}
    return {
        "command": _dig(meta, "command"),
        "input": _dig(meta, "input", "path"),
        "started_at": _dig(meta, "started_at"),
        "wall_s": _dig(meta, "wall_s"),
        "rows_per_s": _dig(meta, "rows_per_s"),
        "workers": _dig(meta, "workers"),
        "repeats": _dig(meta, "repeats"),
        "strategy": _dig(options, "solver") or _dig(options, "strategy"),  # --solver: its spec
        "solutions": _dig(options, "solutions"),
        "max_nodes": _dig(options, "max_nodes"),
        "version": _dig(meta, "versions", "sudoku_pipeline"),
        "cpu": _dig(meta, "cpu", "model"),
    }


def load_runs(paths: list[str | Path]) -> list[Run]:
    """Read result files into runs (a bench file gives one run per dataset x strategy)."""
    if not paths:
        raise ReportError("no result files given")
    runs: list[Run] = []
    for p in paths:
        path = Path(p)
        frame, meta, notes = _read(path)
        if "dataset" in frame.columns and "strategy" in frame.columns:
            recorded = run_entries(meta, notes)
            keys = frame.select("dataset", "strategy").unique(maintain_order=True).rows()
            for dataset, strategy in keys:
                part = frame.filter(
                    (pl.col("dataset") == dataset) & (pl.col("strategy") == strategy)
                )
                info, own_notes = recorded.get((dataset, strategy), ({}, []))
                run_meta = _run_meta(meta | info, {"strategy": strategy, **info})
                run_meta["input"] = info.get("path")  # a bench run's input is its dataset
                runs.append(
                    Run(
                        f"{dataset} / {strategy}",
                        dataset,
                        strategy,
                        path,
                        part.drop("dataset", "strategy"),
                        run_meta,
                        from_bench=True,
                        notes=notes + own_notes,
                    )
                )
        else:
            run_meta = _run_meta(meta)
            strategy = run_meta["strategy"]
            name = _corpus_name(path, meta)
            label = f"{name} / {strategy}" if strategy else name
            runs.append(Run(label, name, strategy, path, frame, run_meta, notes=notes))
    _unique_labels(runs)
    return runs


def _unique_labels(runs: list[Run]) -> None:
    """Result files of one input and strategy are told apart by their file names, then by
    a number: `v1 / fast`, `v2 / fast`; `sample / fast`, `sample / fast #2`."""
    labels = [r.label for r in runs]
    for run in runs:
        if labels.count(run.label) > 1 and not run.from_bench:
            stem = path_stem(run.path)
            run.label = f"{stem} / {run.strategy}" if run.strategy else stem
    seen: dict[str, int] = {}
    for run in runs:
        seen[run.label] = seen.get(run.label, 0) + 1
        if seen[run.label] > 1:
            run.label = f"{run.label} #{seen[run.label]}"


def path_stem(path: Path) -> str:
    """`out/v2.solved.parquet` -> `v2`."""
    name = printable(path.name)
    return name.removesuffix(".parquet").removesuffix(".pq").removesuffix(".solved")


def _statistics(values: pl.Series, in_us: bool = False) -> dict[str, Any]:
    """p50, p90, p99, max and mean of integer `values` (`in_us`: ns, as microseconds); nulls
    (nodes a solver from outside does not count) left out: all None when every value is."""
    values = values.drop_nulls()
    unit: Callable[[int | None], float | int | None] = microseconds if in_us else _count
    figures = {name: unit(percentile(values, q)) for name, q in QUANTILES.items()}
    figures["max"] = unit(None if values.is_empty() else int(values.max()))
    figures["mean"] = mean(values.sum(), values.len(), 1000 if in_us else 1)
    return figures


def _count(value: int | None) -> int | None:
    return None if value is None else int(value)


def _hardest(done: pl.DataFrame, by: list[str]) -> list[dict[str, Any]]:
    top = done.sort([*by, "row"], descending=[True] * len(by) + [False], nulls_last=True)
    top = top.head(HARDEST)
    id_col = pl.col("id").cast(pl.String) if "id" in done.columns else pl.lit(None).alias("id")
    rows = top.select("row", id_col, "clues", "verdict", "nodes", "guesses", "solve_ns", "puzzle")
    return [
        {
            "row": r["row"],
            "id": r["id"],
            "clues": r["clues"],
            "verdict": r["verdict"],
            "nodes": r["nodes"],
            "guesses": r["guesses"],
            "time_us": microseconds(r["solve_ns"]),
            "puzzle": r["puzzle"],
        }
        for r in rows.iter_rows(named=True)
    ]


def _by_clues(done: pl.DataFrame) -> list[dict[str, Any]]:
    """Per clue count: rows, % no guess, nodes and time at p50 and p90."""
    groups = (
        done.filter(pl.col("clues").is_not_null())
        .group_by("clues")
        .agg(
            pl.len().alias("rows"),
            solved_without_guess().sum().alias("no_guess"),
            percentile_expr("nodes", 0.5).alias("nodes_p50"),
            percentile_expr("nodes", 0.9).alias("nodes_p90"),
            percentile_expr("solve_ns", 0.5).alias("time_p50_ns"),
            percentile_expr("solve_ns", 0.9).alias("time_p90_ns"),
        )
        .sort("clues")
    )
    return [
        {
            "clues": g["clues"],
            "rows": g["rows"],
            "no_guess_pct": percent(g["no_guess"], g["rows"]),
            "nodes_p50": g["nodes_p50"],
            "nodes_p90": g["nodes_p90"],
            "time_p50_us": microseconds(g["time_p50_ns"]),
            "time_p90_us": microseconds(g["time_p90_ns"]),
        }
        for g in groups.iter_rows(named=True)
    ]


def run_figures(frame: pl.DataFrame) -> dict[str, Any]:
    """Every figure of one run: counts, percentiles, no-guess share, by clue count, hardest."""
    counts = dict(frame.group_by("verdict").len().rows())
    verdicts = {
        v: counts.pop(v, 0)
        for v in VERDICT_NAMES
        if v not in OUTSIDE_ONLY or "kernel_agrees" in frame.columns
    } | counts
    done = searched(frame)
    n = done.height
    no_guess = done.filter(solved_without_guess()).height
    one_node = done.filter(pl.col("nodes") == 1).height
    counted = done["nodes"].count()  # rows with nodes: not a solver from outside's
    kernel_ns = int(done["solve_ns"].sum()) if n else 0
    stats = {
        "time_us": _statistics(done["solve_ns"], in_us=True),
        "nodes": _statistics(done["nodes"]),
        "guesses": _statistics(done["guesses"]),
    }
    return {
        "rows": frame.height,
        "verdicts": verdicts,
        "searched": n,
        "no_guess": no_guess,
        "no_guess_pct": percent(no_guess, n),
        "one_node": one_node,
        "one_node_pct": percent(one_node, counted),
        "kernel_s": kernel_ns / 10**9,
        "kernel_per_s": n * 10**9 / kernel_ns if kernel_ns else None,
        "stats": stats,
        "by_clues": _by_clues(done),
        "hardest_by_nodes": _hardest(done, ["nodes", "solve_ns"]),
        "hardest_by_time": _hardest(done, ["solve_ns"]),
        "ratings": rating_figures(frame),
    }
