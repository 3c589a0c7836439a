"""The vector and bit building blocks of the `fast` kernel (pipeline/kernels/bits.py), against
plain numpy: a grid's cells compared with every value at once, a board's digits written back,
a band's triads gathered by `pext` or by tables (chosen by `pipeline.cpu`)."""

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numba import njit

from pipeline import cpu
from pipeline.cpu import cpu_flags
from pipeline.grid import parse_puzzles
from pipeline.kernels.bits import value_masks, write_digits
from pipeline.kernels.fast_board import _triads_by_pext, _triads_by_tables

SAMPLE = Path(__file__).resolve().parents[1] / "data" / "sample.csv"


@njit
def _value_masks(cells: np.ndarray, masks: np.ndarray) -> bool:
    return value_masks(cells, masks)


@njit
def _write_digits(board: np.ndarray, out: np.ndarray) -> None:
    write_digits(board, out)


def _masks_by_numpy(cells: np.ndarray) -> np.ndarray:
    masks = np.zeros(30, np.int64)
    for cell, value in enumerate(cells):
        if value <= 9:
            masks[3 * value + cell // 27] |= 1 << (cell % 27)
    return masks


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 255), min_size=81, max_size=81), st.booleans())
def test_value_masks_are_each_values_cells_band_by_band(
    values: list[int], digits_only: bool
) -> None:
    cells = np.array(values, np.uint8)
    if digits_only:
        cells %= 10
    grids = np.full((3, 81), 200, np.uint8)  # other rows around it: never read
    grids[1] = cells
    masks = np.full(30, -1, np.int64)
    above = _value_masks(grids[1], masks)
    assert above == bool((cells > 9).any())
    assert (masks == _masks_by_numpy(cells)).all()


def test_value_masks_of_a_grids_last_row_read_no_further() -> None:
    grid = np.zeros((2, 81), np.uint8)
    grid[1, 80] = 9
    masks = np.zeros(30, np.int64)
    assert not _value_masks(grid[1], masks)
    assert masks[3 * 9 + 2] == 1 << 26
    assert masks[2] == (1 << 26) - 1


