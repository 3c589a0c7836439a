"""Puzzles made into groups of themselves and their random symmetric copies, as HRM's
`build_sudoku_dataset.py` makes its training set (`--num-aug K`): the examples of a group are
the puzzle first, then up to K distinct copies (its solution moved alike), drawn by
`symmetry_kernels.augment_grids` from the stream of (seed, the row's key) alone, so that a
group is the same whatever batch, worker or order it comes in.

    grouped = grouped_copies(puzzles, solutions, keys, copies=8, seed=1)
    grouped.puzzles, grouped.solutions    # (examples, 81) uint8, group after group
    grouped.sizes                         # examples per group: copies + 1, fewer when short

    room = copies_room(4096, 8 + 1)       # arrays reused chunk after chunk (no new pages)
    grouped = grouped_copies(puzzles, solutions, keys, copies=8, seed=1, room=room)
"""

from dataclasses import dataclass

import numpy as np

from pipeline.symmetry_kernels import ATTEMPTS, Copies, augment_grids


@dataclass(frozen=True)
class GroupedCopies:
    """Groups of examples, one group per input row, in the rows' order."""

    puzzles: np.ndarray  # (k, 81) uint8, 0 a blank
    solutions: np.ndarray  # (k, 81) uint8
    sizes: np.ndarray  # (n,) int64: examples of each row's group (1 + its distinct copies)
    of_row: np.ndarray  # (k,) int64: the row each example is of
    copy: np.ndarray  # (k,) int32: 0 for the puzzle itself, 1..K for its copies
    short: int  # rows with fewer distinct copies than asked (a puzzle with symmetries)


def grouped_copies(
    puzzles: np.ndarray,
    solutions: np.ndarray,
    keys: np.ndarray,
    copies: int,
    seed: int,
    attempts: int = ATTEMPTS,
    room: Copies | None = None,
    offset: int = 0,
) -> GroupedCopies:
    """Each row of `puzzles (n, 81)` followed by `copies` random symmetries of it (and of its
    solution), distinct where it has that many images; `keys (n,)`: what keys each row's
    random stream with `seed` (a stable hash of the puzzle, say: not its position).

    `room` (`symmetry_kernels.copies_room(n, copies + 1)` or larger): arrays the copies are
    made in, reused from one call to the next; the grids returned are then views of it,
    valid until it is used again. With no copies, the grids returned are `puzzles` and
    `solutions` themselves (`offset` not added). `offset`: added to every cell of the groups
    made (`augment_grids`: 1 for HRM's tokens)."""
    n = len(puzzles)
    if copies == 0:
        rows = np.arange(n, dtype=np.int64)
        return GroupedCopies(
            np.asarray(puzzles, np.uint8),
            np.asarray(solutions, np.uint8),
            np.ones(n, np.int64),
            rows,
            np.zeros(n, np.int32),
            0,
        )
    made = augment_grids(
        puzzles,
        solutions,
        np.asarray(keys, np.int64),
        seed,
        copies,
        keep_original=True,
        attempts=attempts,
        room=room,
        offset=offset,
    )
    m = copies + 1
    kept = made.kept
    if kept.all():
        puzzles_out, solutions_out, slots = made.puzzles, made.solutions, None
    else:
        slots = np.flatnonzero(kept)
        puzzles_out, solutions_out = made.puzzles[slots], made.solutions[slots]
    sizes = kept.reshape(n, m).sum(axis=1, dtype=np.int64)
    if slots is None:
        of_row = np.repeat(np.arange(n, dtype=np.int64), m)
        copy = np.tile(np.arange(m, dtype=np.int32), n)
    else:
        of_row, copy = slots // m, (slots % m).astype(np.int32)
    return GroupedCopies(puzzles_out, solutions_out, sizes, of_row, copy, int(made.short.sum()))
