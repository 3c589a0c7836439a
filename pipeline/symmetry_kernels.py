"""Random symmetries of puzzles and their solutions, drawn and applied a whole batch at a time
in one compiled kernel (numba): what `augment` makes its copies with.

A symmetry here is four things, recorded with every copy so that it can be undone:

* `relabel` (9,): digit d of the original is digit `relabel[d - 1]` of the copy;
* `rows` (9,): row i of the copy (0-based) is row `rows[i]` of the original (the bands
  permuted, and the rows inside each band);
* `columns` (9,): column j of the copy is column `columns[j]` of the original (stacks, and
  the columns inside each stack);
* `transposed`: the copy is then transposed.

That is, `copy[i, j] = relabel[original[rows[i], columns[j]]]`, or, transposed,
`copy[i, j] = relabel[original[rows[j], columns[i]]]` (blanks stay blank). Every symmetry of
the board that keeps rows, columns and boxes (but for the identity on digits, rows and
columns, 2 * 9! * 6^8 of them) is one such four, and each is drawn with the same chance.
`apply_symmetries` and `undo_symmetries` do and undo it in numpy.

Random streams: copy draws of input row `g` come from one SplitMix64 stream keyed by (seed, g)
alone, so a row's copies are the same whatever batch it is in and whichever worker runs it.
A copy whose puzzle equals one already made for the row (a puzzle with symmetries of its own
has fewer distinct images) is drawn again, up to `attempts` times; when none is new the copy
is dropped and the row marked `short`.
"""

from typing import NamedTuple

import numpy as np

from pipeline.compiled import inline_part, kernel

_GAMMA = np.uint64(0x9E3779B97F4A7C15)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)
_FNV_OFFSET = np.uint64(0xCBF29CE484222325)
_FNV_PRIME = np.uint64(0x100000001B3)
ATTEMPTS = 16  # draws per copy before a row is said to have no new image left


@inline_part
def _mix(z: np.uint64) -> np.uint64:
    """SplitMix64's output function (a bijection of 64-bit values)."""
    z = (z ^ (z >> np.uint64(30))) * _MIX1
    z = (z ^ (z >> np.uint64(27))) * _MIX2
    return z ^ (z >> np.uint64(31))


@inline_part
def _below(state: np.ndarray, bound: int) -> int:
    """The next draw of the stream in `state[0]`, as an int in [0, bound) (the high 32 bits
    scaled: no modulo bias worth naming for bounds this small)."""
    state[0] += _GAMMA
    return int(((_mix(state[0]) >> np.uint64(32)) * np.uint64(bound)) >> np.uint64(32))


@inline_part
def _shuffle(state: np.ndarray, items: np.ndarray, start: int, count: int) -> None:
    """Fisher-Yates shuffle of `items[start:start + count]`."""
    for i in range(count - 1, 0, -1):
        j = _below(state, i + 1)
        items[start + i], items[start + j] = items[start + j], items[start + i]


@inline_part
def _line_order(state: np.ndarray, order: np.ndarray, bands: np.ndarray) -> None:
    """A random order of the 9 rows (or columns): bands shuffled, rows shuffled inside each
    (`bands`: room for 3, so that no draw allocates)."""
    for b in range(3):
        bands[b] = b
    _shuffle(state, bands, 0, 3)
    for b in range(3):
        for r in range(3):
            order[3 * b + r] = 3 * bands[b] + r
        _shuffle(state, order, 3 * b, 3)


@inline_part
def _draw(state: np.ndarray, relabel: np.ndarray, rows: np.ndarray, columns: np.ndarray) -> bool:
    """One random symmetry into `relabel`, `rows`, `columns`; returns whether to transpose."""
    for d in range(9):
        relabel[d] = d + 1
    _shuffle(state, relabel, 0, 9)
    _line_order(state, rows, state[1:])  # state[1:4]: the bands' scratch room
    _line_order(state, columns, state[1:])
    return _below(state, 2) == 1


