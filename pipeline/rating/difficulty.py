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
from pipeline.kernels import codes, solve_grids
from pipeline.limits import MAX_RATE_SAMPLES
from pipeline.rating.puzzles import rated_puzzles
from pipeline.splitmix import GAMMA, mix
from pipeline.symmetry_kernels import DRAWS, next_draws
from pipeline.symmetry_kernels import draw_symmetry as draw

CHUNK = 4096  # puzzles per solver call at 16 samples: bounds the memory of the copies

_FNV_OFFSET = np.uint64(0xCBF29CE484222325)
_FNV_PRIME = np.uint64(0x100000001B3)


@kernel
def puzzle_key(grid: np.ndarray, seed: int) -> np.uint64:
    """A 64-bit key of a puzzle's cells and the seed (FNV-1a over the cells, then mixed)."""
    h = _FNV_OFFSET ^ mix(np.uint64(seed))
    for cell in range(81):
        h = (h ^ np.uint64(grid[cell])) * _FNV_PRIME
    return mix(h)


@kernel
def draw_symmetry(
    key: np.uint64, sample: int, digits: np.ndarray, rows: np.ndarray, columns: np.ndarray
) -> bool:
    """Symmetry number `sample` of the puzzle with this key: fills the relabelling `digits`
    (10,) (0 stays 0), the new place of each row `rows` (9,) and of each column `columns` (9,);
    returns whether to transpose too. The draw is augment's (`symmetry_kernels.draw_symmetry`)
    from a stream of its own, its draws taken modulo."""
    draws = np.empty(DRAWS, dtype=np.uint64)
    bands = np.empty(3, dtype=np.int64)  # room for a shuffle of bands
    next_draws(mix(np.uint64(key) + np.uint64(sample) * GAMMA), draws)  # all uint64: no float
    digits[0] = 0
    return draw(draws, digits[1:], rows, columns, bands, True)


@kernel
def _key_view(marks: np.ndarray, view: np.ndarray) -> None:
    """A pencilmark puzzle's cells as its key reads them (`symmetric_copies`): a cell with one
    candidate as that digit, a cell with all nine as a blank, others as 10 + their marks."""
    for cell in range(81):
        m = np.int64(marks[cell])
        if m == 0x1FF:
            view[cell] = 0
        elif m != 0 and m & (m - 1) == 0:
            view[cell] = 1
            while m > 1:
                m >>= 1
                view[cell] += 1
        else:
            view[cell] = 10 + m


@kernel
def symmetric_copies(
    puzzles: np.ndarray, pencilmarks: bool, seed: int, samples: int, out: np.ndarray
) -> None:
    """Write `samples` random symmetries of each of `puzzles (n, 81)` to `out (n * samples,
    81)`: copy `s` of puzzle `i` at row `i * samples + s`, cell (r, c) moved to (rows[r],
    columns[c]) (or (columns[c], rows[r]) when transposed), digits relabelled.

    With `pencilmarks`, the puzzles are `(n, 81) uint16` candidates (bit d-1 for digit d): the
    same symmetries, each cell's candidate digits relabelled. Their key reads a cell with one
    candidate as that digit and a cell with all nine as a blank (`_key_view`), so a grid
    written as pencilmarks draws the grid's own symmetries."""
    digits = np.empty(10, dtype=np.uint8)
    rows = np.empty(9, dtype=np.int64)
    columns = np.empty(9, dtype=np.int64)
    view = np.empty(81, dtype=np.int64)
    for i in range(puzzles.shape[0]):
        if pencilmarks:
            _key_view(puzzles[i], view)
            key = puzzle_key(view, seed)
        else:
            key = puzzle_key(puzzles[i], seed)
        for s in range(samples):
            transpose = draw_symmetry(key, s, digits, rows, columns)
            copy = out[i * samples + s]
            for r in range(9):
                for c in range(9):
                    to = 9 * columns[c] + rows[r] if transpose else 9 * rows[r] + columns[c]
                    cell = puzzles[i, 9 * r + c]
                    if not pencilmarks:
                        copy[to] = digits[cell]
                        continue
                    moved = 0
                    for d in range(9):
                        if cell >> d & 1:
                            moved |= 1 << (digits[d + 1] - 1)
                    copy[to] = moved | (cell & ~0x1FF)  # bits above the ninth stay: invalid


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
    in `pipeline.kernels.codes` (`FOUND` when a solution exists, `MULTIPLE` never appears since
    only the first solution is sought); difficulty is NaN where the verdict is not `FOUND`
    (malformed or skipped rows, clashing givens, no solution, or `max_nodes` spent on a copy).
    `candidates`: pencilmark puzzles instead (`(n, 81) uint16`; `grids` is ignored).
    """
    if not 1 <= samples <= MAX_RATE_SAMPLES:
        raise ValueError(f"samples must be between 1 and {MAX_RATE_SAMPLES:,}, not {samples!r}")
    puzzles, skip = rated_puzzles(grids, candidates, skip, "difficulty_grids")
    pencilmarks = candidates is not None
    n = puzzles.shape[0]
    difficulty = np.full(n, np.nan)
    verdicts = np.full(n, codes.MALFORMED, dtype=np.int8)
    per_call = max(1, CHUNK * 16 // samples)  # puzzles a call: ~CHUNK * 16 copies at most
    copies = np.empty((min(n, per_call) * samples, 81), dtype=puzzles.dtype)
    for start in range(0, n, per_call):
        chunk = puzzles[start : start + per_call]
        k = len(chunk)
        symmetric_copies(chunk, pencilmarks, seed, samples, copies)
        made = copies[: k * samples]
        found = solve_grids(
            None if pencilmarks else made,
            strategy="fast",
            solutions=1,
            max_nodes=max_nodes,
            skip=np.repeat(skip[start : start + k], samples),
            candidates=made if pencilmarks else None,
        )
        # a copy's verdict is the puzzle's, except LIMIT, which any copy may hit on its own
        copy_verdicts = found.verdicts.reshape(k, samples)
        verdict = copy_verdicts[:, 0].copy()
        verdict[(copy_verdicts == codes.LIMIT).any(axis=1)] = codes.LIMIT
        verdicts[start : start + k] = verdict
        mean = found.guesses.reshape(k, samples).mean(axis=1)
        difficulty[start : start + k] = np.where(verdict == codes.FOUND, mean, np.nan)
    return difficulty, verdicts
