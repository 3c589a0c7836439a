"""Every solution of a puzzle, a chunk at a time, in bounded memory however many there are.

The search is the `fast` strategy's (`pipeline.kernels.fast`) counting to `limit`: the same
board, propagation and branching (light below a board with few cells open once a solution is
found, when `limit` is above 2: `fast._switch`), so the solutions come in one fixed order (the
search's), the same in every run and for every chunk size. The kernel is *resumable*: its
whole state, the explicit stack of boards (each with the other way of its branch still to
try), the depth, the puzzle it is on and how many solutions that puzzle has given, lives in
arrays the caller keeps between calls. A call fills a buffer of up to `chunk` solutions and
returns where it stopped; the next call goes on from there. Memory: the buffer and 65 boards,
whatever the count.

`enumerate_solutions` streams one puzzle's solutions as `(k, 81) uint8` chunks;
`enumerate_batch` streams many puzzles' (each up to `limit`) as `SolutionChunk`s that say
which puzzle and which of its solutions each row is. Puzzles whose givens clash (or placed
candidates clash) and puzzles without a solution give no rows.
"""

from collections.abc import Iterator
from typing import NamedTuple

import numpy as np

from pipeline.compiled import kernel
from pipeline.kernels.bits import unowned
from pipeline.kernels.candidates import as_candidates
from pipeline.kernels.fast import CHOICE, MAX_DEPTH, NEVER, _restrict, _switch, _write_solution
from pipeline.kernels.fast_board import FIELD
from pipeline.kernels.fast_calls import call_propagate
from pipeline.kernels.fast_entries import search_entries
from pipeline.kernels.fast_light import choose_light, open_cells, search_light, step
from pipeline.kernels.fast_load import _load_candidates, _load_givens
from pipeline.kernels.fast_propagate import BOARD_SLOTS, COMPLETE, CONTRADICTION, STUCK
from pipeline.kernels.registry import MAX_NODES

DEFAULT_CHUNK = 4096  # solutions per chunk: 330 KiB of buffer
# `status` slots: the search's state between calls
PUZZLE = 0  # the row being searched (== n: all done)
DEPTH = 1  # its board's depth in `boards`
RESUME = 2  # 1: the board at DEPTH was a solution already written; back up from it
FOUND = 3  # solutions of this row written so far
NODES = 4  # nodes this row's search has visited so far
KEEP = 5  # scratch (see the end of the kernel)
LIGHT_DEPTH = 6  # the search is light from this depth on (`fast_light`; NEVER: not light)
STATUS = 7


class SolutionChunk(NamedTuple):
    """Solutions of a batch of puzzles, in order: row `j` is solution number `ordinals[j]`
    (0-based) of puzzle `rows[j]` (its index in the batch)."""

    rows: np.ndarray  # (k,) int64
    ordinals: np.ndarray  # (k,) int64
    solutions: np.ndarray  # (k, 81) uint8


