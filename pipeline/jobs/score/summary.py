"""What a scoring found, gathered batch by batch: rows per verdict, per clue count, per
grade and per difficulty bin (`rating.bins`), cells right (`BatchTally`, `ScoreTally`); the
`ScoreSummary` the command prints.

The figures are the output's, computed as it is written: `accuracy` is the share of rows
`correct` (malformed rows count against it), `cell_accuracy` the cells right over 81 times the
rows whose `cells_correct` is known, and each group's accuracy the share of its rows `correct`.
"""

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from pipeline.grid import CELLS
from pipeline.jobs.score.verdicts import CORRECT, UNKNOWN, VERDICT_NAMES
from pipeline.rating.bins import NO_BIN, bin_label, difficulty_bins
from pipeline.results.json_numbers import summary_json

_VERDICTS = len(VERDICT_NAMES)


@dataclass
class BatchTally:
    """One batch's figures (or several batches', added up)."""

    verdicts: np.ndarray  # (5,) int64: rows per verdict
    by_clues: np.ndarray  # (82, 5) int64: rows per clue count and verdict (parseable puzzles)
    cells: int = 0  # cells right, over the rows where that is known
    cells_rows: int = 0  # rows where it is known
    grades: dict[str, list[int]] = field(default_factory=dict)  # grade -> [rows, correct]
    difficulty: dict[int, list[int]] = field(default_factory=dict)  # bin -> [rows, correct]

    @classmethod
    def empty(cls) -> "BatchTally":
        return cls(np.zeros(_VERDICTS, np.int64), np.zeros((CELLS + 1, _VERDICTS), np.int64))

    def add(self, other: "BatchTally") -> None:
        self.verdicts += other.verdicts
        self.by_clues += other.by_clues
        self.cells += other.cells
        self.cells_rows += other.cells_rows
        _merge(self.grades, other.grades)
        _merge(self.difficulty, other.difficulty)


def _merge(mine: dict[Any, list[int]], other: dict[Any, list[int]]) -> None:
    """Add `other`'s [rows, correct] per group to `mine`'s."""
    for key, (rows, correct) in other.items():
        group = mine.setdefault(key, [0, 0])
        group[0] += rows
        group[1] += correct


def tally_batch(
    verdicts: np.ndarray,
    clues: np.ndarray,
    puzzle_ok: np.ndarray,
    cells_correct: np.ndarray,
    grades: pa.Array | None,
    difficulty: pa.Array | None = None,
) -> BatchTally:
    """A batch's figures from its verdicts, clue counts (trusted where `puzzle_ok`), cells
    right (UNKNOWN where not known), grades and difficulties (null where none)."""
    v = verdicts.astype(np.int64)
    counts = np.bincount(v, minlength=_VERDICTS)
    key = clues[puzzle_ok].astype(np.int64) * _VERDICTS + v[puzzle_ok]
    by_clues = np.bincount(key, minlength=(CELLS + 1) * _VERDICTS).reshape(CELLS + 1, _VERDICTS)
    known = cells_correct != UNKNOWN
    tally = BatchTally(
        counts, by_clues, int(cells_correct[known].sum(dtype=np.int64)), int(known.sum())
    )
    if grades is not None:
        rows = pc.value_counts(grades)
        right = pc.value_counts(grades.filter(pa.array(verdicts == CORRECT)))
        tally.grades = {str(g): [int(n), 0] for g, n in zip(*_pairs(rows), strict=True)}
        for g, n in zip(*_pairs(right), strict=True):
            tally.grades[str(g)][1] = int(n)
    if difficulty is not None:
        values = difficulty.to_numpy(zero_copy_only=False).astype(np.float64)  # nulls: NaN
        bins = difficulty_bins(values)
        rated = bins != NO_BIN
        rows = np.bincount(bins[rated])
        right = np.bincount(bins[rated & (verdicts == CORRECT)], minlength=len(rows))
        tally.difficulty = {b: [int(rows[b]), int(right[b])] for b in np.flatnonzero(rows)}
    return tally


def _pairs(counts: pa.StructArray) -> tuple[list, list]:
    """value_counts' values and counts, nulls (rows without a grade) left out."""
    values, ns = counts.field("values").to_pylist(), counts.field("counts").to_pylist()
    kept = [(v, n) for v, n in zip(values, ns, strict=True) if v is not None]
    return [v for v, _ in kept], [n for _, n in kept]


def _group(rows: int, correct: int) -> dict[str, Any]:
    return {"rows": rows, "correct": correct, "accuracy": correct / rows if rows else None}


