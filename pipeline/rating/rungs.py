"""The ladder's techniques (`ladder.TECHNIQUES`, by rung) in two halves, each a C callback of
its own that the ladder calls at its address (`pipeline.kernels.callbacks` says why).

    entries = rung_entries()                           # (2,) int64: the two halves' addresses
    made = apply_rung_at(entries, rung, values, candidates)        # in a kernel
    made = apply_rung(rung, values, candidates)                    # from Python (tests)

The techniques are most of the rating's code. When the ladder linked the two halves, a first
`solve --rate` compiled them into each half, then again into the ladder (`grade_kernel`,
its halves cached: 2.35-2.8 s in a fresh process, 1.44 s of it LLVM re-optimising and
compiling the techniques); called at their addresses, 1.73-1.77 s (LLVM 0.63), and it need
not wait for its halves (the warm-up compiles it beside them, on stand-ins:
`compiling_only()`). 2-core AMD EPYC (Zen 4), numba 0.68; docs/BENCHMARKS.md, "Compile
time".

Each size is written out, not read from a table of (technique, size) by rung: a size known
when compiling lets numba specialise the subset and fish loops; the table made those rungs
12-40% slower a sweep (naked quad 5.6 -> 7.4 us, naked pair 1.6 -> 2.3 us, on 2,405 stalled
top1465 and forum-hardest boards, one core, best of 15) and grading 8-10% slower on top1465
and forum_hardest_1905_11+.
"""

import ctypes
from typing import Any

import numpy as np
from numba import carray, types
from numba.extending import intrinsic

from pipeline.compiled import inline_part
from pipeline.kernels.callbacks import address_call, addresses, callback
from pipeline.rating.chains import x_chain, xy_chain
from pipeline.rating.fish import fish
from pipeline.rating.singles import hidden_single, locked_candidates, naked_single
from pipeline.rating.subsets import hidden_subset, naked_subset
from pipeline.rating.wings import wing

HARD_RUNGS = 9  # the first rung of the second half: xy_wing
LAST_RUNG = 15  # xy_chain
_RUNG = types.int64(types.int64, types.CPointer(types.uint8), types.CPointer(types.int32))


def _easy_rungs(rung, values_at, candidates_at):  # noqa: ANN001, ANN202
    """The rungs below HARD_RUNGS: singles to hidden triples."""
    values = carray(values_at, 81)
    candidates = carray(candidates_at, 81)
    if rung == 0:
        return hidden_single(values, candidates)
    if rung == 1:
        return naked_single(values, candidates)
    if rung == 2:
        return locked_candidates(values, candidates)
    if rung == 3:
        return naked_subset(values, candidates, 2)
    if rung == 4:
        return fish(values, candidates, 2)
    if rung == 5:
        return hidden_subset(values, candidates, 2)
    if rung == 6:
        return naked_subset(values, candidates, 3)
    if rung == 7:
        return fish(values, candidates, 3)
    return hidden_subset(values, candidates, 3)


def _hard_rungs(rung, values_at, candidates_at):  # noqa: ANN001, ANN202
    """The rungs from HARD_RUNGS on: wings, quads, jellyfish, chains."""
    values = carray(values_at, 81)
    candidates = carray(candidates_at, 81)
    if rung == 9:
        return wing(values, candidates, 2)
    if rung == 10:
        return wing(values, candidates, 3)
    if rung == 11:
        return naked_subset(values, candidates, 4)
    if rung == 12:
        return fish(values, candidates, 4)
    if rung == 13:
        return hidden_subset(values, candidates, 4)
    if rung == 14:
        return x_chain(values, candidates)
    return xy_chain(values, candidates)


def _no_rung(rung, values_at, candidates_at):  # noqa: ANN001, ANN202
    """The stand-in of `compiling_only()`: no progress (the ladder stalls at once)."""
    return 0


_HALVES = {
    "easy_rungs": (_easy_rungs, _RUNG),
    "hard_rungs": (_hard_rungs, _RUNG),
    "no_rung": (_no_rung, _RUNG),
}


def rung_entry(half: str) -> Any:
    """A half of the ladder (`easy_rungs`, `hard_rungs`) as a C callback: compiled, or loaded
    from the cache, now."""
    return callback(half, *_HALVES[half])


def rung_entries() -> np.ndarray:
    """`(2,) int64`: the addresses of the two halves, in this process, for the kernels (the
    stand-ins within `compiling_only()`)."""
    return addresses(_HALVES, ("easy_rungs", "hard_rungs"), ("no_rung", "no_rung"))


@intrinsic
def _call_rung(typingctx, address, rung, values, candidates):  # noqa: ANN001, ANN201
    """`int64 half(int64 rung, uint8 *values, int32 *candidates)` at `address`."""
    expected = ((values, types.uint8), (candidates, types.int32))
    for array, dtype in expected:
        if not (isinstance(array, types.Array) and array.ndim == 1 and array.layout == "C"):
            return None
        if array.dtype != dtype:
            return None
    return types.int64(types.int64, types.int64, values, candidates), address_call


@inline_part
def apply_rung_at(
    entries: np.ndarray, rung: int, values: np.ndarray, candidates: np.ndarray
) -> int:
    """One sweep of the technique at `rung` (an index into TECHNIQUES) on a board of `(81,)
    uint8` values and `(81,) int32` candidates: steps made, or -1 (`CONTRADICTION`)."""
    half = entries[0] if rung < HARD_RUNGS else entries[1]
    return _call_rung(half, rung, values, candidates)


def apply_rung(rung: int, values: np.ndarray, candidates: np.ndarray) -> int:
    """`apply_rung_at` from Python: the board's arrays are changed in place."""
    if not 0 <= rung < LAST_RUNG + 1:
        raise ValueError(f"rung must be from 0 to {LAST_RUNG}, not {rung}")
    if not (values.shape == candidates.shape == (81,)):
        raise ValueError("a board is (81,) values and (81,) candidates")
    if values.dtype != np.uint8 or candidates.dtype != np.int32:
        raise TypeError("a board is uint8 values and int32 candidates")
    if not (values.flags.c_contiguous and candidates.flags.c_contiguous):
        raise ValueError("a board's arrays must be C-contiguous")
    entry = rung_entry("easy_rungs" if rung < HARD_RUNGS else "hard_rungs")
    return int(
        entry.ctypes(
            int(rung),
            values.ctypes.data_as(ctypes.POINTER(ctypes.c_uint8)),
            candidates.ctypes.data_as(ctypes.POINTER(ctypes.c_int32)),
        )
    )
