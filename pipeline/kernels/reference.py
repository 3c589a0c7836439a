"""The reference strategies, one search loop: `backtrack` and `mrv`, no propagation.

* `backtrack` fills the empty cells in row-major order (the plain backtracker that fills a grid
  in place, the one every other strategy must match);
* `mrv` ("minimum remaining values") chooses, at every step, the empty cell with the fewest
  allowed digits (ties: the first in row-major order); some empty cell allowing no digit is a
  dead end.

Either way the chosen cell's digits are tried in ascending order and a placement is undone as
soon as the branch below it fails. Used digits live in 27 unit bitmasks (`units.CELL_UNITS`);
the recursion becomes an explicit stack of frames (the chosen cell, the digits not yet tried).
The two differ only in how a frame chooses its cell, a plain bool argument of the one loop (a
bool keeps numba's on-disk cache working; a choice function passed in would miss it in every
new process).

Counting (see `pipeline.kernels`): the root is one node and every digit placed is one more node;
it is also a guess when the cell allowed two or more digits when its frame was opened. Cells
with one digit are placed by choice here, so they are nodes but not guesses. A cell that allows
no digit is a dead end: no node, the search backs up.

Givens are checked while they are loaded: a digit already used in its row, column or box, or a
value above 9, makes the verdict `INVALID` without a search (nodes 0, time 0).
"""

import numpy as np

from pipeline.compiled import kernel, kernel_part
from pipeline.kernels import codes
from pipeline.kernels.bits import lowest_bit_index, now_ns, popcount
from pipeline.kernels.units import ALL_DIGITS, CELL_UNITS


@kernel
def _load(grid: np.ndarray, board: np.ndarray, used: np.ndarray, empties: np.ndarray) -> int:
    """Copy the givens into `board` and `used`; returns the number of empty cells (listed in
    `empties` in row-major order), or -1 when the givens clash or hold a value above 9."""
    used[:] = 0
    m = 0
    for cell in range(81):
        d = grid[cell]
        board[cell] = d
        if d == 0:
            empties[m] = cell
            m += 1
            continue
        if d > 9:
            return -1
        bit = 1 << (d - 1)
        r, c, b = CELL_UNITS[cell, 0], CELL_UNITS[cell, 1], CELL_UNITS[cell, 2]
        if (used[r] | used[c] | used[b]) & bit:
            return -1
        used[r] |= bit
        used[c] |= bit
        used[b] |= bit
    return m


@kernel
def _allowed(used: np.ndarray, cell: int, candidates: np.ndarray) -> int:
    return candidates[cell] & ~(
        used[CELL_UNITS[cell, 0]] | used[CELL_UNITS[cell, 1]] | used[CELL_UNITS[cell, 2]]
    )


@kernel
def _search(
    grid: np.ndarray,
    candidates: np.ndarray,
    most_constrained: bool,
    max_solutions: int,
    max_nodes: int,
    board: np.ndarray,
    used: np.ndarray,
    empties: np.ndarray,
    frame_cell: np.ndarray,
    frame_todo: np.ndarray,
    frame_many: np.ndarray,
    solution: np.ndarray,
) -> tuple[int, int, int, int]:
    """Search one puzzle; returns (verdict, nodes, guesses, solutions found: up to
    `max_solutions`). `most_constrained`: mrv's choice
    of cell, else row-major order (backtrack). `candidates`: (81,) the digits each cell may
    take at most (all nine for a grid; a pencilmark puzzle's own, see `_from_candidates`).

    Writes the first solution found into `solution` (zeros when none); the other arrays are
    scratch of the sizes the kernel allocates.
    """
    solution[:] = 0
    m = _load(grid, board, used, empties)
    if m < 0:
        return codes.INVALID, 0, 0, 0

    nodes = 1  # the root
    guesses = 0
    found = 0
    hit_limit = False
    depth = 0  # open frames; frame depth - 1 is the top, depth cells are filled
    # mrv: empties[:m - depth] are the cells no frame holds yet, in no particular order: a frame
    # swaps its cell to the end of that list, and backing up out of it puts it back.
    # backtrack: empties stays in row-major order and frame k holds empties[k].
    opening = True
    while True:
        if opening:
            opening = False
            if depth == m:  # every cell filled: a solution
                found += 1
                if found == 1:
                    # cell by cell: `solution[:] = board` compiles numba's shape-mismatch
                    # message (str, repr, f-strings), 2.2 of this kernel's 5.0 CPU s
                    for cell in range(81):
                        solution[cell] = board[cell]
                if found >= max_solutions:
                    break
            else:
                if most_constrained:
                    # key = count * 128 + cell: its minimum is the first cell in row-major order
                    # with the fewest digits; (key * 128 + j) lets one branch-free min() find both
                    open_cells = m - depth
                    best = 1 << 30
                    for j in range(open_cells):
                        cell = empties[j]
                        options = popcount(_allowed(used, cell, candidates))
                        best = min(best, (options * 128 + cell) * 128 + j)
                        if best < 16384:  # no digit allowed: a dead end, no need to look further
                            break
                    best_j = best & 127
                    cell = empties[best_j]  # the frame takes the cell off the open list
                    empties[best_j] = empties[open_cells - 1]
                    empties[open_cells - 1] = cell
                else:
                    cell = empties[depth]
                allowed = _allowed(used, cell, candidates)
                frame_cell[depth] = cell
                frame_todo[depth] = allowed
                frame_many[depth] = popcount(allowed) >= 2
                depth += 1
        if depth == 0:  # every branch tried
            break
        top = depth - 1
        cell = frame_cell[top]
        r, c, b = CELL_UNITS[cell, 0], CELL_UNITS[cell, 1], CELL_UNITS[cell, 2]
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
    return verdict, nodes, guesses, found


