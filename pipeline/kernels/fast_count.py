"""Counting without visiting: a `fast` board stuck with four unsolved cells has two solutions
(counted at once, only when counting beyond 2, so that no solution needs writing).

At a fixed point of propagation (no naked or hidden single left), every row, column and box
holding an unsolved cell holds at least two (one alone would be a hidden single). Four unsolved
cells can only be two rows by two columns spread over two boxes, and when each has exactly two
candidates they are the same two digits, the ones the rows, columns and boxes still miss (a
row's two cells can only take its two missing digits): a deadly rectangle, with exactly two
solutions, the two diagonals. The search would branch there and propagate twice to reach them;
on 17-clue puzzles with two clues removed (tens of thousands of solutions each) most branch
points are such rectangles.

Measured and not kept: the general case, a "bivalue universal grave" of any size (every
unsolved cell with two candidates, every missing digit of a unit with two cells: 0 or 2^k
solutions, k its connected groups, by a union-find with parities over the unit pairs). Cutting
the nodes per solution from 2.03 to 1.21 on that set, it still made counting 1.5x slower: about
250 ns a call (two passes over cells, units and digits with data-dependent branches), more
than the branch and propagations it saves.
"""

import numpy as np

from pipeline.compiled import kernel_part
from pipeline.kernels.bits import popcount
from pipeline.kernels.fast_board import UNSOLVED


@kernel_part
def count_rectangle(board: np.ndarray) -> int:
    """2 when the (stuck) board's unsolved cells are four cells with two candidates each (a
    deadly rectangle, see the module), else -1: the search branches as usual."""
    if (
        popcount(board[UNSOLVED]) + popcount(board[UNSOLVED + 1]) + popcount(board[UNSOLVED + 2])
        != 4
    ):
        return -1
    for band in range(3):
        unsolved = board[UNSOLVED + band]
        if unsolved == 0:
            continue
        once = 0
        twice = 0
        thrice = 0
        for digit in range(9):
            cells = board[9 * band + digit] & unsolved
            thrice |= twice & cells
            twice |= once & cells
            once |= cells
        if thrice or twice != unsolved:
            return -1
    return 2
