"""A symmetry's codes (`symmetry_kernels` says how they read) packed and unpacked, and applied
to grids or undone, in numpy: what the tests and the frames check the kernel's copies with.

    codes = pack(rows_0_based, 1)                  # (n, 9) -> (n,) int32 9-digit codes
    copies = apply_symmetries(grids, relabel, rows, columns, transposed)
    assert (undo_symmetries(copies, relabel, rows, columns, transposed) == grids).all()
"""

from typing import Any

import numpy as np

PLACES = (10 ** np.arange(8, -1, -1)).astype(np.int64)  # a 9-digit number's digits' weights


def pack(order: np.ndarray, offset: int = 0) -> np.ndarray:
    """`(n, 9)` small numbers as `(n,)` 9-digit int32 codes, `offset` added to each digit
    (1: 0-based rows and columns written 1-based, so that no code starts with a 0)."""
    order = np.asarray(order, dtype=np.int64).reshape(-1, 9)
    return ((order + offset) * PLACES).sum(axis=1).astype(np.int32)


def unpack(codes: Any, offset: int = 0) -> np.ndarray:
    """9-digit codes (`relabel`, `rows`, `columns`) as `(n, 9)` int arrays of their digits,
    `offset` added to each (-1: 1-based rows and columns as 0-based)."""
    codes = np.asarray(codes, dtype=np.int64).reshape(-1)
    return (codes[:, None] // PLACES) % 10 + offset


def apply_symmetries(
    grids: np.ndarray, relabel: Any, rows: Any, columns: Any, transposed: Any
) -> np.ndarray:
    """Symmetries, given as codes (the module says how they read), applied to `(n, 81)` grids
    in numpy."""
    grids = np.asarray(grids, dtype=np.uint8).reshape(-1, 81)
    n = len(grids)
    rows, columns = unpack(rows, -1), unpack(columns, -1)
    cells = (rows[:, :, None] * 9 + columns[:, None, :]).reshape(n, 81)
    flipped = (rows[:, None, :] * 9 + columns[:, :, None]).reshape(n, 81)
    transposed = np.asarray(transposed, dtype=np.bool_)
    cells[transposed] = flipped[transposed]
    digits = np.zeros((n, 10), np.uint8)
    digits[:, 1:] = unpack(relabel)
    return np.take_along_axis(digits, np.take_along_axis(grids, cells, 1).astype(np.intp), 1)


def undo_symmetries(
    copies: np.ndarray, relabel: Any, rows: Any, columns: Any, transposed: Any
) -> np.ndarray:
    """The originals of `(n, 81)` copies made by the symmetries given as codes (their
    inverse)."""
    copies = np.asarray(copies, dtype=np.uint8).reshape(-1, 81)
    n = len(copies)
    transposed = np.asarray(transposed, dtype=np.bool_)
    grids = copies.reshape(n, 9, 9).copy()
    grids[transposed] = grids[transposed].transpose(0, 2, 1)
    rows, columns = unpack(rows, -1), unpack(columns, -1)
    original = np.empty_like(grids)
    index = np.arange(n)[:, None, None]
    original[index, rows[:, :, None], columns[:, None, :]] = grids
    back = np.zeros((n, 10), np.uint8)
    np.put_along_axis(back, unpack(relabel), np.arange(1, 10, dtype=np.uint8)[None], axis=1)
    return np.take_along_axis(back, original.reshape(n, 81).astype(np.intp), 1)
