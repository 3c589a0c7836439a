"""The search's two propagations as C callbacks, and their addresses for the kernels that call
them (`fast_calls.py` says why they are not linked).

    entries = search_entries()      # (2,) int64: propagate's address, light_propagate's
    solve_kernel(grids, skip, entries, 2, 0, *outputs)

Each callback is compiled on first use (or loaded from numba's cache, as the kernels are),
once a process, under a lock: the workers' threads share it. The warm-up compiles the two
side by side, in lanes of their own (`run.warmup`: `fast_propagate`, `fast_light`), and the
kernels that call them beside them: a kernel is compiled by a first call, so in those lanes
`compiling_only()` has `search_entries()` give stand-ins that answer "contradiction" at once
(a search on them ends at its root), and the kernel compiles without waiting for the
propagation it will call.
"""

from typing import Any

import numpy as np
from numba import carray, types

from pipeline.kernels.callbacks import addresses, callback
from pipeline.kernels.fast_board import CHOICE, CONTRADICTION
from pipeline.kernels.fast_light import light_propagate
from pipeline.kernels.fast_propagate import BOARD_SLOTS, propagate

BOARD = BOARD_SLOTS + 4  # a row of `boards` (`fast`)
FIELDS = 9
_POINTER = types.CPointer(types.int64)
_PROPAGATE = types.int64(_POINTER, types.int64, _POINTER, _POINTER)
_LIGHT = types.int64(_POINTER, types.int64, _POINTER)


def _propagate_entry(board, dirty, fields, choice):  # noqa: ANN001, ANN202
    return propagate(carray(board, BOARD), dirty, carray(fields, FIELDS), carray(choice, CHOICE))


def _light_entry(board, dirty, choice):  # noqa: ANN001, ANN202
    return light_propagate(carray(board, BOARD), dirty, carray(choice, CHOICE))


def _no_propagate(board, dirty, fields, choice):  # noqa: ANN001, ANN202
    return CONTRADICTION


def _no_light(board, dirty, choice):  # noqa: ANN001, ANN202
    return CONTRADICTION


_CALLBACKS = {
    "propagate": (_propagate_entry, _PROPAGATE),
    "light": (_light_entry, _LIGHT),
    "no_propagate": (_no_propagate, _PROPAGATE),
    "no_light": (_no_light, _LIGHT),
}


def _callback(name: str) -> Any:
    return callback(name, *_CALLBACKS[name])


def propagate_entry() -> Any:
    """`fast_propagate.propagate` as a C callback (compiled, or loaded from the cache, now)."""
    return _callback("propagate")


def light_entry() -> Any:
    """`fast_light.light_propagate` as a C callback."""
    return _callback("light")


def search_entries() -> np.ndarray:
    """`(2,) int64`: the addresses of the two callbacks, in this process, for the kernels (the
    stand-ins within `compiling_only()`)."""
    return addresses(_CALLBACKS, ("propagate", "light"), ("no_propagate", "no_light"))