@kernel
def reference_kernel(
    grids: np.ndarray,
    skip: np.ndarray,
    most_constrained: bool,
    max_solutions: int,
    max_nodes: int,
    verdicts: np.ndarray,
    solutions: np.ndarray,
    nodes: np.ndarray,
    guesses: np.ndarray,
    solve_ns: np.ndarray,
    counts: np.ndarray,
) -> None:
    """Solve every row of `grids` not marked in `skip` with the `mrv` search
    (`most_constrained`) or the `backtrack` one; the contract is in `pipeline.kernels`."""
    candidates = np.full((1, 81), ALL_DIGITS, dtype=np.int32)
    puzzles = (grids, candidates, False)
    results = (verdicts, solutions, nodes, guesses, solve_ns, counts)
    _search_all(puzzles, skip, most_constrained, max_solutions, max_nodes, results)


@kernel
def reference_candidates_kernel(
    candidates: np.ndarray,
    skip: np.ndarray,
    most_constrained: bool,
    max_solutions: int,
    max_nodes: int,
    verdicts: np.ndarray,
    solutions: np.ndarray,
    nodes: np.ndarray,
    guesses: np.ndarray,
    solve_ns: np.ndarray,
    counts: np.ndarray,
) -> None:
    """`reference_kernel` for pencilmark puzzles, `(n, 81) uint16` candidates in place of the
    grids: a cell with one candidate is a given, the others take only their candidates."""
    grids = np.zeros((candidates.shape[0], 81), dtype=np.uint8)
    allowed = np.zeros(candidates.shape, dtype=np.int32)
    for i in range(candidates.shape[0]):
        for cell in range(81):
            c = np.int32(candidates[i, cell])
            allowed[i, cell] = c
            if c > ALL_DIGITS:
                grids[i, cell] = 10  # no digit: INVALID, as a value above 9 in a grid
            elif c != 0 and c & (c - 1) == 0:
                grids[i, cell] = lowest_bit_index(c) + 1
    puzzles = (grids, allowed, True)
    results = (verdicts, solutions, nodes, guesses, solve_ns, counts)
    _search_all(puzzles, skip, most_constrained, max_solutions, max_nodes, results)


@kernel_part
def _search_all(
    puzzles: tuple[np.ndarray, np.ndarray, bool],
    skip: np.ndarray,
    most_constrained: bool,
    max_solutions: int,
    max_nodes: int,
    results: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray],
) -> None:
    """The batch loop of both kernels: `puzzles` are (grids, candidates, one row of
    candidates per grid or a single row for all)."""
    grids, candidates, per_row = puzzles
    verdicts, solutions, nodes, guesses, solve_ns, counts = results
    board = np.zeros(81, dtype=np.uint8)
    used = np.zeros(27, dtype=np.int32)
    empties = np.zeros(81, dtype=np.int16)
    frame_cell = np.zeros(81, dtype=np.int16)
    frame_todo = np.zeros(81, dtype=np.int32)
    frame_many = np.zeros(81, dtype=np.bool_)
    clock = np.zeros(2, dtype=np.int64)
    t0 = now_ns(clock)  # one clock read a puzzle: its time runs from the previous read
    for i in range(grids.shape[0]):
        if skip[i]:
            continue
        verdict, n, g, found = _search(
            grids[i],
            candidates[i if per_row else 0],
            most_constrained,
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
        verdicts[i] = verdict
        t1 = now_ns(clock)
        if verdict != codes.INVALID:
            solve_ns[i] = t1 - t0
            nodes[i] = n
            guesses[i] = g
        counts[i] = found
        t0 = t1
