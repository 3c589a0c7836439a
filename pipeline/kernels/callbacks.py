"""Kernel code called through its address rather than linked: numba C callbacks, compiled (or
loaded from numba's cache) once a process, and the call that reaches one from a kernel.

numba links a called kernel part's code into its caller, then optimises and compiles the
whole linked closure again, once for every cached function on the way up. Where a part is
most of a kernel's code (the search's propagations, the rating's techniques), every kernel
that calls it pays for it again; called through a pointer, it is compiled once, side by side
with its callers (docs/BENCHMARKS.md, "Compile time"). Users: `fast_entries.py` (the search)
and `pipeline.rating.rungs` (the rating's ladder).

    entry = callback("propagate", function, signature)    # a numba CFunc; .address
    entries = addresses(TABLE, ("propagate", "light"), ("no_propagate", "no_light"))
    return types.int64(types.int64, board, choice), address_call    # an intrinsic's typing

A kernel is handed the addresses as an argument (an `int64` array), so that it stays cached:
an address differs from process to process. Within `compiling_only()` (the warm-up's lanes),
the owners hand out stand-ins that answer at once, so that a kernel compiles without waiting
for the code it will call.
"""

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np
from llvmlite import ir
from numba import cfunc, types

from pipeline.compiled import cache_root

_lock = threading.Lock()
_callbacks: dict[str, Any] = {}  # name -> numba CFunc, kept alive with its machine code
_local = threading.local()
_addresses: dict[tuple[str, ...], np.ndarray] = {}


def callback(name: str, function: Callable[..., Any], signature: Any) -> Any:
    """`function` as a numba C callback of `signature`, compiled (or loaded from the cache)
    on first use under `name`, once a process, under a lock: the workers' threads share it."""
    with _lock:
        if name not in _callbacks:
            _callbacks[name] = cfunc(signature, cache=cache_root() is not None)(function)
        return _callbacks[name]


def addresses(
    table: dict[str, tuple[Callable[..., Any], Any]],
    names: tuple[str, ...],
    stand_ins: tuple[str, ...],
) -> np.ndarray:
    """`(len(names),) int64`: the addresses, in this process, of the callbacks `names` of
    `table` (name -> (function, signature)), as a kernel's argument; within
    `compiling_only()`, those of `stand_ins`. Each array is made once a process."""
    chosen = stand_ins if stand_ins_wanted() else names
    if chosen not in _addresses:
        found = [callback(name, *table[name]).address for name in chosen]
        _addresses[chosen] = np.array(found, dtype=np.int64)
    return _addresses[chosen]


def stand_ins_wanted() -> bool:
    """Whether this thread is within `compiling_only()`."""
    return getattr(_local, "compiling_only", False)


@contextmanager
def compiling_only() -> Iterator[None]:
    """Within the block, in this thread, kernels get stand-ins for the code they call at its
    address: a kernel called there compiles (or loads) and its answer is not true. For the
    warm-up's lanes only."""
    before = stand_ins_wanted()
    _local.compiling_only = True
    try:
        yield
    finally:
        _local.compiling_only = before


def address_call(context, builder, signature, args):  # noqa: ANN001, ANN201
    """An intrinsic's code: `((ret (*)(...)) address)(arguments...)`, an array passed as its
    data pointer (C-contiguous arrays: the callee reads them as `carray`s), a number as it is."""
    address, *arguments = args
    values = [
        context.make_array(kind)(context, builder, value=value).data
        if isinstance(kind, types.Array)
        else value
        for kind, value in zip(signature.args[1:], arguments, strict=True)
    ]
    returns = context.get_value_type(signature.return_type)
    function = ir.FunctionType(returns, [value.type for value in values])
    return builder.call(builder.inttoptr(address, function.as_pointer()), values)
