"""Canonical (minlex) forms: the same puzzle in any disguise gets the same 81-character string.

Relabelling the digits, permuting rows inside a band, bands, columns inside a stack, stacks,
and transposing give 2 * 6^8 * 9! variants of each puzzle. Its *form* is the lexicographically
smallest of the 81-character strings of its 3,359,232 geometric variants, each with its digits
relabelled 1, 2, 3, ... in order of first appearance, blanks counting as 0 (written `.`): so two
puzzles are the same up to symmetry exactly when their forms are equal. 47,653 of the 49,158
lines of the 17-clue catalogue are printed in this form; the other 1,505 in another one
(larger strings; about half of them "pattern first": the smallest blank/given pattern, then the
smallest digits on it). Full grids (81 givens) have a form too, and so has any grid of 0..9
(clashing givens included).

`canonical` takes the puzzle columns that `solve_batch` takes; `canonical_grids` and
`canonical_symmetries` work on `(n, 81) uint8` grids. The work is done by the numba kernel in
`batch.py` (about 330,000 puzzles of the 17-clue set a second of one core's time, complete
grids 12,000; see benchmarks/canonical_bench.py).
"""

import numpy as np
import polars as pl
import pyarrow as pa

from pipeline.grid import PuzzleColumn, check_grids, format_grids, parse_puzzles

__all__ = ["canonical", "canonical_grids", "canonical_symmetries"]


def canonical_grids(grids: np.ndarray) -> np.ndarray:
    """Minlex forms of `(n, 81)` grids (0 = blank) as `(n, 81) uint8`.

    Raises ValueError for another shape, a non-integer dtype, or cells outside 0..9.
    """
    grids = check_grids(grids)
    from pipeline.canonical_forms.batch import canonical_kernel  # numba: compiled or loaded on use

    forms = np.empty_like(grids)
    complete = np.zeros(len(grids), np.bool_)
    canonical_kernel(grids, forms, complete)
    _complete_forms(
        grids, complete, forms, np.empty((0, 81), np.int16), np.empty((0, 10), np.uint8)
    )
    return forms


def canonical_symmetries(grids: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Forms, and one symmetry per grid that gives its form: `(forms, cells, relabel)`.

    `cells` is `(n, 81) int16` and `relabel` `(n, 10) uint8` with `relabel[:, 0] == 0`, such that
    `forms[i] == relabel[i][grids[i][cells[i]]]`: cell j of the form is cell `cells[i, j]` of the
    grid, its digit relabelled. (When a grid has automorphisms several symmetries give the form;
    this is one of them. Digits absent from a grid get the labels left over, in order.)
    """
    grids = check_grids(grids)
    from pipeline.canonical_forms.batch import symmetry_kernel

    forms = np.empty_like(grids)
    cells = np.empty(grids.shape, np.int16)
    relabel = np.empty((len(grids), 10), np.uint8)
    complete = np.zeros(len(grids), np.bool_)
    symmetry_kernel(grids, forms, cells, relabel, complete)
    _complete_forms(grids, complete, forms, cells, relabel)
    return forms, cells, relabel


def _complete_forms(
    grids: np.ndarray,
    complete: np.ndarray,
    forms: np.ndarray,
    cells: np.ndarray,
    relabel: np.ndarray,
) -> None:
    """The forms (and symmetries, when `cells` has rows) of the grids marked `complete`: their
    kernel is compiled, or loaded, only when a batch holds one."""
    if complete.any():
        from pipeline.canonical_forms.batch import complete_kernel

        complete_kernel(grids, np.flatnonzero(complete), forms, cells, relabel)


def canonical(puzzles: PuzzleColumn | np.ndarray, blank: str = ".") -> pl.Series:
    """The minlex form of each puzzle, as a polars String Series named "canonical".

    `puzzles`: 81-character strings (a list, a polars Series, a pyarrow (Chunked)Array, a numpy
    array of str) or an `(n, 81)` integer array with 0 for blanks, as `solve_batch` takes them.
    A row that does not parse (wrong length, stray character, missing) gets null; `blank` is the
    character written for blank cells. Raises ValueError for an integer array with cells outside
    0..9 (strings cannot hold such cells).
    """
    if isinstance(puzzles, np.ndarray) and puzzles.ndim == 2:
        grids, ok = check_grids(puzzles), None
    else:
        if isinstance(puzzles, pl.Series) and puzzles.dtype != pl.String:
            puzzles = puzzles.cast(pl.String)
        elif isinstance(puzzles, pa.Array | pa.ChunkedArray) and not (
            pa.types.is_string(puzzles.type) or pa.types.is_large_string(puzzles.type)
        ):
            puzzles = puzzles.cast(pa.string())
        parsed = parse_puzzles(puzzles)
        grids, ok = parsed.grids, parsed.ok
    forms = canonical_grids(grids)
    return pl.Series("canonical", format_grids(forms, blank=blank, mask=ok))
