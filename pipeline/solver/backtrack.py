"""Strategy `backtrack`: seed 000's search, the plain reference every other strategy must match.

The empty cells are filled in row-major order, each with the digits its row, column and box
still allow, tried in ascending order; a placement is undone as soon as the branch below it
fails. Used digits live in 27 unit bitmasks (rows 0..8, columns 9..17, boxes 18..26). The
recursion of the seed becomes an explicit stack: frame k holds the k-th empty cell and the
digits not yet tried there.

Counting (see `pipeline.solver`): the root is one node and every digit placed is one more node;
it is also a guess when the cell allowed two or more digits when the search reached it (its
frame was opened). A cell that allows no digit is a dead end: no node, the search backs up.
"""

import numpy as np
from numba import njit

from pipeline.solver import codes
from pipeline.solver.bits import lowest_bit_index, now_ns, popcount

_ALL = 0x1FF  # digits 1..9 as bits 0..8
# the unit numbers of each cell (numba freezes these globals into the compiled code)
_ROW = np.array([cell // 9 for cell in range(81)], dtype=np.int64)
_COL = np.array([9 + cell % 9 for cell in range(81)], dtype=np.int64)
_BOX = np.array([18 + cell // 27 * 3 + cell % 9 // 3 for cell in range(81)], dtype=np.int64)


@njit(nogil=True, cache=True)
def _search(
    grid: np.ndarray,
    max_solutions: int,
    max_nodes: int,
    board: np.ndarray,
    used: np.ndarray,
    empties: np.ndarray,
    frame_todo: np.ndarray,
    frame_many: np.ndarray,
    solution: np.ndarray,
) -> tuple[int, int, int]:
    """Search one puzzle whose givens do not clash; returns (verdict, nodes, guesses).

    Writes the first solution found into `solution` (zeros when none); the other arrays are
    scratch of the sizes the kernel allocates.
    """
    used[:] = 0
    solution[:] = 0
    m = 0
    for cell in range(81):
        d = grid[cell]
        board[cell] = d
        if d == 0:
            empties[m] = cell
            m += 1
        else:
            bit = 1 << (d - 1)
            used[_ROW[cell]] |= bit
            used[_COL[cell]] |= bit
            used[_BOX[cell]] |= bit

    nodes = 1  # the root
    guesses = 0
    found = 0
    hit_limit = False
    depth = 0  # open frames; frame depth - 1 is the top, depth cells are filled
    opening = True
    while True:
        if opening:
            opening = False
            if depth == m:  # every cell filled: a solution
                found += 1
                if found == 1:
                    solution[:] = board
                if found >= max_solutions:
                    break
            else:  # open a frame at the next empty cell in row-major order
                cell = empties[depth]
                allowed = _ALL & ~(used[_ROW[cell]] | used[_COL[cell]] | used[_BOX[cell]])
                frame_todo[depth] = allowed
                frame_many[depth] = popcount(allowed) >= 2
                depth += 1
        if depth == 0:  # every branch tried
            break
        top = depth - 1
        cell = empties[top]
        r = _ROW[cell]
        c = _COL[cell]
        b = _BOX[cell]
        d = board[cell]
        if d != 0:  # undo the digit tried last in this frame
            keep = ~(1 << (d - 1))
            used[r] &= keep
            used[c] &= keep
            used[b] &= keep
            board[cell] = 0
        todo = frame_todo[top]
        if todo == 0:  # no digit left here: back up
            depth -= 1
            continue
        if max_nodes > 0 and nodes >= max_nodes:
            hit_limit = True
            break
        k = lowest_bit_index(todo)
        bit = 1 << k
        frame_todo[top] = todo ^ bit
        board[cell] = k + 1
        used[r] |= bit
        used[c] |= bit
        used[b] |= bit
        nodes += 1
        if frame_many[top]:
            guesses += 1
        opening = True

    if hit_limit:
        verdict = codes.LIMIT
    elif found == 0:
        verdict = codes.UNSOLVABLE
    elif found >= 2:
        verdict = codes.MULTIPLE
    else:
        verdict = codes.SOLVED
    return verdict, nodes, guesses


@njit(nogil=True, cache=True)
def solve_kernel(
    grids: np.ndarray,
    skip: np.ndarray,
    max_solutions: int,
    max_nodes: int,
    verdicts: np.ndarray,
    solutions: np.ndarray,
    nodes: np.ndarray,
    guesses: np.ndarray,
    solve_ns: np.ndarray,
) -> None:
    """Solve every row of `grids` not marked in `skip`; the contract is in `pipeline.solver`."""
    board = np.zeros(81, dtype=np.uint8)
    used = np.zeros(27, dtype=np.int32)
    empties = np.zeros(81, dtype=np.int16)
    frame_todo = np.zeros(81, dtype=np.int32)
    frame_many = np.zeros(81, dtype=np.bool_)
    clock = np.zeros(2, dtype=np.int64)
    for i in range(grids.shape[0]):
        if skip[i]:
            continue
        t0 = now_ns(clock)
        verdict, n, g = _search(
            grids[i],
            max_solutions,
            max_nodes,
            board,
            used,
            empties,
            frame_todo,
            frame_many,
            solutions[i],
        )
        solve_ns[i] = now_ns(clock) - t0
        verdicts[i] = verdict
        nodes[i] = n
        guesses[i] = g