@kernel
def enumerate_kernel(
    grids: np.ndarray,
    candidates: np.ndarray,
    from_candidates: int,
    skip: np.ndarray,
    entries: np.ndarray,
    limit: int,
    max_nodes: int,
    boards_owner: np.ndarray,
    status: np.ndarray,
    spent: np.ndarray,
    rows: np.ndarray,
    ordinals: np.ndarray,
    solutions: np.ndarray,
) -> int:
    """Go on with the search kept in `boards_owner` (`(MAX_DEPTH + 1, BOARD_SLOTS + 4)
    int64`) and `status` (`STATUS` int64, zeros to start); write up to `len(rows)` solutions
    (`rows`, `ordinals`, `solutions`) and return how many. The puzzles are `grids`, or
    `candidates` when `from_candidates` is 1 (the other: one row of scratch); rows in `skip`
    give none; each puzzle gives at most `limit`. `max_nodes` (0: none) is each puzzle's node
    budget, counted and checked as `fast` does (the root is one; each placement by choice,
    the other way of a branch included, one more; checked before each): a puzzle whose
    search spends it stops there, its solutions so far given, and `spent[i]` is set.
    `entries`: the addresses of the propagations the search calls
    (`fast_entries.search_entries`)."""
    n = skip.shape[0]
    room = rows.shape[0]
    fields_owner = np.zeros(9, dtype=np.int64)
    choice_owner = np.zeros(CHOICE, dtype=np.int64)
    placed_owner = np.zeros(81, dtype=np.uint8)
    boards = unowned(boards_owner)  # no reference counts per call (see bits.py)
    fields = unowned(fields_owner)
    choice = unowned(choice_owner)
    placed = unowned(placed_owner)
    grid_row = 1 - from_candidates
    i = status[PUZZLE]
    depth = status[DEPTH]
    resume = status[RESUME]
    found = status[FOUND]
    nodes = status[NODES]
    light_depth = status[LIGHT_DEPTH]
    switch_open = _switch(limit)
    written = 0
    while i < n and written < room:
        if resume:
            board = boards[depth]
            state = CONTRADICTION  # its solution is written: back up from it
            resume = 0
        else:
            if skip[i]:
                i += 1
                continue
            board = boards[0]
            if from_candidates:
                loaded = _load_candidates(candidates[i], board, boards[1], placed)
            else:
                loaded = _load_givens(grids[i * grid_row], board, boards[1])
            if not loaded:
                i += 1
                continue
            state = call_propagate(entries[0], board, np.int64((1 << 27) - 1), fields, choice)
            light_depth = 0 if search_light(board, state, choice) else NEVER
            depth = 0
            found = 0
            nodes = 1
        done = False  # this puzzle has given all it will
        while True:
            if state == COMPLETE:
                rows[written] = i
                ordinals[written] = found
                _write_solution(board, solutions[written])
                written += 1
                found += 1
                if found >= limit:
                    done = True
                    break
                if written == room:
                    resume = 1  # back up from this board when called again
                    break
            elif state == STUCK:
                if max_nodes > 0 and nodes >= max_nodes:
                    spent[i] = True
                    done = True
                    break
                nodes += 1
                if found and depth < light_depth and switch_open > 0:  # as `fast` counts
                    still_open = open_cells(board)
                    if still_open <= switch_open and depth + still_open <= MAX_DEPTH:
                        if choose_light(board, choice):
                            light_depth = depth
                board[BOARD_SLOTS] = choice[0]  # the other way, for when we back up
                for k in range(1, 4):
                    board[BOARD_SLOTS + k] = choice[3 + k]
                slots = FIELD if depth >= light_depth else BOARD_SLOTS  # as `fast` copies
                depth += 1
                child = boards[depth]
                for k in range(slots):
                    child[k] = board[k]
                board = child
                dirty = _restrict(board, choice[0], choice[1], choice[2], choice[3])
                state = step(board, dirty, depth >= light_depth, fields, choice, entries)
                continue
            if depth == 0:
                done = True
                break
            if max_nodes > 0 and nodes >= max_nodes:
                spent[i] = True
                done = True
                break
            nodes += 1
            depth -= 1
            if depth < light_depth:
                light_depth = NEVER
            board = boards[depth]
            dirty = _restrict(board, board[BOARD_SLOTS], board[BOARD_SLOTS + 1],
                              board[BOARD_SLOTS + 2], board[BOARD_SLOTS + 3])  # fmt: skip
            state = step(board, dirty, depth >= light_depth, fields, choice, entries)
        if done:
            i += 1
            found = 0
    status[PUZZLE] = i
    status[DEPTH] = depth
    status[RESUME] = resume
    status[FOUND] = found
    status[NODES] = nodes
    status[LIGHT_DEPTH] = light_depth
    # Do not remove: keeps the owners of the `unowned` views alive until here (see fast.py).
    status[KEEP] = fields_owner[0] + choice_owner[0] + placed_owner[0]
    return written


def _check(limit: int | None, chunk: int) -> int:
    if limit is not None and (
        isinstance(limit, bool) or not isinstance(limit, int | np.integer) or limit < 1
    ):
        raise ValueError(f"limit must be a whole number >= 1 (or None: all), not {limit!r}")
    if isinstance(chunk, bool) or not isinstance(chunk, int | np.integer) or chunk < 1:
        raise ValueError(f"chunk must be a whole number >= 1, not {chunk!r}")
    return MAX_NODES if limit is None else int(limit)


def _check_digits(grids: np.ndarray) -> None:
    """ValueError for grids that are not digits 0 to 9: cast to `uint8`, pencilmarks (or any
    larger number) would be read as clashing givens and yield nothing, silently. (Any
    solvable pencilmark puzzle holds one above 9: digits 5 to 9 are the bits of 16 and up.)"""
    if grids.size and (grids.min() < 0 or grids.max() > 9):
        most = int(grids.max())
        raise ValueError(
            "grids hold the digits 0 to 9 (0: blank), these hold values up to "
            f"{most} ({grids.dtype}): for pencilmarks (candidate bit sets) pass candidates=True"
        )