@dataclass
class ScoreSummary:
    """What a scoring found; `to_json()`: the same as one JSON object."""

    input: str
    output: str
    rows: int
    correct: int
    accuracy: float | None  # share of rows `correct`; None without rows
    cell_accuracy: float | None  # cells right / (81 x rows where known); None when none is
    verdicts: dict[str, int]  # rows per verdict, every verdict
    by_clues: dict[int, dict[str, Any]]  # clue count -> rows, correct, accuracy
    by_grade: dict[str, dict[str, Any]]  # the input's grade -> the same; {} without grades
    by_difficulty: dict[str, dict[str, Any]]  # difficulty bin (`0`, `0-1`, `1-2`, ...) -> same
    wall_s: float
    rows_per_s: float  # of the rows this run scored (not those a resumed run found done)
    workers: int
    resumed_rows: int = 0  # rows an interrupted run had done, taken from its checkpoint
    metadata: dict[str, Any] = field(default_factory=dict, repr=False)

    @property
    def all_correct(self) -> bool:
        return self.correct == self.rows

    def to_json(self) -> str:
        return summary_json(self)

    def describe(self) -> str:
        """The terminal summary: accuracy, verdicts, then accuracy by clue count and grade."""
        accuracy = "no rows" if self.accuracy is None else f"accuracy {self.accuracy:.2%}"
        cells = "" if self.cell_accuracy is None else f", cell accuracy {self.cell_accuracy:.2%}"
        resumed = f" ({self.resumed_rows:,} from the checkpoint)" if self.resumed_rows else ""
        lines = [
            f"{self.rows:,} rows{resumed} in {self.wall_s:.2f} s ({self.rows_per_s:,.0f} rows/s, "
            f"{self.workers} worker{'s' if self.workers != 1 else ''}): {accuracy} "
            f"({self.correct:,} correct){cells}",
        ]
        if self.rows:
            lines.append("  " + ", ".join(f"{v} {n:,}" for v, n in self.verdicts.items() if n))
        for title, groups in (
            ("clues", self.by_clues),
            ("grade", self.by_grade),
            ("difficulty", self.by_difficulty),
        ):
            if groups:
                width = max(len(title), *(len(str(k)) for k in groups))
                lines.append(f"  {title:>{width}} {'rows':>9} {'correct':>9} {'accuracy':>9}")
                for key, g in groups.items():
                    lines.append(
                        f"  {key!s:>{width}} {g['rows']:>9,} {g['correct']:>9,} "
                        f"{g['accuracy']:>9.2%}"
                    )
        lines.append(f"wrote {self.output}")
        return "\n".join(lines)


class ScoreTally:
    """The batches' figures added up; `summary()` turns them into a `ScoreSummary`."""

    def __init__(self) -> None:
        self.total = BatchTally.empty()

    def add(self, tally: BatchTally) -> None:
        self.total.add(tally)

    def summary(self, **run: Any) -> ScoreSummary:
        t = self.total
        rows, correct = int(t.verdicts.sum()), int(t.verdicts[CORRECT])
        by_clues = {
            c: _group(int(n.sum()), int(n[CORRECT])) for c, n in enumerate(t.by_clues) if n.any()
        }
        return ScoreSummary(
            **run,
            rows=rows,
            correct=correct,
            accuracy=correct / rows if rows else None,
            cell_accuracy=t.cells / (CELLS * t.cells_rows) if t.cells_rows else None,
            verdicts={name: int(n) for name, n in zip(VERDICT_NAMES, t.verdicts, strict=True)},
            by_clues=by_clues,
            by_grade={g: _group(*t.grades[g]) for g in _grade_order(t.grades)},
            by_difficulty={bin_label(b): _group(*t.difficulty[b]) for b in sorted(t.difficulty)},
        )


def _grade_order(grades: dict[str, list[int]]) -> list[str]:
    """The grades in ladder order when they are the ladder's (`pipeline.GRADES`), else by name."""
    if not grades:
        return []
    from pipeline.rating.ladder import GRADES

    if set(grades) <= set(GRADES):
        return [g for g in GRADES if g in grades]
    return sorted(grades)


def tally_output(path: Path, fmt: str) -> ScoreTally:
    """The figures of a whole score output read back (a resumed run's: the rows scored before
    it are only in the output): `verdict`, `cells_correct`, `clues` and `grade` columns."""
    import polars as pl  # only for a resumed run

    wanted = ["verdict", "cells_correct", "clues", "grade", "difficulty"]
    if fmt == "parquet":
        names = pl.read_parquet_schema(path).names()
        frame = pl.read_parquet(path, columns=[c for c in wanted if c in names])
    elif fmt == "csv":
        frame = pl.read_csv(path, infer_schema=False)
    else:
        frame = pl.read_ndjson(path)
    frame = frame.select(pl.col(c) for c in wanted if c in frame.columns)
    codes = {name: i for i, name in enumerate(VERDICT_NAMES)}
    verdicts = frame["verdict"].cast(pl.String).replace_strict(codes, return_dtype=pl.Int8)
    clues = frame["clues"].cast(pl.Int64)
    cells = frame["cells_correct"].cast(pl.Int64).fill_null(UNKNOWN)
    grades = frame["grade"].cast(pl.String).to_arrow() if "grade" in frame.columns else None
    difficulty = None
    if "difficulty" in frame.columns:
        difficulty = frame["difficulty"].cast(pl.Float64, strict=False).to_arrow()
    tally = ScoreTally()
    tally.add(
        tally_batch(
            verdicts.to_numpy(),
            clues.fill_null(0).to_numpy(),
            clues.is_not_null().to_numpy(),
            cells.to_numpy(),
            grades,
            difficulty,
        )
    )
    return tally
