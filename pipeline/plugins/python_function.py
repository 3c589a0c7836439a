"""`python:MODULE:FUNCTION`: a Python function as a solver (docs/SOLVERS.md).

MODULE is a dotted module name (imported as `import` would; the current folder is tried too
when it is not found on the path) or the path of a `.py` file (a path: it has a `/` or ends
in `.py`). FUNCTION has one of three
contracts, which the adapter reads from the function itself, never by calling it to see:

* `board` (the seeds' `solve_sudoku`): `fn(board) -> bool` with `board` 9 lists of 9
  one-character strings, `"1"`-`"9"` and `"."` for a blank; it fills the blanks in place and
  returns True, or returns False when there is no solution.
* `board_ints`: the same with 9 lists of 9 ints, 0 for a blank.
* `batch`: `fn(puzzles: list[str]) -> list[str | None]`, 81-character puzzles (`.` for a blank)
  in, one 81-digit solution or None (no solution) per puzzle out, in order.

How the contract is recognised, first match wins: an attribute `fn.sudoku_contract` set to one
of the names above; else the annotation of its first parameter (`list[str]` or
`Sequence[str]`: batch, `list[list[int]]`: board_ints, `list[list[str]]`: board) or of its
return (`list[...]`: batch); else `board`, the seeds' contract.

What it says: a grid (checked by the rules afterwards, never trusted) with no count (-1: a
Python function makes no claim of uniqueness), or "none" (count 0: False or None). An
exception from the function is that row's error sentence (a batch's: every row of it); a
batch that comes back the wrong length or not a list gives every row of it a sentence too.
Timing (`solve_ns`): the board contracts time each call; the batch contract times the one
call and spreads it evenly over the batch's puzzles.
"""

import importlib
import importlib.util
import inspect
import os
import sys
import time
from collections.abc import Callable
from itertools import chain
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np

from pipeline.plugins import Answers, SolverSpec, unanswered
from pipeline.plugins.program import WARM_GRID

CONTRACTS: tuple[str, ...] = ("board", "board_ints", "batch")
NOT_A_DIGIT = 10  # a cell that is neither a digit nor a blank: the checks call it incomplete
_MESSAGE_CHARS = 200  # an exception's message is cut to this in a row's error sentence


def load_module(where: str) -> ModuleType:
    """The module `where` names: a `.py` file or a dotted name. Its folder (the file's, or the
    current one when the name is found only there) is added at the end of `sys.path`, for its
    own imports. ValueError with one sentence when it cannot be imported."""
    if where.endswith(".py") or os.sep in where:
        path = Path(where).expanduser()
        if not path.is_file():
            raise ValueError(f"no Python file {where!r}")
        return _import_file(path.resolve())
    module = _import_name(where)
    if module is None and os.getcwd() not in sys.path and "" not in sys.path:
        _add_to_path(os.getcwd())  # `sudoku-pipeline` runs with its bin folder first
        module = _import_name(where)
    if module is None:
        raise ValueError(f"no module {where!r} (looked on the path and in this folder)")
    return module


def _add_to_path(folder: str) -> None:
    if folder not in sys.path:
        sys.path.append(folder)


def _import_name(name: str) -> ModuleType | None:
    """The module `name`; None when it (or a package above it) is not there."""
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as e:
        if e.name is not None and (name == e.name or name.startswith(e.name + ".")):
            return None
        raise ValueError(f"importing {name!r} failed: {_sentence(e)}") from None
    except (Exception, SystemExit) as e:  # its own code failed while importing
        raise ValueError(f"importing {name!r} failed: {_sentence(e)}") from None


def _import_file(path: Path) -> ModuleType:
    name = f"_sudoku_solver_{path.stem}_{abs(hash(str(path))):x}"
    if name in sys.modules:  # a second adapter of one process: the module once
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ValueError(f"cannot load {str(path)!r} as a Python module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # its dataclasses and pickles find it
    _add_to_path(str(path.parent))
    try:
        spec.loader.exec_module(module)
    except (Exception, SystemExit) as e:
        del sys.modules[name]
        raise ValueError(f"importing {str(path)!r} failed: {_sentence(e)}") from None
    return module


def contract_of(fn: Callable[..., Any]) -> str:
    """The contract `fn` declares (module docstring); ValueError for an unknown
    `sudoku_contract` or a function that takes no puzzle argument."""
    declared = getattr(fn, "sudoku_contract", None)
    if declared is not None:
        if declared not in CONTRACTS:
            raise ValueError(
                f"its sudoku_contract is {declared!r}; use one of {', '.join(map(repr, CONTRACTS))}"
            )
        return str(declared)
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError):  # a builtin without one: the seeds' contract
        return "board"
    try:
        signature.bind(None)
    except TypeError:
        raise ValueError("the function does not take one argument (a board or puzzles)") from None
    params = list(signature.parameters.values())
    first = _annotation(params[0].annotation) if params else ""
    if first in ("list[str]", "sequence[str]"):
        return "batch"
    if first == "list[list[int]]":
        return "board_ints"
    if first == "list[list[str]]":
        return "board"
    if _annotation(signature.return_annotation).startswith("list["):
        return "batch"
    return "board"


