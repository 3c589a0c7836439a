"""One batch of validation, the unit of work a worker runs: the row checks of `checks`, a
128-bit key per row for the duplicate check (and one of each canonical form for `symmetry`
and the leak audit, with the puzzles and forms packed for the audit's confirmation), and the
clue counts.

    report = validate_record_batch(batch, ValidateOptions(minimal=True))
"""

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
import pyarrow as pa

from pipeline.canonical_forms import canonical_grids
from pipeline.grid import CELLS, clue_counts
from pipeline.io.dataset import optional_column
from pipeline.jobs.validate.checks import check_rows
from pipeline.jobs.validate.duplicates import packed_cells, packed_keys, row_keys
from pipeline.jobs.validate.pencilmarks import pencilmark_keys
from pipeline.kernels import MAX_NODES
from pipeline.run.parts import Task


@dataclass(frozen=True)
class ValidateOptions:
    """What to check beyond the default row checks: a node budget, minimality."""

    max_nodes: int | None = None
    minimal: bool = False
    symmetry: bool = False  # also find duplicates up to symmetry (canonical forms)
    leaks: bool = False  # forms (and packed cells) for a leak audit (`--against`)

    def kernels(self) -> tuple[str, ...]:
        """The kernels a batch of these checks calls (`run.warmup.KERNELS`): the two-solution
        search, the clash check and the solutions' check (`verify`: an input's solution column),
        the solve kernel for `minimal`, the canonical forms for `symmetry` and a leak audit."""
        return (
            "two_solutions",
            "clash",
            "verify",
            *(("fast",) if self.minimal else ()),
            *(("canonical",) if self.symmetry or self.leaks else ()),
        )

    def __post_init__(self) -> None:
        if self.max_nodes is not None and not 1 <= self.max_nodes <= MAX_NODES:
            raise ValueError(
                f"max_nodes must be between 1 and {MAX_NODES:,}, not {self.max_nodes!r}"
            )


class BatchReport(NamedTuple):
    """What a worker sends back for one batch."""

    start: int  # the batch's first row
    rows: int
    findings: pa.Table  # sorted by row, one chunk
    keys: np.ndarray  # (rows, 2) uint64, duplicates.row_keys
    clues: np.ndarray  # (82,) int64: puzzles by number of givens
    forms: np.ndarray | None  # (rows, 2) uint64: keys of the canonical forms, when asked
    # with `leaks`: (rows, 12) uint64, each row's puzzle and form packed (`packed_cells`, 6
    # words each; zeros for rows that are not 81-cell puzzles), and the pencilmark rows
    packed: np.ndarray | None = None
    pencilmarks: int = 0
    ids: pa.Array | None = None  # the rows' ids, when the input has them


def validate_record_batch(batch: pa.RecordBatch, options: ValidateOptions) -> BatchReport:
    """The unit of work of a worker: row checks, duplicate keys and clue counts of a batch."""
    findings, parsed = check_rows(batch, options.max_nodes, options.minimal)
    rows = batch.column(batch.schema.get_field_index("row"))
    start = rows[0].as_py() if len(rows) else 0
    clues = np.bincount(clue_counts(parsed.grids[parsed.ok]), minlength=CELLS + 1)
    plain = parsed.ok if parsed.pencilmark is None else parsed.ok & ~parsed.pencilmark
    forms = packed = None
    if options.symmetry or options.leaks:  # minlex forms of 81-cell puzzles (not pencilmarks)
        canonical = np.zeros_like(parsed.grids)
        canonical[plain] = canonical_grids(parsed.grids[plain])
        form_words = packed_cells(canonical)
        forms = packed_keys(form_words, plain)
        if options.leaks:
            packed = np.concatenate([packed_cells(parsed.grids), form_words], axis=1)
            packed[~plain] = 0
    keys = pencilmark_keys(parsed, row_keys(parsed.grids, parsed.ok))
    marks = 0 if parsed.pencilmark is None else int(np.count_nonzero(parsed.pencilmark & parsed.ok))
    ids = optional_column(batch, "id")
    return BatchReport(start, len(rows), findings, keys, clues, forms, packed, marks, ids)


def validate_task(task: Task, options: ValidateOptions) -> BatchReport:
    """`validate_record_batch` of a task's batch: the file job's unit of work."""
    return validate_record_batch(task.batch, options)
