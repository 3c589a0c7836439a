"""Fault injection, solvers from outside that crash, exit or hang: a `c:` library that segfaults,
calls `exit(3)` or never returns on some puzzles, a `python:` function that ends its process
(`os._exit`) or hangs, in the board and the batch contracts. Each costs only the rows it hit:
each such row a `solver_error` naming the solver and the signal, exit status or time
allowed; every other row answered; the run goes on (exit 0); nothing of the solver is left
running afterwards, even when the run itself is killed."""

import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time
import uuid
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from pipeline import generate, solve_batch
from pipeline.grid import parse_puzzles
from pipeline.plugins.open import open_adapter
from tests.conftest import COMMAND, command, linux_only

# A backtracker that misbehaves on purpose, by the puzzle's first cell: '1' a segfault, '2'
# exit(3), '3' a loop that never ends; and the same as a batch function (the library declares
# its contract), which crashes on the whole call when any puzzle starts with '1'.
FAULTY_C = r"""
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static int ok(const char *g, int cell, char d) {
    int r = cell / 9, c = cell % 9, br = r / 3 * 3, bc = c / 3 * 3;
    for (int k = 0; k < 9; k++) {
        if (g[r * 9 + k] == d || g[k * 9 + c] == d) return 0;
        if (g[(br + k / 3) * 9 + bc + k % 3] == d) return 0;
    }
    return 1;
}

static size_t search(char *g, int cell, size_t limit, size_t found, char *first) {
    while (cell < 81 && g[cell] != '.') cell++;
    if (cell == 81) { if (found == 0) memcpy(first, g, 81); return found + 1; }
    for (char d = '1'; d <= '9' && found < limit; d++) {
        if (!ok(g, cell, d)) continue;
        g[cell] = d;
        found = search(g, cell + 1, limit, found, first);
        g[cell] = '.';
    }
    return found;
}

size_t faulty(const char *p, size_t limit, uint32_t config, char *solution, size_t *guesses) {
    if (p[0] == '1') { volatile int *nowhere = 0; *nowhere = 1; }
    if (p[0] == '2') exit(3);
    if (p[0] == '3') for (volatile int spin = 0;; spin++) {}
    char g[82]; memcpy(g, p, 81); g[81] = 0;
    return search(g, 0, limit, 0, solution);
}

const char faulty_batch_sudoku_contract[] = "batch";
void faulty_batch(const char *puzzles, size_t count, size_t limit, uint32_t config,
                  char *solutions, size_t *counts, size_t *guesses) {
    for (size_t i = 0; i < count; i++)
        counts[i] = faulty(puzzles + 82 * i, limit, config, solutions + 81 * i, guesses + i);
}
"""

FAULTY_PY = """
import os
import time


def fill(board):
    for r in range(9):
        for c in range(9):
            if board[r][c] == ".":
                for d in "123456789":
                    box = [board[r // 3 * 3 + i // 3][c // 3 * 3 + i % 3] for i in range(9)]
                    if d in board[r] or any(row[c] == d for row in board) or d in box:
                        continue
                    board[r][c] = d
                    if fill(board):
                        return True
                board[r][c] = "."
                return False
    return True


def solve_sudoku(board):
    if board[0][0] == "1":
        os._exit(7)
    if board[0][0] == "3":
        while True:
            time.sleep(0.05)
    return fill(board)


def solve_all(puzzles: list[str]) -> list[str | None]:
    out = []
    for p in puzzles:
        board = [list(p[r : r + 9]) for r in range(0, 81, 9)]
        out.append("".join(map("".join, board)) if solve_sudoku(board) else None)
    return out
"""