def enumerate_batch(
    puzzles: np.ndarray,
    limit: int | None,
    chunk: int = DEFAULT_CHUNK,
    skip: np.ndarray | None = None,
    candidates: bool = False,
    max_nodes: int | None = None,
    spent: np.ndarray | None = None,
) -> Iterator[SolutionChunk]:
    """The solutions of every puzzle of a batch, each up to `limit` (None: all), in puzzle
    order and each puzzle's solutions in the search's fixed order, as chunks of at most
    `chunk` rows. `puzzles`: `(n, 81) uint8` grids, or with `candidates` `(n, 81) uint16`
    pencilmarks (see `pipeline.kernels.candidates`). Rows in `skip`, rows whose givens clash
    and rows without a solution give none. `max_nodes` (None: no budget): each puzzle's node
    budget, counted as `fast` counts (see `pipeline.kernels`); a puzzle whose search spends it
    stops with the solutions found so far, and is set True in `spent` (an `(n,)` bool array
    the caller gives, read once the chunks have passed the puzzle)."""
    most = _check(limit, chunk)
    if max_nodes is not None and (
        isinstance(max_nodes, bool) or not isinstance(max_nodes, int | np.integer)
        or not 1 <= max_nodes <= MAX_NODES
    ):  # fmt: skip
        raise ValueError(f"max_nodes must be between 1 and {MAX_NODES:,}, not {max_nodes!r}")
    budget = 0 if max_nodes is None else int(max_nodes)
    if candidates:
        pencilmarks = as_candidates(puzzles)
        grids = np.zeros((1, 81), dtype=np.uint8)
    else:
        given = np.asarray(puzzles)
        grids = np.ascontiguousarray(given, dtype=np.uint8).reshape(-1, 81)
        pencilmarks = np.zeros((1, 81), dtype=np.uint16)
    n = len(pencilmarks) if candidates else len(grids)
    todo = np.zeros(n, dtype=np.bool_) if skip is None else np.asarray(skip, dtype=np.bool_)
    if todo.shape != (n,):
        raise ValueError(f"skip must have shape ({n},), got {todo.shape}")
    if not candidates:
        _check_digits(given.reshape(-1, 81)[~todo])
    if spent is None:
        spent = np.zeros(n, dtype=np.bool_)
    elif spent.shape != (n,) or spent.dtype != np.bool_:
        raise ValueError(f"spent must be a bool array of shape ({n},)")
    boards = np.zeros((MAX_DEPTH + 1, BOARD_SLOTS + 4), dtype=np.int64)
    status = np.zeros(STATUS, dtype=np.int64)
    entries = search_entries()
    while status[PUZZLE] < n:
        rows = np.empty(chunk, dtype=np.int64)
        ordinals = np.empty(chunk, dtype=np.int64)
        solutions = np.empty((chunk, 81), dtype=np.uint8)
        k = enumerate_kernel(grids, pencilmarks, int(candidates), todo, entries, most, budget,
                             boards, status, spent, rows, ordinals, solutions)  # fmt: skip
        if k:
            yield SolutionChunk(rows[:k], ordinals[:k], solutions[:k])


def enumerate_solutions(
    grid_or_candidates: np.ndarray,
    limit: int | None,
    chunk: int = DEFAULT_CHUNK,
    candidates: bool | None = None,
) -> Iterator[np.ndarray]:
    """One puzzle's solutions, up to `limit` (None: all), as `(k, 81) uint8` chunks of at
    most `chunk`, in the search's fixed order, in bounded memory. The puzzle: an 81-cell grid
    (0 = blank), or pencilmarks (81 candidate bit sets, see `pipeline.kernels.candidates`);
    `candidates` says which, None: pencilmarks when the array is `uint16`. Nothing is
    yielded when the givens clash or there is no solution."""
    puzzle = np.asarray(grid_or_candidates)
    if puzzle.size != 81:
        raise ValueError(f"a puzzle has 81 cells, got an array of shape {puzzle.shape}")
    pencilmarks = puzzle.dtype == np.uint16 if candidates is None else candidates
    for found in enumerate_batch(puzzle.reshape(1, 81), limit, chunk, candidates=pencilmarks):
        yield found.solutions


__all__ = ["DEFAULT_CHUNK", "SolutionChunk", "enumerate_batch", "enumerate_solutions"]
