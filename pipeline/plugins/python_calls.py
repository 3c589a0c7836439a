"""A `python:` solver's function called on a request's rows, in the solver's own process
(`runner.py`): its answers, times and error sentences written to the shared rows, and the
header kept up to date, so that a row it crashed or hung on is known (`shared.py`).

The contracts and how a function's contract is recognised: `python_function.py`. A board
function is called once a row, each row `ANSWERED` or `FAILED` as it comes; a batch function
once for the request (`PHASE` `BATCH`: no row is known answered until it returns, and its
timeout is its puzzles' share), or, asked `single`, once a row with a list of one puzzle.
"""

import time
from collections.abc import Callable
from typing import Any

import numpy as np

from pipeline.plugins.python_function import (
    contract_of,
    load_module,
    puzzle_texts,
    read_board,
    read_solution,
    sentence,
    short,
)
from pipeline.plugins.shared import (
    ANSWERED,
    TICK,
    Rows,
    clear_answers,
    end_batch,
    start_batch,
    start_row,
    write_error,
)


class PythonFunction:
    """The function `MODULE:FUNCTION` names, imported in this process."""

    def __init__(self, target: str) -> None:
        where, _, name = target.rpartition(":")
        self.module = load_module(where)
        fn = getattr(self.module, name, None)
        if fn is None:
            raise ValueError(f"{where!r} has no function {name!r}")
        if not callable(fn):
            raise ValueError(f"{where}:{name} is a {type(fn).__name__}, not a function")
        self.function: Callable[..., Any] = fn
        self.contract = contract_of(fn)
        version = getattr(self.module, "__version__", None)
        self.about = {
            "version": None if version is None else str(version),
            "contract": self.contract,
        }

    def ask(self, header: np.ndarray, rows: Rows, limit: int, fetch: bool, single: bool) -> None:
        """Answer every row (`limit` and `fetch` mean nothing to a function: it claims no
        count, so a grid is "found" and uniqueness is left to our kernel)."""
        clear_answers(rows)
        if self.contract != "batch":
            self._ask_boards(header, rows)
        elif single:
            for i in range(len(rows.state)):
                start_row(header, i)
                self._ask_batch(rows, np.array([i]))
        else:
            start_batch(header, len(rows.state))
            header[TICK] += 1
            self._ask_batch(rows, np.arange(len(rows.state)))
            end_batch(header)

    def _ask_boards(self, header: np.ndarray, rows: Rows) -> None:
        texts = puzzle_texts(rows.grids) if self.contract == "board" else None
        for i in range(len(rows.state)):
            if texts is not None:
                board: list[list[Any]] = [list(texts[i][r : r + 9]) for r in range(0, 81, 9)]
            else:
                board = rows.grids[i].reshape(9, 9).tolist()
            start_row(header, i)
            start = time.perf_counter_ns()
            try:
                said = self.function(board)
            except (Exception, SystemExit) as e:
                rows.solve_ns[i] = time.perf_counter_ns() - start
                write_error(rows, i, f"the solver raised {sentence(e)}")
                continue
            rows.solve_ns[i] = time.perf_counter_ns() - start
            if said is False or said is np.False_:
                rows.counts[i] = 0  # it says there is none; its board is scratch
            elif said is True or said is np.True_:
                grid = read_board(board)
                if isinstance(grid, str):
                    write_error(rows, i, grid)
                    continue
                rows.solutions[i] = grid
            else:
                write_error(
                    rows,
                    i,
                    f"the solver returned {short(said)}, not True or False (a "
                    "batch function? see docs/SOLVERS.md)",
                )
                continue
            rows.state[i] = ANSWERED

    def _ask_batch(self, rows: Rows, asked: np.ndarray) -> None:
        puzzles = puzzle_texts(rows.grids[asked])
        start = time.perf_counter_ns()
        try:
            said = self.function(puzzles)
            failure = None
        except (Exception, SystemExit) as e:
            failure = f"the solver raised {sentence(e)} on a batch of {len(asked)}"
        rows.solve_ns[asked] = (time.perf_counter_ns() - start) // len(asked)
        if failure is None and (isinstance(said, str | bytes) or not hasattr(said, "__len__")):
            failure = f"the solver returned {short(said)}, not a list of solutions"
        elif failure is None and len(said) != len(asked):
            failure = f"the solver returned {len(said)} answers for {len(asked)} puzzles"
        if failure is not None:
            for i in asked.tolist():
                write_error(rows, i, failure)
            return
        for i, answer in zip(asked.tolist(), list(said), strict=True):
            solution = read_solution(answer)
            if isinstance(solution, str):
                write_error(rows, i, solution)
                continue
            if solution is None:
                rows.counts[i] = 0
            else:
                rows.solutions[i] = solution
            rows.state[i] = ANSWERED


__all__ = ["PythonFunction"]
