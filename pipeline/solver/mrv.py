"""Strategy `mrv`: seed 002's search, the most constrained cell first, no propagation.

At every step the search looks at the cells that are still empty and chooses one with the fewest
allowed digits ("minimum remaining values"; ties go to the first cell in row-major order); if
some empty cell allows no digit the branch is a dead end. The chosen cell's digits are tried in
ascending order. Used digits live in 27 unit bitmasks (rows 0..8, columns 9..17, boxes 18..26);
the recursion of the seed becomes an explicit stack of frames (chosen cell, digits not yet tried).

Counting (see `pipeline.solver`): the root is one node and every digit placed is one more node;
it is also a guess when the chosen cell allowed two or more digits. Forced cells (one digit) are
placed by choice here, so they are nodes but not guesses. A dead end adds no node.
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
    frame_cell: np.ndarray,
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
    # empties[:m - depth] are the cells no frame holds yet, in no particular order: a frame
    # swaps its cell to the end of that list, and backing up out of it puts it back
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
            else:  # open a frame at the empty cell with the fewest allowed digits
                # key = count * 128 + cell: its minimum is the first cell in row-major order
                # with the fewest digits; (key * 128 + j) lets one branch-free min() find both
                open_cells = m - depth
                best = 1 << 30
                for j in range(open_cells):
                    cell = empties[j]
                    allowed = _ALL & ~(used[_ROW[cell]] | used[_COL[cell]] | used[_BOX[cell]])
                    best = min(best, (popcount(allowed) * 128 + cell) * 128 + j)
                    if best < 16384:  # no digit allowed: a dead end, no need to look further
                        break
                best_key = best >> 7
                best_j = best & 127
                cell = empties[best_j]  # the frame takes the cell off the open list
                empties[best_j] = empties[open_cells - 1]
                empties[open_cells - 1] = cell
                frame_cell[depth] = cell
                frame_todo[depth] = _ALL & ~(used[_ROW[cell]] | used[_COL[cell]] | used[_BOX[cell]])
                frame_many[depth] = best_key >= 256
                depth += 1
        if depth == 0:  # every branch tried
            break
        top = depth - 1
        cell = frame_cell[top]
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
    frame_cell = np.zeros(81, dtype=np.int16)
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
            frame_cell,
            frame_todo,
            frame_many,
            solutions[i],
        )
        solve_ns[i] = now_ns(clock) - t0
        verdicts[i] = verdict
        nodes[i] = n
        guesses[i] = g
