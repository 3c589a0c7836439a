"""Checks on whole batches, kept apart from the search code: clashing givens and solution proofs.

A *unit* is a row, a column or a box (`units.CELL_UNITS` numbers them). A board's givens are
valid when no digit repeats inside a unit; an empty board is valid, and a valid board need not
be solvable (these checks never search).

Every check is a numba kernel over the whole batch plus a typed facade that takes and returns
numpy arrays. `first_clash` says where givens clash and `clash_messages` says it in words: the
location is found once, for the rows known to clash, and serves both the message and the
evidence of a finding.
"""

from typing import NamedTuple

import numpy as np

from pipeline.compiled import kernel, kernel_part
from pipeline.kernels.candidates import as_candidates, placed_digits
from pipeline.kernels.units import BOX, CELL_UNITS, COLUMN, ROW

NOT_A_DIGIT = 3  # a value of `Clashes.kind`, after ROW, COLUMN and BOX


@kernel_part
def _first_clash_cell(grid: np.ndarray, masks: np.ndarray) -> int:
    """One pass over the cells with 27 unit bitmasks.

    Returns -1 when the givens are valid, else `kind * 81 + cell` for the first cell (row-major)
    whose digit is already in its row, column or box (checked in that order), or that holds a
    value outside 0..9 (kind `NOT_A_DIGIT`).
    """
    masks[:] = 0
    for cell in range(81):
        d = grid[cell]
        if d == 0:
            continue
        if d > 9:
            return NOT_A_DIGIT * 81 + cell
        bit = 1 << (d - 1)
        u0, u1, u2 = CELL_UNITS[cell, 0], CELL_UNITS[cell, 1], CELL_UNITS[cell, 2]
        if masks[u0] & bit:
            return ROW * 81 + cell
        if masks[u1] & bit:
            return COLUMN * 81 + cell
        if masks[u2] & bit:
            return BOX * 81 + cell
        masks[u0] |= bit
        masks[u1] |= bit
        masks[u2] |= bit
    return -1


@kernel
def _givens_valid_kernel(grids: np.ndarray, out: np.ndarray) -> None:
    masks = np.zeros(27, dtype=np.int32)
    for i in range(grids.shape[0]):
        out[i] = _first_clash_cell(grids[i], masks) < 0


@kernel
def _first_clash_kernel(grids: np.ndarray, out: np.ndarray) -> None:
    masks = np.zeros(27, dtype=np.int32)
    for i in range(grids.shape[0]):
        out[i, :] = -1
        code = _first_clash_cell(grids[i], masks)
        if code < 0:
            continue
        kind = code // 81
        cell = code - 81 * kind
        d = grids[i, cell]
        out[i, 0] = kind
        out[i, 2] = d
        out[i, 3] = cell
        if kind == NOT_A_DIGIT:
            continue
        unit = CELL_UNITS[cell, kind]
        out[i, 1] = unit - 9 * kind
        for other in range(cell):  # the earlier cell of the same unit with the same digit
            if grids[i, other] == d and CELL_UNITS[other, kind] == unit:
                out[i, 3] = other
                out[i, 4] = cell
                break


@kernel
def _verify_kernel(puzzles: np.ndarray, solutions: np.ndarray, out: np.ndarray) -> None:
    masks = np.zeros(27, dtype=np.int32)
    for i in range(puzzles.shape[0]):
        masks[:] = 0
        ok = True
        for cell in range(81):
            d = solutions[i, cell]
            given = puzzles[i, cell]
            if d < 1 or d > 9 or (given != 0 and given != d):
                ok = False
                break
            bit = 1 << (d - 1)
            u0, u1, u2 = CELL_UNITS[cell, 0], CELL_UNITS[cell, 1], CELL_UNITS[cell, 2]
            if (masks[u0] | masks[u1] | masks[u2]) & bit:
                ok = False
                break
            masks[u0] |= bit
            masks[u1] |= bit
            masks[u2] |= bit
        out[i] = ok  # 81 digits without a repeat fill all 27 units with 1..9 exactly once


