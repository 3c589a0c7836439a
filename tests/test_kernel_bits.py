"""The vector building blocks of the `fast` kernel (pipeline/kernels/bits.py), against plain
numpy: a grid's cells compared with every value at once, and a board's digits written back."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from numba import njit

from pipeline.kernels.bits import value_masks, write_digits


@njit
def _value_masks(cells: np.ndarray, masks: np.ndarray) -> bool:
    return value_masks(cells, masks)


@njit
def _write_digits(board: np.ndarray, out: np.ndarray) -> None:
    write_digits(board, out)


def _masks_by_numpy(cells: np.ndarray) -> np.ndarray:
    masks = np.zeros(30, np.int64)
    for cell, value in enumerate(cells):
        if value <= 9:
            masks[3 * value + cell // 27] |= 1 << (cell % 27)
    return masks


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 255), min_size=81, max_size=81), st.booleans())
def test_value_masks_are_each_values_cells_band_by_band(
    values: list[int], digits_only: bool
) -> None:
    cells = np.array(values, np.uint8)
    if digits_only:
        cells %= 10
    grids = np.full((3, 81), 200, np.uint8)  # other rows around it: never read
    grids[1] = cells
    masks = np.full(30, -1, np.int64)
    above = _value_masks(grids[1], masks)
    assert above == bool((cells > 9).any())
    assert (masks == _masks_by_numpy(cells)).all()


def test_value_masks_of_a_grids_last_row_read_no_further() -> None:
    grid = np.zeros((2, 81), np.uint8)
    grid[1, 80] = 9
    masks = np.zeros(30, np.int64)
    assert not _value_masks(grid[1], masks)
    assert masks[3 * 9 + 2] == 1 << 26
    assert masks[2] == (1 << 26) - 1


@settings(max_examples=100, deadline=None)
@given(st.permutations(range(1, 10)), st.integers(0, 2**32 - 1))
def test_write_digits_writes_the_board_back_and_nothing_else(digits: list[int], seed: int) -> None:
    rng = np.random.default_rng(seed)
    solution = rng.integers(1, 10, 81).astype(np.uint8)  # any digits: a cell holds one
    solution[:9] = digits
    board = np.zeros(43, np.int64)
    for cell, digit in enumerate(solution):
        board[9 * (cell // 27) + digit - 1] |= 1 << (cell % 27)
    board[27:] = rng.integers(0, 2**62, 16)  # the other slots are not digits: never read
    out = np.full((3, 81), 99, np.uint8)
    _write_digits(board, out[1])
    assert (out[1] == solution).all()
    assert (out[0] == 99).all() and (out[2] == 99).all()