@inline_part
def _apply(
    grid: np.ndarray,
    relabel: np.ndarray,
    rows: np.ndarray,
    columns: np.ndarray,
    transposed: bool,
    out: np.ndarray,
) -> None:
    """`out` = the symmetry applied to `grid` (both (81,)); see the module."""
    for i in range(9):
        for j in range(9):
            if transposed:
                digit = grid[9 * rows[j] + columns[i]]
            else:
                digit = grid[9 * rows[i] + columns[j]]
            out[9 * i + j] = relabel[digit - 1] if digit else 0


@inline_part
def _hash(grid: np.ndarray) -> np.uint64:
    h = _FNV_OFFSET
    for cell in range(81):
        h = (h ^ np.uint64(grid[cell])) * _FNV_PRIME
    return h


@inline_part
def _is_new(
    puzzles: np.ndarray,
    hashes: np.ndarray,
    kept: np.ndarray,
    first: int,
    slot: int,
    candidate: np.uint64,
) -> bool:
    """Whether the puzzle in `puzzles[slot]` differs from every kept one in `first..slot-1`."""
    for other in range(first, slot):
        if kept[other] and hashes[other] == candidate:
            same = True
            for cell in range(81):
                if puzzles[other, cell] != puzzles[slot, cell]:
                    same = False
                    break
            if same:
                return False
    return True


@kernel
def augment_kernel(
    puzzles: np.ndarray,
    solutions: np.ndarray,
    groups: np.ndarray,
    seed: int,
    copies: int,
    keep_original: bool,
    attempts: int,
    out_puzzles: np.ndarray,
    out_solutions: np.ndarray,
    relabel: np.ndarray,
    rows: np.ndarray,
    columns: np.ndarray,
    transposed: np.ndarray,
    kept: np.ndarray,
    short: np.ndarray,
) -> None:
    """`copies` random symmetries of each puzzle `puzzles[i]` and its solution, with the
    original first when `keep_original`: slot `i * m + c` (m = copies + keep_original) holds
    copy c (the original at c = 0), `kept` False where no new image was found in `attempts`
    draws (then `short[i]` is True). `groups[i]` keys row i's random stream."""
    m = copies + (1 if keep_original else 0)
    state = np.empty(4, dtype=np.uint64)  # the stream, and room for a shuffle of bands
    hashes = np.empty(puzzles.shape[0] * m, dtype=np.uint64)
    base = _mix(np.uint64(seed) + _GAMMA)
    for i in range(puzzles.shape[0]):
        state[0] = _mix(np.uint64(groups[i]) * _GAMMA + base)
        first = i * m
        short[i] = False
        slot = first
        if keep_original:
            for cell in range(81):
                out_puzzles[slot, cell] = puzzles[i, cell]
                out_solutions[slot, cell] = solutions[i, cell]
            for k in range(9):
                relabel[slot, k] = k + 1
                rows[slot, k] = k
                columns[slot, k] = k
            transposed[slot] = False
            hashes[slot] = _hash(puzzles[i])
            kept[slot] = True
            slot += 1
        for _ in range(copies):
            kept[slot] = False
            for _attempt in range(attempts):
                flip = _draw(state, relabel[slot], rows[slot], columns[slot])
                _apply(puzzles[i], relabel[slot], rows[slot], columns[slot], flip,
                       out_puzzles[slot])  # fmt: skip
                h = _hash(out_puzzles[slot])
                if _is_new(out_puzzles, hashes, kept, first, slot, h):
                    transposed[slot] = flip
                    hashes[slot] = h
                    kept[slot] = True
                    break
            if kept[slot]:
                _apply(solutions[i], relabel[slot], rows[slot], columns[slot],
                       transposed[slot], out_solutions[slot])  # fmt: skip
            else:
                short[i] = True
                for cell in range(81):
                    out_puzzles[slot, cell] = 0
            slot += 1


class Copies(NamedTuple):
    """The copies of a batch, slot `i * m + c` for copy c of row i (see `augment_grids`)."""

    puzzles: np.ndarray  # (n * m, 81) uint8
    solutions: np.ndarray  # (n * m, 81) uint8
    relabel: np.ndarray  # (n * m, 9) uint8, digits 1..9
    rows: np.ndarray  # (n * m, 9) uint8, 0-based rows of the original
    columns: np.ndarray  # (n * m, 9) uint8, 0-based columns of the original
    transposed: np.ndarray  # (n * m,) bool
    kept: np.ndarray  # (n * m,) bool: False where no new image was found
    short: np.ndarray  # (n,) bool: a row with a copy not kept