def _annotation(annotation: Any) -> str:
    """An annotation as lower-case text without spaces or `typing.` (a string annotation,
    under `from __future__ import annotations`, as it is written)."""
    if annotation is inspect.Parameter.empty:
        return ""
    text = annotation if isinstance(annotation, str) else str(annotation)
    for prefix in ("typing.", "collections.abc."):
        text = text.replace(prefix, "")
    return text.replace(" ", "").lower()


def _sentence(e: BaseException) -> str:
    """An exception as `Type: first line of its message`, cut to a readable length."""
    message = str(e).strip().splitlines()[0] if str(e).strip() else ""
    if len(message) > _MESSAGE_CHARS:
        message = message[: _MESSAGE_CHARS - 3] + "..."
    return f"{type(e).__name__}: {message}" if message else type(e).__name__


def _digit(cell: Any) -> int:
    """A board cell read back: its digit, 0 for a blank, `NOT_A_DIGIT` for anything else."""
    if isinstance(cell, str):
        if len(cell) == 1 and "1" <= cell <= "9":
            return ord(cell) - 48
        return 0 if cell in (".", "0") else NOT_A_DIGIT
    if isinstance(cell, int | np.integer) and not isinstance(cell, bool | np.bool_):
        return int(cell) if 0 <= cell <= 9 else NOT_A_DIGIT
    return NOT_A_DIGIT


_CELL_OF_CHAR = np.full(128, NOT_A_DIGIT, dtype=np.uint8)  # an ASCII character's cell
_CELL_OF_CHAR[ord("1") : ord("9") + 1] = np.arange(1, 10)
_CELL_OF_CHAR[[ord("."), ord("0")]] = 0


def read_board(board: Any) -> np.ndarray | str:
    """`(81,) uint8` from a board a function filled (9 rows of 9 cells), or a sentence
    saying why it is not one. Rows of one-character strings (or 9-character strings) and rows
    of ints are read whole (~3 us; ~15-25 us a cell at a time), any other cell by cell."""
    try:
        rows = [row if isinstance(row, str) else list(row) for row in board]
    except TypeError:
        return f"the solver left the board as a {type(board).__name__}, not 9 rows of 9 cells"
    if len(rows) != 9 or any(len(row) != 9 for row in rows):
        return "the solver left the board without 9 rows of 9 cells"
    cells = list(chain.from_iterable(rows))
    try:
        text = "".join(cells)  # TypeError unless every cell is a string
    except TypeError:
        text = None
    if text is not None:
        if len(text) == 81 and max(map(len, cells)) == 1 and text.isascii():  # one each
            return _CELL_OF_CHAR[np.frombuffer(text.encode("ascii"), dtype=np.uint8)]
    elif all(type(cell) is int for cell in cells):
        try:
            ints = np.fromiter(cells, dtype=np.int64, count=81)
            return np.where((ints >= 0) & (ints <= 9), ints, NOT_A_DIGIT).astype(np.uint8)
        except OverflowError:  # an int too large for int64: cell by cell
            pass
    return np.array([_digit(cell) for cell in cells], dtype=np.uint8)


def puzzle_texts(grids: np.ndarray) -> list[str]:
    """`(n, 81) uint8` grids as 81-character strings, `.` for a blank."""
    chars = np.where(grids == 0, ord("."), grids + ord("0")).astype(np.uint8)
    text = chars.tobytes().decode("ascii")
    return [text[i : i + 81] for i in range(0, len(text), 81)]