@pytest.fixture(scope="module")
def faulty(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The folder with libfaulty.so (when `cc` is here) and faulty.py."""
    folder = tmp_path_factory.mktemp("faulty")
    (folder / "faulty.py").write_text(textwrap.dedent(FAULTY_PY))
    if shutil.which("cc") is not None:
        (folder / "faulty.c").write_text(FAULTY_C)
        subprocess.run(["cc", "-O1", "-shared", "-fPIC", "-o", str(folder / "libfaulty.so"),
                        str(folder / "faulty.c")], check=True)  # fmt: skip
    return folder


def _library(faulty: Path) -> Path:
    library = faulty / "libfaulty.so"
    if not library.exists():
        pytest.skip("no C compiler (cc) on this machine")
    return library


@pytest.fixture(scope="module")
def corpus() -> list[str]:
    """Puzzles with many givens (the solvers are plain backtrackers), two starting with each
    of '1', '2', '3' (the faults) among ones starting with a blank."""
    frame = generate(300, seed=41, clues=40)
    by_first = {d: [p for p in frame["puzzle"] if p[0] == d] for d in ".123"}
    plain = by_first["."][:6]
    return [plain[0], by_first["1"][0], plain[1], by_first["2"][0], plain[2], plain[3],
            by_first["3"][0], plain[4], by_first["1"][1], plain[5]]  # fmt: skip


def _verdicts(frame: pl.DataFrame) -> list[str]:
    return frame["verdict"].cast(pl.String).to_list()


FAULTS = {"1": "killed by SIGSEGV", "2": "exit status 3", "3": "gave no answer within 1 s"}


def _check(frame: pl.DataFrame, corpus: list[str], spec: str, faults: dict[str, str]) -> None:
    """Every row there, in order; a fault's row a `solver_error` naming the solver and what
    happened; every other row solved."""
    assert frame["row"].to_list() == list(range(len(corpus)))
    for puzzle, verdict, error in zip(corpus, _verdicts(frame), frame["error"], strict=True):
        if puzzle[0] in faults:
            assert verdict == "solver_error", (puzzle[0], verdict, error)
            assert error.startswith(spec) and faults[puzzle[0]] in error, error
        else:
            assert verdict in ("solved", "found"), (puzzle[0], verdict, error)


@pytest.mark.parametrize("symbol", ["faulty", "faulty_batch"])
def test_a_c_library_that_crashes_exits_or_hangs_costs_only_those_rows(
    faulty: Path, corpus: list[str], tmp_path: Path, symbol: str
) -> None:
    source, out = tmp_path / "corpus.txt", tmp_path / "out.parquet"
    source.write_text("\n".join(corpus) + "\n")
    spec = f"c:{_library(faulty)}:{symbol}"
    start = time.monotonic()
    done = command("solve", source, "-o", out, "--solver", spec, "-q", "--batch-size", "4",
                   env={**os.environ, "SUDOKU_SOLVER_TIMEOUT": "1"})  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr and "out of memory" not in done.stderr
    _check(pl.read_parquet(out), corpus, spec, FAULTS)
    assert time.monotonic() - start < 60  # the hang costs its timeout (twice for a batch call)


@pytest.mark.parametrize("function", ["solve_sudoku", "solve_all"])
def test_a_python_function_that_ends_its_process_or_hangs_costs_only_those_rows(
    faulty: Path, corpus: list[str], function: str
) -> None:
    spec = f"python:{faulty / 'faulty.py'}:{function}"
    adapter = open_adapter(spec)
    adapter.timeout, adapter.start_timeout = 1.0, 0.0  # a second a puzzle, no start allowance
    frame = solve_batch(corpus, solver=spec)
    faults = {"1": "ended its process on this puzzle (exit status 7)", "3": "within 1 s"}
    _check(frame, corpus, spec, faults)


def test_a_crash_is_cheap_to_recover_from(faulty: Path, corpus: list[str]) -> None:
    """Each crash costs a fork of the solver's keeper (milliseconds), not a new interpreter."""
    crashes = [p for p in corpus if p[0] == "1"] * 40
    adapter = open_adapter(f"c:{_library(faulty)}:faulty")
    start = time.monotonic()
    answers = adapter.answer(parse_puzzles(crashes).grids, np.zeros(len(crashes), bool), 2)
    assert answers.errors is not None and all("SIGSEGV" in e for e in answers.errors)
    assert time.monotonic() - start < 40  # ~6 ms a crash on a loaded 2-core machine


def test_the_docs_relative_library_path_is_read_from_the_current_folder(
    faulty: Path, corpus: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    _library(faulty)
    monkeypatch.chdir(faulty)
    plain = [p for p in corpus if p[0] == "."]
    frame = solve_batch(plain, solver="c:./libfaulty.so:faulty")
    assert _verdicts(frame) == ["solved"] * len(plain)


def _ours(mark: str) -> list[int]:
    """Processes still running whose environment carries `mark` (zombies aside)."""
    found = []
    for environ in Path("/proc").glob("[0-9]*/environ"):
        try:
            if mark.encode() in environ.read_bytes():
                state = (environ.parent / "stat").read_text().rsplit(")", 1)[1].split()[0]
                if state != "Z":
                    found.append(int(environ.parent.name))
        except OSError:
            continue
    return found


@linux_only
@pytest.mark.parametrize("stop", [signal.SIGKILL, signal.SIGINT])
def test_nothing_of_the_solver_outlives_a_run_that_is_stopped(
    faulty: Path, corpus: list[str], tmp_path: Path, stop: signal.Signals
) -> None:
    """A run held by a hung solver, killed (-9: its keeper sees the pipe close and kills the
    solver's group) or interrupted (exit 130, in bounded time): nothing of it is left."""
    source = tmp_path / "hang.txt"
    source.write_text("\n".join([p for p in corpus if p[0] == "3"] * 3) + "\n")
    mark = f"SUDOKU_TEST_MARK={uuid.uuid4().hex}"
    env = {**os.environ, "SUDOKU_SOLVER_TIMEOUT": "600", mark.split("=")[0]: mark.split("=")[1]}
    argv = [*COMMAND, "solve", str(source), "-o", str(tmp_path / "o.parquet"), "-q", "--solver",
            f"c:{_library(faulty)}:faulty"]  # fmt: skip
    run = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True, start_new_session=True)  # fmt: skip
    deadline = time.monotonic() + 60
    while len(_ours(mark)) < 3 and time.monotonic() < deadline:  # the run, a keeper, a solver
        time.sleep(0.2)
    assert len(_ours(mark)) >= 3
    time.sleep(0.5)  # inside the hung call
    os.killpg(run.pid, stop)
    _, stderr = run.communicate(timeout=30)
    if stop == signal.SIGINT:
        assert run.returncode == 130, stderr
        assert stderr.strip().splitlines()[-1].startswith("error: "), stderr
    deadline = time.monotonic() + 10
    while _ours(mark) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _ours(mark) == []


def test_a_solver_whose_process_cannot_start_is_one_line(tmp_path: Path) -> None:
    broken = tmp_path / "broken.py"
    broken.write_text("import os\nos._exit(4)\n")
    done = command("solve", "-", "-o", tmp_path / "o.parquet", "--solver",
                   f"python:{broken}:solve", input="." * 81 + "\n")  # fmt: skip
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: solver"), done.stderr
    assert "exit status 4" in lines[0]


def test_sys_path_reaches_the_solver_process(tmp_path: Path, monkeypatch) -> None:  # noqa: ANN001
    """A module found on this process's path is found by the solver's process too."""
    package = tmp_path / "elsewhere"
    package.mkdir()
    (package / "solver_on_path_32.py").write_text(textwrap.dedent(FAULTY_PY))
    monkeypatch.syspath_prepend(str(package))
    frame = solve_batch(["." * 81], solver="python:solver_on_path_32:solve_sudoku")
    assert _verdicts(frame) == ["found"]
    assert sys.modules.get("solver_on_path_32") is None