@settings(max_examples=100, deadline=None)
@given(st.permutations(range(1, 10)), st.integers(0, 2**32 - 1))
def test_write_digits_writes_the_board_back_and_nothing_else(digits: list[int], seed: int) -> None:
    rng = np.random.default_rng(seed)
    solution = rng.integers(1, 10, 81).astype(np.uint8)  # any digits: a cell holds one
    solution[:9] = digits
    board = np.zeros(43, np.int64)
    for cell, digit in enumerate(solution):
        board[9 * (cell // 27) + digit - 1] |= 1 << (cell % 27)
    board[27:] = rng.integers(0, 2**62, 16)  # the other slots are not digits: never read
    out = np.full((3, 81), 99, np.uint8)
    _write_digits(board, out[1])
    assert (out[1] == solution).all()
    assert (out[0] == 99).all() and (out[2] == 99).all()


# A band's row-box triads: by `pext` where the CPU runs it fast, else by three tables.


@njit
def _triads(cells: np.ndarray, out: np.ndarray, by_pext: bool) -> None:
    for i in range(cells.shape[0]):
        out[i] = _triads_by_pext(cells[i]) if by_pext else _triads_by_tables(cells[i])


def _triads_by_numpy(cells: int) -> int:
    return sum(
        1 << (3 * row + box)
        for row in range(3)
        for box in range(3)
        if cells >> (9 * row + 3 * box) & 7
    )


def test_a_bands_triads_by_tables_and_by_pext_agree_with_their_definition() -> None:
    rng = np.random.default_rng(7)
    cells = np.concatenate(
        [
            rng.integers(0, 1 << 27, 3000),
            [0, (1 << 27) - 1, *(1 << np.arange(27))],  # each cell alone
            rng.integers(0, 1 << 27, 3000) & rng.integers(0, 1 << 27, 3000),  # sparse
        ]
    ).astype(np.int64)
    expected = np.array([_triads_by_numpy(int(c)) for c in cells])
    out = np.zeros_like(cells)
    _triads(cells, out, False)
    assert (out == expected).all()
    if "bmi2" in cpu_flags():  # the instruction runs here (slowly or not)
        out[:] = 0
        _triads(cells, out, True)
        assert (out == expected).all()


def _cpu(monkeypatch: pytest.MonkeyPatch, vendor: str, family: int, flags: str) -> None:
    info = {"vendor_id": vendor, "cpu family": str(family), "flags": flags}
    monkeypatch.setattr(cpu, "_cpuinfo", lambda: info)
    monkeypatch.delenv(cpu.PEXT_ENV, raising=False)
    monkeypatch.delenv("NUMBA_CPU_NAME", raising=False)


def test_pext_only_where_the_cpu_runs_it_in_hardware(monkeypatch: pytest.MonkeyPatch) -> None:
    _cpu(monkeypatch, "GenuineIntel", 6, "sse4_2 avx2 bmi2")
    assert cpu.fast_pext() and cpu.instructions() == "AVX2, pext"
    _cpu(monkeypatch, "AuthenticAMD", 25, "avx2 bmi2 avx512f avx512bw")  # Zen 3, Zen 4
    assert cpu.fast_pext() and cpu.instructions() == "AVX-512, pext"
    _cpu(monkeypatch, "AuthenticAMD", 23, "avx2 bmi2")  # Zen 1 and 2: pext in microcode
    assert not cpu.fast_pext() and cpu.instructions() == "AVX2"
    _cpu(monkeypatch, "GenuineIntel", 6, "sse4_2")  # no BMI2
    assert not cpu.fast_pext() and cpu.instructions() == "SSE4.2"
    _cpu(monkeypatch, "GenuineIntel", 6, "avx2 bmi2")
    monkeypatch.setenv("NUMBA_CPU_NAME", "generic")  # a portable cache: no BMI2 assumed
    assert not cpu.fast_pext()
    monkeypatch.setenv(cpu.PEXT_ENV, "0")
    monkeypatch.delenv("NUMBA_CPU_NAME")
    assert not cpu.fast_pext()
    _cpu(monkeypatch, "AuthenticAMD", 23, "avx2 bmi2")
    monkeypatch.setenv(cpu.PEXT_ENV, "1")  # forced on, where it runs slowly
    assert cpu.fast_pext()
    _cpu(monkeypatch, "GenuineIntel", 6, "avx2")
    monkeypatch.setenv(cpu.PEXT_ENV, "1")  # never where it would not run
    assert not cpu.fast_pext()


_SOLVE = """
import sys
import numpy as np
from pipeline.kernels import solve_grids
grids = np.load(sys.argv[1])
r = solve_grids(grids)
np.savez(sys.argv[2], verdicts=r.verdicts, solutions=r.solutions, nodes=r.nodes)
"""


def test_the_kernel_answers_the_same_with_pext_or_tables(tmp_path: Path) -> None:
    """The other choice than this CPU's, compiled in a process of its own (a cache of its
    own: the choice is part of the cached kernels' stamp), gives the same verdicts,
    solutions and nodes."""
    from pipeline.kernels import solve_grids

    puzzles = [row.split(",")[1] for row in SAMPLE.read_text().splitlines()[1:200]]
    grids = parse_puzzles(puzzles).grids
    np.save(tmp_path / "grids.npy", grids)
    here = solve_grids(grids)
    other = "0" if cpu.fast_pext() else "1"
    if other == "1" and "bmi2" not in cpu.cpu_flags():
        pytest.skip("no BMI2 here: only the tables can run")
    env = {**os.environ, cpu.PEXT_ENV: other, "NUMBA_CACHE_DIR": str(tmp_path / "cache")}
    subprocess.run(
        [sys.executable, "-c", _SOLVE, str(tmp_path / "grids.npy"), str(tmp_path / "out.npz")],
        env=env,
        check=True,
        cwd=Path(__file__).resolve().parents[1],
    )
    there = np.load(tmp_path / "out.npz")
    assert (there["verdicts"] == here.verdicts).all()
    assert (there["solutions"] == here.solutions).all()
    assert (there["nodes"] == here.nodes).all()
