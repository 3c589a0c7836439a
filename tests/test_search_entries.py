"""The `fast` search calls its two propagations at their addresses (`kernels/fast_calls.py`,
`fast_entries.py`): the kernels do not carry the propagations' code, the warm-up's stand-ins
never reach an answer outside their block, and every way into the search gives the answers
it gave when the propagations were linked."""

import threading

import numpy as np
from numba import njit

from pipeline.grid import parse_puzzles
from pipeline.jobs.generate.puzzles import generate
from pipeline.kernels import codes, find_two_solutions, solve_grids
from pipeline.kernels.callbacks import compiling_only
from pipeline.kernels.enumeration import enumerate_batch
from pipeline.kernels.fast import solve_kernel
from pipeline.kernels.fast_entries import search_entries

PUZZLES = parse_puzzles(generate(40, seed=7)["puzzle"]).grids


def test_the_kernels_call_the_propagations_rather_than_carry_them():
    """The compiled search holds no copy of either propagation: numba would optimise and
    compile it again in every kernel (what made a first `solve` compile 5.6 s). (The kernel
    compiled afresh, uncached: numba shows no code of a kernel it loaded from its cache; its
    parts come from the cache, linked as they would be.)"""
    fresh = njit(nogil=True)(solve_kernel.py_func)
    n = len(PUZZLES)
    out = (
        np.zeros(n, np.int8),
        np.zeros((n, 81), np.uint8),
        *(np.zeros(n, np.int64) for _ in range(4)),
    )
    fresh(PUZZLES, np.zeros(n, np.bool_), search_entries(), 2, 0, *out)
    assert (out[0] == codes.SOLVED).all()
    code = "\n".join(fresh.inspect_llvm().values())
    defined = [line for line in code.splitlines() if line.startswith("define")]
    assert any("_solve_one" in line for line in defined)  # its parts are linked
    assert not any("propagate" in line for line in defined), "a propagation was linked in"


def test_the_stand_ins_answer_only_within_their_block_and_thread():
    """Within `compiling_only()` a search ends at its root (no answer there is true); after
    it, and in every other thread meanwhile, the real propagations answer."""
    real = solve_grids(PUZZLES)
    assert (real.verdicts == codes.SOLVED).all()
    seen: dict[str, np.ndarray] = {}
    inside = threading.Event()
    done = threading.Event()

    def elsewhere() -> None:
        inside.wait(timeout=60)
        seen["other thread"] = solve_grids(PUZZLES).verdicts
        done.set()

    worker = threading.Thread(target=elsewhere)
    worker.start()
    addresses = search_entries().copy()
    with compiling_only():
        stand_in = solve_grids(PUZZLES)
        assert not (search_entries() == addresses).any()
        inside.set()
        done.wait(timeout=60)
    worker.join()
    assert (search_entries() == addresses).all()
    assert (stand_in.verdicts == codes.UNSOLVABLE).all() and (stand_in.nodes == 1).all()
    assert (seen["other thread"] == real.verdicts).all()
    again = solve_grids(PUZZLES)
    assert (again.verdicts == real.verdicts).all() and (again.solutions == real.solutions).all()


def test_every_way_into_the_search_agrees():
    """Solving, counting, two solutions and enumeration take the same propagations."""
    grids = PUZZLES.copy()
    grids[:10, :20] = 0  # some with several solutions
    counted = solve_grids(grids, solutions=50)
    first, seconds = find_two_solutions(grids)
    assert (first.verdicts == solve_grids(grids).verdicts).all()
    several = counted.counts > 1
    assert several.any() and (seconds[several].any(axis=1)).all()
    listed = np.zeros(len(grids), dtype=np.int64)
    for chunk in enumerate_batch(grids, 50):
        np.add.at(listed, chunk.rows, 1)
    assert (listed == counted.counts).all()
