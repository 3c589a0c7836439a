"""One batch of validation, the unit of work a worker runs: the row checks of `checks`, a
128-bit key per row for the duplicate check (and one of each canonical form for `symmetry`),
and the clue counts.

    report = validate_record_batch(batch, ValidateOptions(minimal=True))
"""

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
import pyarrow as pa

from pipeline.canonical_forms import canonical_grids
from pipeline.grid import CELLS, clue_counts
from pipeline.run.executors import warm_kernels
from pipeline.solver import MAX_NODES
from pipeline.validate.checks import check_rows
from pipeline.validate.duplicates import row_keys


@dataclass(frozen=True)
class ValidateOptions:
    """What to check beyond the default row checks: a node budget, minimality."""

    max_nodes: int | None = None
    minimal: bool = False
    symmetry: bool = False  # also find duplicates up to symmetry (canonical forms)

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


def warm_validation(checks: ValidateOptions) -> None:
    """Load (or compile, on a first run: once, before any worker starts) every kernel a batch
    of these checks calls: the two-solution search and the clash check, the solve kernel for
    `minimal`, the canonical forms for `symmetry`."""
    from pipeline.solver import find_two_solutions
    from pipeline.solver.checks import first_clash

    grids = np.zeros((2, CELLS), dtype=np.uint8)
    grids[1, :2] = 1  # a clash
    find_two_solutions(grids, max_nodes=1000)
    first_clash(grids[1:])
    if checks.minimal:
        warm_kernels(("fast",))
    if checks.symmetry:
        canonical_grids(grids)


def validation_kernels(checks: ValidateOptions) -> list[tuple[str, str]]:
    """(module, name) of the kernels `warm_validation` loads that take long to compile."""
    kernels = [("pipeline.solver.fast", "two_solutions_kernel")]
    if checks.minimal:
        kernels.append(("pipeline.solver.fast", "solve_kernel"))
    if checks.symmetry:
        kernels.append(("pipeline.canonical_forms.batch", "canonical_kernel"))
    return kernels


def validate_record_batch(batch: pa.RecordBatch, options: ValidateOptions) -> BatchReport:
    """The unit of work of a worker: row checks, duplicate keys and clue counts of a batch."""
    findings, parsed = check_rows(batch, options.max_nodes, options.minimal)
    rows = batch.column(batch.schema.get_field_index("row"))
    start = rows[0].as_py() if len(rows) else 0
    clues = np.bincount(clue_counts(parsed.grids[parsed.ok]), minlength=CELLS + 1)
    forms = None
    if options.symmetry:
        forms = row_keys(canonical_grids(parsed.grids), parsed.ok)
    keys = row_keys(parsed.grids, parsed.ok)
    return BatchReport(start, len(rows), findings, keys, clues, forms)