def augment_grids(
    puzzles: np.ndarray,
    solutions: np.ndarray,
    groups: np.ndarray,
    seed: int,
    copies: int,
    keep_original: bool = False,
    attempts: int = ATTEMPTS,
) -> Copies:
    """`copies` random symmetries of each of `puzzles (n, 81)` and of its solution, drawn from
    the stream of (seed, `groups[i]`), distinct where the puzzle has that many images; the
    original first when `keep_original` (see the module). Slot `i * m + c` holds copy `c` of
    row i, `m = copies + keep_original`."""
    puzzles = np.ascontiguousarray(puzzles, dtype=np.uint8).reshape(-1, 81)
    solutions = np.ascontiguousarray(solutions, dtype=np.uint8).reshape(-1, 81)
    groups = np.ascontiguousarray(groups, dtype=np.int64)
    if not (puzzles.shape == solutions.shape and len(groups) == len(puzzles)):
        raise ValueError("puzzles, solutions and groups must have one row each per puzzle")
    if copies < 0 or attempts < 1:
        raise ValueError(f"copies must be >= 0 and attempts >= 1, not {copies}, {attempts}")
    n, m = len(puzzles), copies + bool(keep_original)
    out = Copies(
        np.empty((n * m, 81), np.uint8), np.empty((n * m, 81), np.uint8),
        np.empty((n * m, 9), np.uint8), np.empty((n * m, 9), np.uint8),
        np.empty((n * m, 9), np.uint8), np.empty(n * m, np.bool_), np.empty(n * m, np.bool_),
        np.empty(n, np.bool_),
    )  # fmt: skip
    seed_bits = int(seed) & (2**64 - 1)  # any int: its low 64 bits key the streams
    augment_kernel(puzzles, solutions, groups, np.uint64(seed_bits), copies, bool(keep_original),
                   attempts, *out)  # fmt: skip
    return out


def apply_symmetries(
    grids: np.ndarray,
    relabel: np.ndarray,
    rows: np.ndarray,
    columns: np.ndarray,
    transposed: np.ndarray,
) -> np.ndarray:
    """Symmetries applied to `(n, 81)` grids (numpy; the module says how they read)."""
    grids = np.asarray(grids, dtype=np.uint8).reshape(-1, 81)
    n = len(grids)
    rows, columns = np.asarray(rows, np.intp), np.asarray(columns, np.intp)
    cells = (rows[:, :, None] * 9 + columns[:, None, :]).reshape(n, 81)
    flipped = (rows[:, None, :] * 9 + columns[:, :, None]).reshape(n, 81)
    transposed = np.asarray(transposed, dtype=np.bool_)
    cells[transposed] = flipped[transposed]
    digits = np.zeros((n, 10), np.uint8)
    digits[:, 1:] = relabel
    return np.take_along_axis(digits, np.take_along_axis(grids, cells, 1).astype(np.intp), 1)


def undo_symmetries(
    copies: np.ndarray,
    relabel: np.ndarray,
    rows: np.ndarray,
    columns: np.ndarray,
    transposed: np.ndarray,
) -> np.ndarray:
    """The originals of `(n, 81)` copies made by the symmetries given (their inverse)."""
    copies = np.asarray(copies, dtype=np.uint8).reshape(-1, 81)
    n = len(copies)
    transposed = np.asarray(transposed, dtype=np.bool_)
    grids = copies.reshape(n, 9, 9).copy()
    grids[transposed] = grids[transposed].transpose(0, 2, 1)
    rows, columns = np.asarray(rows, np.intp), np.asarray(columns, np.intp)
    original = np.empty_like(grids)
    index = np.arange(n)[:, None, None]
    original[index, rows[:, :, None], columns[:, None, :]] = grids
    back = np.zeros((n, 10), np.uint8)
    np.put_along_axis(back, np.asarray(relabel, np.intp), np.arange(1, 10, dtype=np.uint8)[None],
                      axis=1)  # fmt: skip
    return np.take_along_axis(back, original.reshape(n, 81).astype(np.intp), 1)