def read_solution(answer: Any) -> np.ndarray | str | None:
    """A batch function's answer for one puzzle: `(81,) uint8`, None for "no solution", or a
    sentence saying why it cannot be read."""
    if answer is None:
        return None
    if not isinstance(answer, str):
        return f"the solver answered a {type(answer).__name__}, not an 81-digit string or None"
    if len(answer) != 81:
        return f"the solver's answer has {len(answer)} characters, not 81"
    return np.array([_digit(c) for c in answer], dtype=np.uint8)


class PythonSolver:
    """A Python function answering puzzles (module docstring); opened once per worker."""

    holds_gil = True

    def __init__(self, spec: SolverSpec) -> None:
        self.spec = spec
        where, _, name = spec.target.rpartition(":")
        self.module = load_module(where)
        fn = getattr(self.module, name, None)
        if fn is None:
            raise ValueError(f"{where!r} has no function {name!r}")
        if not callable(fn):
            raise ValueError(f"{where}:{name} is a {type(fn).__name__}, not a function")
        self.function: Callable[..., Any] = fn
        self.contract = contract_of(fn)

    def version(self) -> str | None:
        """The module's `__version__`, where it has one."""
        version = getattr(self.module, "__version__", None)
        return None if version is None else str(version)

    def describe(self) -> dict[str, Any]:
        """What the run metadata records besides the spec: the contract used."""
        return {"contract": self.contract}

    def warm(self) -> None:
        """Call the function once on a complete grid (its answer not kept), so that a clock
        started afterwards (`bench`) does not hold its first call's lazy imports."""
        self.answer(WARM_GRID[None, :], np.zeros(1, dtype=np.bool_), 1)

    def answer(self, grids: np.ndarray, skip: np.ndarray, limit: int) -> Answers:
        """Answer the rows not skipped; `limit` is not passed on (the contracts have no
        count), so a grid is "found" and uniqueness is left to our kernel."""
        grids, rows, answers = unanswered(grids, skip)
        if len(rows):
            ask = self._ask_batch if self.contract == "batch" else self._ask_boards
            ask(grids, rows, answers)
        return answers

    def _ask_boards(self, grids: np.ndarray, rows: np.ndarray, answers: Answers) -> None:
        errors = answers.errors
        assert errors is not None
        texts = puzzle_texts(grids[rows]) if self.contract == "board" else None
        for k, i in enumerate(rows.tolist()):
            if texts is not None:
                board: list[list[Any]] = [list(texts[k][r : r + 9]) for r in range(0, 81, 9)]
            else:
                board = grids[i].reshape(9, 9).tolist()
            start = time.perf_counter_ns()
            try:
                said = self.function(board)
            except (Exception, SystemExit) as e:
                answers.solve_ns[i] = time.perf_counter_ns() - start
                errors[i] = f"the solver raised {_sentence(e)}"
                continue
            answers.solve_ns[i] = time.perf_counter_ns() - start
            if said is False or said is np.False_:
                answers.counts[i] = 0  # it says there is none; its board is scratch
            elif said is True or said is np.True_:
                grid = read_board(board)
                if isinstance(grid, str):
                    errors[i] = grid
                else:
                    answers.solutions[i] = grid
            else:
                errors[i] = (
                    f"the solver returned {_short(said)}, not True or False (a batch "
                    "function? see docs/SOLVERS.md)"
                )

    def _ask_batch(self, grids: np.ndarray, rows: np.ndarray, answers: Answers) -> None:
        errors = answers.errors
        assert errors is not None
        puzzles = puzzle_texts(grids[rows])
        start = time.perf_counter_ns()
        try:
            said = self.function(puzzles)
            failure = None
        except (Exception, SystemExit) as e:
            failure = f"the solver raised {_sentence(e)} on a batch of {len(rows)}"
        elapsed = time.perf_counter_ns() - start
        answers.solve_ns[rows] = elapsed // len(rows)
        if failure is None and (isinstance(said, str | bytes) or not hasattr(said, "__len__")):
            failure = f"the solver returned {_short(said)}, not a list of solutions"
        elif failure is None and len(said) != len(rows):
            failure = f"the solver returned {len(said)} answers for {len(rows)} puzzles"
        if failure is not None:
            for i in rows.tolist():
                errors[i] = failure
            return
        for i, answer in zip(rows.tolist(), list(said), strict=True):
            solution = read_solution(answer)
            if solution is None:
                answers.counts[i] = 0
            elif isinstance(solution, str):
                errors[i] = solution
            else:
                answers.solutions[i] = solution


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


__all__ = ["CONTRACTS", "PythonSolver", "contract_of", "load_module", "puzzle_texts"]
