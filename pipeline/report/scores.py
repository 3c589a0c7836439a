"""A model's answers, as `score` wrote them: score files read, the figures of each, and two
models compared row by row. Never re-scores; nothing here draws or formats (`score_text`,
`score_html` with `score_plots` do).

A score file is recognised by its run metadata (`command` is `score`), or, without metadata,
by its columns (`verdict` and `cells_correct`, no `nodes`). Its figures are those `score`
prints (`pipeline.jobs.score.summary`), recomputed from the rows: `accuracy` is the share of rows
`correct` (malformed rows count against it), `cell_accuracy` the cells right over 81 times the
rows whose `cells_correct` is known; each group's accuracy the share of its rows `correct`.
Groups: by clue count; by `grade` (the technique ladder's order when the grades are its own)
and by `difficulty` (`rating.bins`: 0, then doubling bins) when the file has those columns.

    scores = ScoreReport.of(load_scores(["a.scored.parquet", "b.scored.parquet"]))
    scores.to_dict()
"""

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq

from pipeline.errors import ReportError, ResultNotFoundError, first_line, printable
from pipeline.io.runinfo import METADATA_KEY
from pipeline.rating import GRADES
from pipeline.rating.bins import NO_BIN, bin_label, difficulty_bins
from pipeline.report.metadata import read_metadata
from pipeline.results.measures import percent

# The score verdicts, best to worst: `pipeline.jobs.score.verdicts.VERDICT_NAMES` (a sibling job
# the report may not import; a test keeps the two the same).
SCORE_VERDICTS = ("correct", "wrong", "givens_changed", "incomplete", "malformed")
SCORE_COMMAND = "score"
REQUIRED = ("row", "verdict", "cells_correct", "clues")
OPTIONAL = ("id", "puzzle", "grade", "difficulty")
CELLS = 81


def is_score_file(path: str | Path) -> bool:
    """Whether `path` is a Parquet file `score` wrote (False for what cannot be read: the
    solve runs' reader says why)."""
    try:
        with open(path, "rb") as f:
            schema = pq.read_schema(f)
    except (pa.ArrowException, OSError):
        return False
    meta, _ = read_metadata((schema.metadata or {}).get(METADATA_KEY))
    if meta.get("command") is not None:
        return meta["command"] == SCORE_COMMAND
    return (
        "cells_correct" in schema.names
        and "verdict" in schema.names
        and ("nodes" not in schema.names)
    )


@dataclass
class ScoreRun:
    """One model's answers over one corpus, as read from a score file."""

    label: str  # unique within a report: "answers / model_b"
    path: Path
    frame: pl.DataFrame = field(repr=False)
    meta: dict[str, Any] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


def _dig(meta: Any, *keys: str) -> Any:
    for key in keys:
        if not isinstance(meta, dict):
            return None
        meta = meta.get(key)
    return meta


def _read(path: Path) -> ScoreRun:
    if not path.exists():
        raise ResultNotFoundError(f"{path}: no such file", path)
    try:
        with open(path, "rb") as f:
            schema = pq.read_schema(f)
        missing = [c for c in REQUIRED if c not in schema.names]
        if missing:
            raise ReportError(f"{path}: not a score file (no column {', '.join(missing)})")
        wanted = [*REQUIRED, *(c for c in OPTIONAL if c in schema.names)]
        with open(path, "rb") as f:
            frame = pl.read_parquet(f, columns=wanted)
        frame = frame.with_columns(
            pl.col("verdict").cast(pl.String),
            pl.col("cells_correct", "clues").cast(pl.Int64),
            *([pl.col("grade").cast(pl.String)] if "grade" in frame.columns else []),
            *([pl.col("difficulty").cast(pl.Float64)] if "difficulty" in frame.columns else []),
        )
    except (pl.exceptions.PolarsError, pa.ArrowException, OSError) as e:
        raise ReportError(f"{path}: not a readable score file ({first_line(e)})") from None
    meta, notes = read_metadata((schema.metadata or {}).get(METADATA_KEY))
    recorded = {
        "command": SCORE_COMMAND,
        "input": _text(_dig(meta, "input", "path")),
        "prediction_column": _text(_dig(meta, "options", "prediction_column"))
        or _text(_dig(meta, "options", "prediction")),
        "started_at": _text(_dig(meta, "started_at")),
        "wall_s": _dig(meta, "wall_s"),
        "rows_per_s": _dig(meta, "rows_per_s"),
        "workers": _dig(meta, "workers"),
        "version": _dig(meta, "versions", "sudoku_pipeline"),
    }
    return ScoreRun(_label(path, recorded), path, frame, recorded, notes)


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _label(path: Path, meta: dict[str, Any]) -> str:
    """`answers / model_b`: the input's stem and the prediction column; the file's stem
    without a recorded input."""
    source = meta["input"]
    name = printable(Path(source).name if source else path.name)
    for suffix in (".parquet", ".scored", ".gz", ".zst", ".csv", ".tsv", ".txt", ".jsonl"):
        name = name.removesuffix(suffix)
    column = meta["prediction_column"]
    return f"{name} / {printable(column)}" if column else name


def load_scores(paths: list[str | Path]) -> list[ScoreRun]:
    """Read score files, each a run; labels made unique (by file name, then a number)."""
    runs = [_read(Path(p)) for p in paths]
    labels = [r.label for r in runs]
    for run in runs:
        if labels.count(run.label) > 1:
            run.label = printable(run.path.name).removesuffix(".parquet")
    seen: dict[str, int] = {}
    for run in runs:
        seen[run.label] = seen.get(run.label, 0) + 1
        if seen[run.label] > 1:
            run.label = f"{run.label} #{seen[run.label]}"
    return runs


