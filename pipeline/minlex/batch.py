"""The batch kernels behind `pipeline.minlex`: each grid of a batch to its minlex form.

A complete grid (every row and column holding 1..9 once) goes to `full.py`, any other
grid to the candidate search of `search.py`. Both also name one variant that gives the
form, from which `symmetry_kernel` builds the symmetry.

numba's on-disk cache of these kernels is not invalidated when only `search.py` or
`full.py` changes (it watches this file alone): after editing those, delete
`pipeline/minlex/__pycache__/batch.*.nb*` (or `make clean`), or the old code keeps running.
"""

import numpy as np
from numba import njit

from pipeline.minlex.full import full_form
from pipeline.minlex.search import PERMS, Scratch, new_scratch, read_grid, search_form


@njit(nogil=True, cache=True)
def _form_of(grid: np.ndarray, form: np.ndarray, scratch: Scratch) -> Scratch:
    """The form of one grid into `form`, one variant giving it into the scratch's `chosen` (t,
    stack order, order in target stacks 0, 1, 2, source row of target rows 0..8); returns the
    scratch (`search.Scratch`, from `new_scratch`: its buffers may have grown)."""
    stacks, lines, chosen = scratch[2], scratch[3], scratch[4]
    complete, distinct = read_grid(grid, stacks)
    if complete:  # `lines[0]` = the grid's rows, `lines[1]` = its columns
        for r in range(9):
            for c in range(9):
                lines[0, r, c] = grid[9 * r + c]
                lines[1, c, r] = grid[9 * r + c]
        full_form(lines, form, chosen)
        return scratch
    return search_form(form, scratch, distinct)


@njit(nogil=True, cache=True)
def canonical_kernel(grids: np.ndarray, forms: np.ndarray) -> None:
    """Minlex forms of `(n, 81) uint8` grids (cells 0..9) into `forms` `(n, 81) uint8`."""
    scratch = new_scratch()
    for i in range(grids.shape[0]):
        scratch = _form_of(grids[i], forms[i], scratch)


@njit(nogil=True, cache=True)
def symmetry_kernel(
    grids: np.ndarray, forms: np.ndarray, cells: np.ndarray, relabel: np.ndarray
) -> None:
    """Forms, and for each grid one symmetry giving it: `forms[i, j] ==
    relabel[i, grids[i, cells[i, j]]]` (`cells` int16 `(n, 81)`, `relabel` uint8 `(n, 10)`,
    `relabel[i, 0] == 0`; digits absent from a grid take the labels left, in order)."""
    scratch = new_scratch()
    for i in range(grids.shape[0]):
        scratch = _form_of(grids[i], forms[i], scratch)
        chosen = scratch[4]
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
        for j in range(81):
            relabel[i, grids[i, cells[i, j]]] = forms[i, j]
        next_label = forms[i].max() + 1
        for d in range(1, 10):
            if relabel[i, d] == 0:
                relabel[i, d] = next_label
                next_label += 1
