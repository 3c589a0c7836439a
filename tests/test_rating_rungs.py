"""The rating's ladder calls its techniques' two halves at their addresses
(`pipeline/rating/rungs.py`): the ladder's kernel does not carry the techniques' code, the
warm-up's stand-ins never reach a grade outside their block, and a board handed in from Python
is checked before any code reads it."""

import numpy as np
import pytest
from numba import njit

from pipeline import generate
from pipeline.grid import parse_puzzles
from pipeline.kernels.callbacks import compiling_only
from pipeline.rating import grade_grids
from pipeline.rating.ladder import RUNGS, SEARCH, grade_kernel
from pipeline.rating.rungs import apply_rung, rung_entries

PUZZLES = parse_puzzles(generate(30, seed=11)["puzzle"]).grids


def _outputs(n: int) -> tuple[np.ndarray, ...]:
    return (
        np.zeros(n, np.int8),
        np.zeros((n, RUNGS), np.int32),
        np.zeros(n, np.int32),
        np.zeros(n, np.int8),
    )


def test_the_ladder_calls_the_techniques_rather_than_carry_them():
    """The compiled ladder holds none of the techniques: numba would optimise and compile them
    again in it (2.4 CPU s on top of its cached halves). (Compiled afresh, uncached: numba
    shows no code of a kernel it loaded from its cache.)"""
    fresh = njit(nogil=True)(grade_kernel.py_func)
    n = len(PUZZLES)
    out = _outputs(n)
    skip = np.zeros(n, np.bool_)
    known = np.zeros((1, 81), np.uint8)
    fresh(PUZZLES, rung_entries(), False, skip, known, False, *out)
    assert (out[0] == grade_grids(PUZZLES).grades).all()
    code = "\n".join(fresh.inspect_llvm().values())
    defined = [line for line in code.splitlines() if line.startswith("define")]
    assert any("start_board" in line for line in defined)  # its own parts are linked
    for technique in ("hidden_single", "naked_subset", "fish", "x_chain", "wing"):
        assert not any(technique in line for line in defined), f"{technique} was linked in"


def test_the_stand_ins_grade_nothing_and_only_within_their_block():
    real = grade_grids(PUZZLES)
    assert (real.grades >= 0).all() and (real.grades < SEARCH).sum() > 10
    addresses = rung_entries().copy()
    with compiling_only():
        stalled = grade_grids(PUZZLES)
        assert not (rung_entries() == addresses).any()
    assert (stalled.grades == SEARCH).all()  # no technique made progress
    assert (rung_entries() == addresses).all()
    again = grade_grids(PUZZLES)
    assert (again.grades == real.grades).all() and (again.steps == real.steps).all()


def test_a_board_from_python_is_checked_before_a_rung_reads_it():
    values, candidates = np.zeros(81, np.uint8), np.full(81, 0x1FF, np.int32)
    assert apply_rung(0, values, candidates) == 0  # an open board: no hidden single
    assert apply_rung(np.int64(1), values, candidates) == 0  # a numpy integer too
    with pytest.raises(ValueError, match="rung must be from 0 to 15"):
        apply_rung(16, values, candidates)
    with pytest.raises(TypeError, match="uint8 values and int32 candidates"):
        apply_rung(0, values.astype(np.int64), candidates)
    with pytest.raises(ValueError, match=r"\(81,\)"):
        apply_rung(0, values[:80], candidates[:80])
    with pytest.raises(ValueError, match="C-contiguous"):
        apply_rung(0, np.zeros(162, np.uint8)[::2], candidates)