# --- figures ----------------------------------------------------------------------------------

_CORRECT = pl.col("verdict") == "correct"


def _group_figures(frame: pl.DataFrame, name: str) -> list[dict[str, Any]]:
    """Per value of column `name`: rows, correct, accuracy and cell accuracy (rows without a
    value left out), sorted by the value."""
    groups = (
        frame.filter(pl.col(name).is_not_null())
        .group_by(name)
        .agg(
            pl.len().alias("rows"),
            _CORRECT.sum().alias("correct"),
            pl.col("cells_correct").sum().alias("cells"),
            pl.col("cells_correct").count().alias("cells_rows"),
        )
        .sort(name)
    )
    return [_figures(g[name], name, g) for g in groups.iter_rows(named=True)]


def _figures(key: Any, name: str, g: dict[str, Any]) -> dict[str, Any]:
    return {
        name: key,
        "rows": g["rows"],
        "correct": g["correct"],
        "accuracy": g["correct"] / g["rows"] if g["rows"] else None,
        "cell_accuracy": g["cells"] / (CELLS * g["cells_rows"]) if g["cells_rows"] else None,
    }


def _by_difficulty(frame: pl.DataFrame) -> list[dict[str, Any]]:
    """Per difficulty bin (`rating.bins`: 0, 0-1, 1-2, 2-4, ...), in order."""
    values = frame["difficulty"].fill_null(float("nan")).to_numpy()
    keyed = frame.with_columns(pl.Series("bin", difficulty_bins(values)))
    groups = _group_figures(keyed.filter(pl.col("bin") != NO_BIN), "bin")
    return [{"difficulty": bin_label(g.pop("bin")), **g} for g in groups]


def _by_grade(frame: pl.DataFrame) -> list[dict[str, Any]]:
    groups = _group_figures(frame, "grade")
    ladder = {g: i for i, g in enumerate(GRADES)}
    if all(g["grade"] in ladder for g in groups):
        return sorted(groups, key=lambda g: ladder[g["grade"]])
    return sorted(groups, key=lambda g: g["grade"])


def score_figures(frame: pl.DataFrame) -> dict[str, Any]:
    """Every figure of one score run: accuracy, cell accuracy, rows per verdict, and accuracy
    by clue count, by grade and by difficulty (empty lists without those columns)."""
    counts = dict(frame.group_by("verdict").len().rows())
    verdicts = {v: counts.pop(v, 0) for v in SCORE_VERDICTS} | counts
    cells = frame["cells_correct"]
    total = _figures(
        None,
        "all",
        {
            "rows": frame.height,
            "correct": verdicts["correct"],
            "cells": cells.sum(),
            "cells_rows": cells.count(),
        },
    )
    by_clues = _group_figures(frame, "clues")
    return {
        "rows": total["rows"],
        "correct": total["correct"],
        "accuracy": total["accuracy"],
        "cell_accuracy": total["cell_accuracy"],
        "verdicts": verdicts,
        "verdicts_pct": {v: percent(n, frame.height) for v, n in verdicts.items()},
        "by_clues": by_clues,
        "by_grade": _by_grade(frame) if "grade" in frame.columns else [],
        "by_difficulty": _by_difficulty(frame) if "difficulty" in frame.columns else [],
    }


# --- two models compared ----------------------------------------------------------------------


JOIN_KEYS = ("puzzle", "id", "row")  # by preference: the puzzle when both files have it


def agreement(base: ScoreRun, run: ScoreRun) -> dict[str, Any] | None:
    """Row by row, which of two runs is correct: joined by puzzle when both files have the
    column (as solver runs are), else by `id`, else by `row` when both have as many rows
    (older score files keep no puzzles); a key repeated in a file counts once, at its first
    row. None when nothing joins them."""
    key = next(k for k in JOIN_KEYS if k in base.frame.columns and k in run.frame.columns)
    if key == "row" and base.frame.height != run.frame.height:
        return None

    def keyed(frame: pl.DataFrame, name: str) -> pl.DataFrame:
        rows = frame.select(pl.col(key).cast(pl.String), _CORRECT.alias(name))
        return rows.drop_nulls(key).unique(key, keep="first", maintain_order=True)

    joined = keyed(base.frame, "a").join(keyed(run.frame, "b"), on=key, how="inner")
    if not joined.height:
        return None
    a, b = joined["a"], joined["b"]
    return {
        "run": run.label,
        "baseline": base.label,
        "key": key,
        "common": joined.height,
        "both_correct": int((a & b).sum()),
        "only_run": int((~a & b).sum()),
        "only_baseline": int((a & ~b).sum()),
        "neither": int((~a & ~b).sum()),
    }


@dataclass
class ScoreReport:
    """The score runs of a report, their figures, and each run after the first against it."""

    runs: list[ScoreRun]
    figures: list[dict[str, Any]]
    agreements: list[dict[str, Any]]

    @classmethod
    def of(cls, runs: list[ScoreRun]) -> "ScoreReport":
        figures = [score_figures(r.frame) for r in runs]
        pairs = [agreement(runs[0], r) for r in runs[1:]]
        return cls(runs, figures, [p for p in pairs if p is not None])

    def to_dict(self) -> dict[str, Any]:
        return {
            "runs": [
                {
                    "label": r.label,
                    "path": printable(str(r.path)),
                    "metadata": r.meta,
                    "notes": r.notes,
                    **f,
                }
                for r, f in zip(self.runs, self.figures, strict=True)
            ],
            "agreements": self.agreements,
        }