def _as_grids(grids: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(grids, dtype=np.uint8).reshape(-1, 81)


def givens_valid(grids: np.ndarray) -> np.ndarray:
    """`(n,) bool`: True where no digit repeats in a row, column or box of `(n, 81) uint8` grids.

    0 is a blank; a value above 9 makes the row invalid too (it is no digit).
    """
    grids = _as_grids(grids)
    out = np.empty(grids.shape[0], dtype=np.bool_)
    _givens_valid_kernel(grids, out)
    return out


class Clashes(NamedTuple):
    """The first clash of each grid (cells walked row-major), -1 everywhere when none.

    `kind` is ROW, COLUMN or BOX; `unit` its index 0..8 (boxes numbered row-major); `digit` the
    repeated digit; `cell_a < cell_b` the two cells 0..80 holding it. For a value outside 0..9,
    `kind` is NOT_A_DIGIT, `digit` the value, `cell_a` its cell, and `unit` and `cell_b` are -1.
    """

    kind: np.ndarray  # (n,) int16
    unit: np.ndarray
    digit: np.ndarray
    cell_a: np.ndarray
    cell_b: np.ndarray


def first_clash(grids: np.ndarray) -> Clashes:
    """Where the givens of each `(n, 81) uint8` grid first clash, for error messages."""
    grids = _as_grids(grids)
    out = np.empty((grids.shape[0], 5), dtype=np.int16)
    _first_clash_kernel(grids, out)
    return Clashes(*(np.ascontiguousarray(out[:, k]) for k in range(5)))


def candidates_valid(candidates: np.ndarray) -> np.ndarray:
    """`givens_valid` for pencilmark puzzles (`(n, 81) uint16`, see `pipeline.kernels.candidates`):
    the cells with one candidate are the givens; a value with bits above the ninth is invalid.
    """
    return givens_valid(placed_digits(candidates))


def first_candidates_clash(candidates: np.ndarray) -> Clashes:
    """`first_clash` for pencilmark puzzles: where the cells with one candidate first clash
    (for a value with bits above the ninth, kind `NOT_A_DIGIT`, `digit` the value)."""
    candidates = as_candidates(candidates)
    clashes = first_clash(placed_digits(candidates))
    wild = np.flatnonzero(clashes.kind == NOT_A_DIGIT)
    clashes.digit[wild] = candidates[wild, clashes.cell_a[wild]].astype(np.int16)
    return clashes


def clash_messages(clashes: Clashes) -> list[str | None]:
    """One sentence per grid naming its first clash ("row 1 repeats 5 at columns 1 and 3"),
    None where the givens do not clash. Numbers are 1-based, as people count rows."""
    messages: list[str | None] = []
    for kind, unit, digit, a, b in zip(*(c.tolist() for c in clashes), strict=True):
        if kind < 0:
            messages.append(None)
        elif kind == ROW:
            messages.append(
                f"row {unit + 1} repeats {digit} at columns {a % 9 + 1} and {b % 9 + 1}"
            )
        elif kind == COLUMN:
            messages.append(
                f"column {unit + 1} repeats {digit} at rows {a // 9 + 1} and {b // 9 + 1}"
            )
        elif kind == BOX:
            messages.append(
                f"box {unit + 1} repeats {digit} at cells r{a // 9 + 1}c{a % 9 + 1} "
                f"and r{b // 9 + 1}c{b % 9 + 1}"
            )
        else:
            messages.append(f"cell {a} holds {digit}, not a digit")
    return messages


def verify_solutions(puzzles: np.ndarray, solutions: np.ndarray) -> np.ndarray:
    """`(n,) bool`: each solution is complete, obeys every unit and keeps its puzzle's givens."""
    puzzles = _as_grids(puzzles)
    solutions = _as_grids(solutions)
    if puzzles.shape != solutions.shape:
        raise ValueError(f"{puzzles.shape[0]} puzzles but {solutions.shape[0]} solutions")
    out = np.empty(puzzles.shape[0], dtype=np.bool_)
    _verify_kernel(puzzles, solutions, out)
    return out


__all__ = [
    "BOX",
    "COLUMN",
    "Clashes",
    "NOT_A_DIGIT",
    "ROW",
    "candidates_valid",
    "clash_messages",
    "first_candidates_clash",
    "first_clash",
    "givens_valid",
    "verify_solutions",
]
