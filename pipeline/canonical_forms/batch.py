"""The batch kernels behind `pipeline.canonical_forms`: each grid of a batch to its minlex form.

A complete grid (every row and column holding 1..9 once) goes to `full.py`, any other
grid to the candidate search of `search.py`. Both also name one variant that gives the
form, from which `symmetry_kernel` builds the symmetry.

No array is sliced or reassigned per grid: numba counts references (atomically) on each such
array (see docs/BENCHMARKS.md, "Ideas measured").

numba's on-disk cache of these kernels is not invalidated when only `search.py`, `stacks.py` or
`full.py` changes (it watches this file alone): after editing those, `make clean-kernels` (it
deletes this checkout's compiled kernels, `pipeline.compiled.cache_folder`), or the old code
keeps running.
"""

import numpy as np

from pipeline.canonical_forms.full import full_form
from pipeline.canonical_forms.search import (
    PERMS,
    START_CAPACITY,
    new_scratch,
    read_grid,
    search_form,
)
from pipeline.compiled import inline_part, kernel


@inline_part
def _symmetry_of(
    grids: np.ndarray,
    forms: np.ndarray,
    i: int,
    chosen: np.ndarray,
    cells: np.ndarray,
    relabel: np.ndarray,
) -> None:
    """`cells[i]` and `relabel[i]` from the variant `chosen` giving `forms[i]` (t, stack order,
    order in target stacks 0, 1, 2, source row of target rows 0..8)."""
    t, sp = chosen[0], chosen[1]
    for r in range(9):
        source_row = chosen[5 + r]
        for k in range(3):
            for j in range(3):
                source_col = 3 * PERMS[sp, k] + PERMS[chosen[2 + k], j]
                if t:
                    cells[i, 9 * r + 3 * k + j] = 9 * source_col + source_row
                else:
                    cells[i, 9 * r + 3 * k + j] = 9 * source_row + source_col
    relabel[i, :] = 0
    next_label = 1
    for j in range(81):
        relabel[i, grids[i, cells[i, j]]] = forms[i, j]
        next_label = max(next_label, forms[i, j] + 1)
    for d in range(1, 10):
        if relabel[i, d] == 0:
            relabel[i, d] = next_label
            next_label += 1


@inline_part
def _forms_from(
    grids: np.ndarray,
    forms: np.ndarray,
    start: int,
    capacity: int,
    cells: np.ndarray,
    relabel: np.ndarray,
    complete: np.ndarray,
) -> int:
    """Forms of the grids of `grids[start:]` that are not complete grids into `forms` (and
    symmetries into `cells`, `relabel` if they have rows), with room for `capacity` candidates;
    a complete grid (every row and column holding 1..9 once) is marked in `complete` and left
    to `_complete_forms`. Returns where it stopped: `len(grids)`, or the first grid that needs
    more room."""
    buffers, table, stacks, _, chosen = new_scratch(capacity)
    for i in range(start, grids.shape[0]):
        is_complete, barred = read_grid(grids, i, stacks)
        complete[i] = is_complete
        if is_complete:
            continue
        if not search_form(forms, i, buffers, table, stacks, chosen, barred):
            return i
        if cells.shape[0]:
            _symmetry_of(grids, forms, i, chosen, cells, relabel)
    return grids.shape[0]


@inline_part  # (inlined into `canonical_kernel`: one cached level less to compile)
def symmetry_kernel(
    grids: np.ndarray,
    forms: np.ndarray,
    cells: np.ndarray,
    relabel: np.ndarray,
    complete: np.ndarray,
) -> None:
    """Forms, and for each grid one symmetry giving it: `forms[i, j] ==
    relabel[i, grids[i, cells[i, j]]]` (`cells` int16 `(n, 81)`, `relabel` uint8 `(n, 10)`,
    `relabel[i, 0] == 0`; digits absent from a grid take the labels left, in order); the
    complete grids marked in `complete`, for `complete_kernel`. With `cells` of no rows, the
    forms alone."""
    # int64, not the literals 0 and START_CAPACITY: numba compiled `_forms_from` (the whole
    # search) once for the literals and once more for the numbers that follow
    capacity = np.int64(START_CAPACITY)
    start = _forms_from(grids, forms, np.int64(0), capacity, cells, relabel, complete)
    while start < grids.shape[0]:  # a grid with more candidates than room: twice the room
        capacity *= 2
        start = _forms_from(grids, forms, start, capacity, cells, relabel, complete)


@kernel
def canonical_kernel(grids: np.ndarray, forms: np.ndarray, complete: np.ndarray) -> None:
    """Minlex forms of `(n, 81) uint8` grids (cells 0..9) into `forms` `(n, 81) uint8`, but for
    the complete grids, marked in `complete` `(n,) bool`: `complete_kernel` does those."""
    no_cells, no_labels = np.empty((0, 81), np.int16), np.empty((0, 10), np.uint8)
    symmetry_kernel(grids, forms, no_cells, no_labels, complete)


# The complete grids' form in a kernel of its own, called only when a batch holds one: a first
# command on puzzles (a split, `--canonical`, `--symmetry`) does not wait for its compile (3.8
# CPU s: those commands' first run 9.6-10.0 s -> docs/BENCHMARKS.md, "First run").
@kernel
def complete_kernel(
    grids: np.ndarray, rows: np.ndarray, forms: np.ndarray, cells: np.ndarray, relabel: np.ndarray
) -> None:
    """The forms of the complete grids `grids[rows]` into `forms` (and, if `cells` has rows,
    their symmetries, as `symmetry_kernel` gives them)."""
    _, _, _, lines, chosen = new_scratch(START_CAPACITY)
    for i in rows:
        for r in range(9):  # `lines[0]` = the grid's rows, `lines[1]` = its columns
            for c in range(9):
                lines[0, r, c] = grids[i, 9 * r + c]
                lines[1, c, r] = grids[i, 9 * r + c]
        full_form(lines, forms[i], chosen)
        if cells.shape[0]:
            _symmetry_of(grids, forms, i, chosen, cells, relabel)
