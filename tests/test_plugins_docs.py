"""The examples of docs/SOLVERS.md run as printed: each block marked `<!-- example: NAME -->`
is written to NAME in a fresh folder; the Python module answers through both of its
contracts, the program through `cmd:`, and the C function, compiled with `cc`, through ctypes
(the `c:` adapter is tested with its own module), each against generated puzzles' known
solutions."""

import ctypes
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from pipeline import generate
from pipeline.grid import parse_puzzles
from pipeline.plugins import parse_spec
from pipeline.plugins.program import ProgramSolver
from pipeline.plugins.python_function import PythonSolver

SOLVERS_MD = Path(__file__).resolve().parents[1] / "docs" / "SOLVERS.md"
EXAMPLES = dict(re.findall(r"<!-- example: (\S+) -->\n```\w+\n(.*?)^```",
                           SOLVERS_MD.read_text(encoding="utf-8"), re.S | re.M))  # fmt: skip


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    here = tmp_path_factory.mktemp("solvers_docs")
    for name, text in EXAMPLES.items():
        (here / name).write_text(text)
    return here


@pytest.fixture(scope="module")
def puzzles() -> tuple[np.ndarray, np.ndarray]:
    """Puzzles with many givens (the examples are plain backtrackers) and their solutions."""
    frame = generate(4, seed=7, clues=40)
    return (parse_puzzles(frame["puzzle"].to_list()).grids,
            parse_puzzles(frame["solution"].to_list()).grids)  # fmt: skip


def test_the_page_has_its_examples():
    assert set(EXAMPLES) == {"mysolver.c", "my_solver.py", "solve_stdin.py"}


@pytest.mark.parametrize("function,contract", [("solve_sudoku", "board"),
                                               ("solve_all", "batch")])  # fmt: skip
def test_the_python_example(folder, puzzles, function, contract):
    grids, solutions = puzzles
    solver = PythonSolver(parse_spec(f"python:{folder / 'my_solver.py'}:{function}"))
    assert solver.contract == contract and solver.version() == "0.1"
    answers = solver.answer(grids, np.zeros(len(grids), dtype=np.bool_), 2)
    assert answers.errors == [None] * len(grids)
    assert np.array_equal(answers.solutions, solutions)


def test_the_program_example(folder, puzzles):
    grids, solutions = puzzles
    solver = ProgramSolver(parse_spec(f"cmd:{sys.executable} {folder / 'solve_stdin.py'}"))
    try:
        answers = solver.answer(grids, np.zeros(len(grids), dtype=np.bool_), 2)
    finally:
        solver.close()
    assert answers.errors == [None] * len(grids)
    assert np.array_equal(answers.solutions, solutions)


@pytest.mark.skipif(shutil.which("cc") is None, reason="no C compiler")
def test_the_c_example(folder, puzzles):
    grids, solutions = puzzles
    library = folder / "libmysolver.so"
    subprocess.run(["cc", "-O2", "-shared", "-fPIC", "-o", str(library),
                    str(folder / "mysolver.c")], check=True)  # fmt: skip
    solve = ctypes.CDLL(str(library)).my_solve
    solve.restype = ctypes.c_size_t
    solve.argtypes = [ctypes.c_char_p, ctypes.c_size_t, ctypes.c_uint32, ctypes.c_char_p,
                      ctypes.POINTER(ctypes.c_size_t)]  # fmt: skip
    for grid, expected in zip(grids, solutions, strict=True):
        puzzle = "".join(str(v) if v else "." for v in grid.tolist()).encode()
        out = ctypes.create_string_buffer(82)
        guesses = ctypes.c_size_t(7)
        assert solve(puzzle, 2, 0, out, ctypes.byref(guesses)) == 1
        assert out.value.decode() == "".join(map(str, expected.tolist()))
        assert guesses.value == 7  # untouched: the column stays null
