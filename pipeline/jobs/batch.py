"""One batch through the middle of the pipeline: parse, solve, assemble the result table.

`solve_record_batch` is the unit of work that the solve job hands to its executor's workers;
`solve_batch` is the same step for puzzles a notebook already holds in memory.
"""

from dataclasses import dataclass

import numpy as np
import polars as pl
import pyarrow as pa

from pipeline.grid import PuzzleColumn, format_grids, parse_puzzles
from pipeline.io.dataset import optional_column
from pipeline.jobs.results import build_results
from pipeline.solver import DEFAULT_STRATEGY, MAX_NODES, get_strategy, solve_grids


@dataclass(frozen=True)
class SolveOptions:
    """How to search: strategy, how many solutions to look for (2 proves uniqueness), budget."""

    strategy: str = DEFAULT_STRATEGY
    solutions: int = 2
    max_nodes: int | None = None

    def __post_init__(self) -> None:
        get_strategy(self.strategy)  # ValueError naming the choices
        if self.solutions not in (1, 2):
            raise ValueError(f"solutions must be 1 or 2, not {self.solutions!r}")
        if self.max_nodes is not None and not 1 <= self.max_nodes <= MAX_NODES:
            raise ValueError(
                f"max_nodes must be between 1 and {MAX_NODES:,}, not {self.max_nodes!r}"
            )


def solve_record_batch(batch: pa.RecordBatch, options: SolveOptions) -> pa.Table:
    """Solve a batch with columns `row`, `puzzle` and optionally `solution` and `id`."""
    puzzles = batch.column(batch.schema.get_field_index("puzzle"))
    parsed = parse_puzzles(puzzles)
    found = solve_grids(
        parsed.grids,
        strategy=options.strategy,
        solutions=options.solutions,
        max_nodes=options.max_nodes,
        skip=~parsed.ok,
    )
    return build_results(
        batch.column(batch.schema.get_field_index("row")),
        puzzles,
        parsed,
        found,
        ids=optional_column(batch, "id"),
        expected=optional_column(batch, "solution"),
    )


def solve_batch(
    puzzles: PuzzleColumn,
    strategy: str = DEFAULT_STRATEGY,
    solutions: int = 2,
    max_nodes: int | None = None,
) -> pl.DataFrame:
    """Solve puzzles held in memory; a DataFrame in the result schema, one row per puzzle.

    `puzzles`: 81-character strings (a list, a polars Series, a pyarrow array) or an
    `(n, 81)` integer array with 0 for blanks.
    """
    options = SolveOptions(strategy, solutions, max_nodes)
    if isinstance(puzzles, np.ndarray) and puzzles.ndim == 2:
        column = format_grids(puzzles.astype(np.uint8))
    elif isinstance(puzzles, pl.Series):
        column = puzzles.cast(pl.String).to_arrow()
    elif isinstance(puzzles, pa.ChunkedArray):
        column = puzzles.combine_chunks()
    elif isinstance(puzzles, pa.Array):
        column = puzzles
    else:
        column = pa.array(list(puzzles), type=pa.string())
    column = column.cast(pa.string())
    rows = pa.array(np.arange(len(column), dtype=np.int64))
    batch = pa.RecordBatch.from_arrays([rows, column], names=["row", "puzzle"])
    return pl.from_arrow(solve_record_batch(batch, options))
