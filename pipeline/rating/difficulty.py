"""Search effort of a puzzle, independent of how it happens to be written: the mean number of
guesses the solver needs for the first solution over `samples` random symmetries of the puzzle.

This is the convention of the Kaggle "3 million Sudoku puzzles with ratings" set, whose
`difficulty` column is tdoku's average guesses over random permutations (tdoku's
`run_benchmark -a -b`); we use our own `fast` solver, so figures are close to, not equal to,
tdoku's (benchmarks/rating_bench.py measures the rank correlation).

Reproducible and independent of batches: the symmetries of a puzzle are drawn from a random
stream keyed by the seed and the puzzle's own 81 cells (a 64-bit hash), so the same puzzle gets
the same rating in any batch, at any row, on any number of workers (and two copies of a puzzle
get the same rating). Each symmetry relabels the digits, permutes the bands, the rows inside
each band, the stacks and the columns inside each stack (tdoku's `PermuteSudoku`), and
transposes with probability 1/2 (our solver treats rows and columns differently).
"""

import numpy as np

from pipeline.compiled import kernel
from pipeline.limits import MAX_RATE_SAMPLES
from pipeline.solver import codes, solve_grids
from pipeline.solver.candidates import as_candidates

CHUNK = 4096  # puzzles per solver call at 16 samples: bounds the memory of the copies

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)
_FNV_OFFSET = np.uint64(0xCBF29CE484222325)
_FNV_PRIME = np.uint64(0x100000001B3)


@kernel
def _mix(z: np.uint64) -> np.uint64:
    """splitmix64's output function: a 64-bit value to a well-mixed one."""
    z = (z ^ (z >> np.uint64(30))) * _MIX1
    z = (z ^ (z >> np.uint64(27))) * _MIX2
    return z ^ (z >> np.uint64(31))


@kernel
def _below(state: np.ndarray, bound: int) -> int:
    """Next number of the splitmix64 stream in `state[0]`, as an int in [0, bound)."""
    state[0] += _GOLDEN
    return int((_mix(state[0]) >> np.uint64(11)) % np.uint64(bound))


@kernel
def _shuffle(state: np.ndarray, items: np.ndarray, start: int, count: int) -> None:
    """Fisher-Yates shuffle of `items[start:start + count]`."""
    for i in range(count - 1, 0, -1):
        j = _below(state, i + 1)
        items[start + i], items[start + j] = items[start + j], items[start + i]


@kernel
def _line_order(state: np.ndarray, order: np.ndarray) -> None:
    """A random order of the 9 rows (or columns): bands shuffled, rows shuffled inside each."""
    bands = np.arange(3)
    _shuffle(state, bands, 0, 3)
    for b in range(3):
        for r in range(3):
            order[3 * b + r] = 3 * bands[b] + r
        _shuffle(state, order, 3 * b, 3)


@kernel
def puzzle_key(grid: np.ndarray, seed: int) -> np.uint64:
    """A 64-bit key of a puzzle's cells and the seed (FNV-1a over the cells, then mixed)."""
    h = _FNV_OFFSET ^ _mix(np.uint64(seed))
    for cell in range(81):
        h = (h ^ np.uint64(grid[cell])) * _FNV_PRIME
    return _mix(h)


@kernel
def draw_symmetry(
    key: np.uint64, sample: int, digits: np.ndarray, rows: np.ndarray, columns: np.ndarray
) -> bool:
    """Symmetry number `sample` of the puzzle with this key: fills the relabelling `digits`
    (10,) (0 stays 0), the new place of each row `rows` (9,) and of each column `columns` (9,);
    returns whether to transpose too."""
    state = np.empty(1, dtype=np.uint64)
    state[0] = _mix(np.uint64(key) + np.uint64(sample) * _GOLDEN)  # all uint64: no float
    digits[0] = 0
    for d in range(1, 10):
        digits[d] = d
    _shuffle(state, digits, 1, 9)
    _line_order(state, rows)
    _line_order(state, columns)
    return _below(state, 2) == 1


@kernel
def symmetric_copies(grids: np.ndarray, seed: int, samples: int, out: np.ndarray) -> None:
    """Write `samples` random symmetries of each of `grids (n, 81)` to `out (n * samples, 81)`:
    copy `s` of puzzle `i` at row `i * samples + s`, cell (r, c) moved to (rows[r], columns[c])
    (or (columns[c], rows[r]) when transposed), digits relabelled."""
    digits = np.empty(10, dtype=np.uint8)
    rows = np.empty(9, dtype=np.int64)
    columns = np.empty(9, dtype=np.int64)
    for i in range(grids.shape[0]):
        key = puzzle_key(grids[i], seed)
        for s in range(samples):
            transpose = draw_symmetry(key, s, digits, rows, columns)
            copy = out[i * samples + s]
            for r in range(9):
                for c in range(9):
                    to = 9 * columns[c] + rows[r] if transpose else 9 * rows[r] + columns[c]
                    copy[to] = digits[grids[i, 9 * r + c]]


