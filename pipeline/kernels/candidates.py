"""Pencilmark puzzles: `(n, 81) uint16` candidates, bit d-1 set when digit d may still stand in
the cell (tdoku's 729-character lines read into numbers).

A cell with one candidate counts as placed, like a given (`placed_digits`): two placed cells of
a unit holding the same digit clash (`checks.first_candidates_clash`, verdict `INVALID`); a cell
with no candidate leaves the puzzle without a solution (`UNSOLVABLE`). A grid's own candidates
(`grid_candidates`: each given alone, each blank the digits its givens' peers leave) are a
pencilmark puzzle with the same solutions.
"""

import numpy as np

from pipeline.kernels.units import CELL_UNITS, UNIT_CELLS

ALL_CANDIDATES = 0x1FF  # the nine digits


def as_candidates(candidates: np.ndarray) -> np.ndarray:
    """Contiguous `(n, 81) uint16`; ValueError for another shape, or values that are not
    whole numbers from 0 to 65535 (above 511, bits beyond the ninth digit: `INVALID` rows)."""
    array = np.asarray(candidates)
    if array.dtype.kind not in "iu":
        raise ValueError(f"candidates must be integer bit sets of digits, not {array.dtype}")
    if array.size and (array.min() < 0 or array.max() > 0xFFFF):
        raise ValueError("candidates must be bit sets of digits, 0 to 511 (at most 65535)")
    array = np.ascontiguousarray(array, dtype=np.uint16)
    if array.ndim not in (1, 2) or array.shape[-1] != 81:
        raise ValueError(f"candidates must have shape (n, 81), got {array.shape}")
    return array.reshape(-1, 81)


def placed_digits(candidates: np.ndarray) -> np.ndarray:
    """`(n, 81) uint8`: the digit of each cell with exactly one candidate, 0 elsewhere (and 10,
    no digit, where a value has bits above the ninth)."""
    c = as_candidates(candidates).astype(np.int64)
    single = (c != 0) & (c & (c - 1) == 0)
    digits = np.where(single, np.log2(np.maximum(c, 1)).astype(np.int64) + 1, 0)
    return np.where(c > ALL_CANDIDATES, 10, digits).astype(np.uint8)


def grid_candidates(grids: np.ndarray) -> np.ndarray:
    """`(n, 81) uint16`: each given alone, each blank the digits no given of its row, column
    or box holds (a value above 9 gives a cell no candidate)."""
    grids = np.ascontiguousarray(grids, dtype=np.uint8).reshape(-1, 81)
    bits = np.where(grids > 0, 1 << (grids.astype(np.int64) - 1), 0) & ALL_CANDIDATES
    used = np.bitwise_or.reduce(bits[:, UNIT_CELLS], axis=2)  # (n, 27)
    seen = np.bitwise_or.reduce(used[:, CELL_UNITS], axis=2)  # (n, 81)
    return np.where(grids > 0, bits, ALL_CANDIDATES & ~seen).astype(np.uint16)


__all__ = ["ALL_CANDIDATES", "as_candidates", "grid_candidates", "placed_digits"]