@kernel
def symmetric_candidate_copies(
    candidates: np.ndarray, seed: int, samples: int, out: np.ndarray
) -> None:
    """`symmetric_copies` of pencilmark puzzles (`(n, 81) uint16`, bit d-1 for digit d): the
    same symmetries, each cell's candidate digits relabelled. The key reads a cell with one
    candidate as that digit and a cell with all nine as a blank (others as 10 + their marks),
    so a grid written as pencilmarks draws the grid's own symmetries."""
    digits = np.empty(10, dtype=np.uint8)
    rows = np.empty(9, dtype=np.int64)
    columns = np.empty(9, dtype=np.int64)
    view = np.empty(81, dtype=np.int64)
    for i in range(candidates.shape[0]):
        for cell in range(81):
            marks = np.int64(candidates[i, cell])
            if marks == 0x1FF:
                view[cell] = 0
            elif marks != 0 and marks & (marks - 1) == 0:
                view[cell] = 1
                while marks > 1:
                    marks >>= 1
                    view[cell] += 1
            else:
                view[cell] = 10 + marks
        key = puzzle_key(view, seed)
        for s in range(samples):
            transpose = draw_symmetry(key, s, digits, rows, columns)
            copy = out[i * samples + s]
            for r in range(9):
                for c in range(9):
                    to = 9 * columns[c] + rows[r] if transpose else 9 * rows[r] + columns[c]
                    marks = candidates[i, 9 * r + c]
                    moved = 0
                    for d in range(9):
                        if marks >> d & 1:
                            moved |= 1 << (digits[d + 1] - 1)
                    copy[to] = moved | (marks & ~0x1FF)  # bits above the ninth stay: invalid


def difficulty_grids(
    grids: np.ndarray,
    samples: int = 16,
    seed: int = 0,
    skip: np.ndarray | None = None,
    max_nodes: int | None = None,
    candidates: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Mean guesses for the first solution over `samples` random symmetries of each puzzle.

    Returns `(difficulty (n,) float64, verdicts (n,) int8)`: the verdict of the puzzle's copies
    in `pipeline.solver.codes` (`FOUND` when a solution exists, `MULTIPLE` never appears since
    only the first solution is sought); difficulty is NaN where the verdict is not `FOUND`
    (malformed or skipped rows, clashing givens, no solution, or `max_nodes` spent on a copy).
    `candidates`: pencilmark puzzles instead (`(n, 81) uint16`; `grids` is ignored).
    """
    if not 1 <= samples <= MAX_RATE_SAMPLES:
        raise ValueError(f"samples must be between 1 and {MAX_RATE_SAMPLES:,}, not {samples!r}")
    if candidates is not None:
        puzzles = as_candidates(candidates)
    elif grids is None:
        raise ValueError("difficulty_grids needs grids or candidates")
    else:
        puzzles = np.ascontiguousarray(grids, dtype=np.uint8).reshape(-1, 81)
    n = puzzles.shape[0]
    skip = np.zeros(n, dtype=np.bool_) if skip is None else np.asarray(skip, dtype=np.bool_)
    difficulty = np.full(n, np.nan)
    verdicts = np.full(n, codes.MALFORMED, dtype=np.int8)
    per_call = max(1, CHUNK * 16 // samples)  # puzzles a call: ~CHUNK * 16 copies at most
    copies = np.empty((min(n, per_call) * samples, 81), dtype=puzzles.dtype)
    for start in range(0, n, per_call):
        chunk = puzzles[start : start + per_call]
        k = len(chunk)
        if candidates is None:
            symmetric_copies(chunk, seed, samples, copies)
        else:
            symmetric_candidate_copies(chunk, seed, samples, copies)
        found = solve_grids(
            None if candidates is not None else copies[: k * samples],
            strategy="fast",
            solutions=1,
            max_nodes=max_nodes,
            skip=np.repeat(skip[start : start + k], samples),
            candidates=copies[: k * samples] if candidates is not None else None,
        )
        # a copy's verdict is the puzzle's, except LIMIT, which any copy may hit on its own
        copy_verdicts = found.verdicts.reshape(k, samples)
        verdict = copy_verdicts[:, 0].copy()
        verdict[(copy_verdicts == codes.LIMIT).any(axis=1)] = codes.LIMIT
        verdicts[start : start + k] = verdict
        mean = found.guesses.reshape(k, samples).mean(axis=1)
        difficulty[start : start + k] = np.where(verdict == codes.FOUND, mean, np.nan)
    return difficulty, verdicts
