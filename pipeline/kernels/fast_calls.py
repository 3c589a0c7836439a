"""The search's two propagations called through their addresses, not linked into the kernels
that search (`fast`, `two_solutions`, their pencilmark twins, `enumerate`).

numba links a called kernel part's code into its caller, then optimises and compiles the
whole linked closure again, once for every cached function on the way up. The propagations
are most of the search's code, so every kernel that searched paid for them again: a first
`solve` spent 5.6 s of its 11 s compiling `solve_kernel` on top of its cached parts (2-core
AMD EPYC). Called through a pointer, they are compiled once, as C callbacks of their own
(`fast_entries.py`), side by side with the kernels that call them, which compile in about
half the time (3.3 CPU s for `solve_kernel`). The call costs an indirect jump a propagation:
the kernel alone on every public set, timed as `benchmarks.versus_tdoku` times it, moved
within its noise (docs/BENCHMARKS.md, "Ideas measured").

    state = call_propagate(entries[0], board, dirty, fields, choice)   # fast_propagate.propagate
    state = call_light(entries[1], board, dirty, choice)               # fast_light.light_propagate

`entries` is the `(2,) int64` array `fast_entries.search_entries()` gives, handed to each
kernel as an argument (so the kernels stay cached: an address differs from process to
process). The arrays are C-contiguous int64 (a board row, the scratch); their data pointers
are passed (`callbacks.address_call`, the rating's ladder's way to its techniques too).
"""

from numba import types
from numba.extending import intrinsic

from pipeline.kernels.callbacks import address_call


def _int64_arrays(*kinds: types.Type) -> bool:
    return all(isinstance(k, types.Array) and k.dtype == types.int64 and k.ndim == 1 for k in kinds)


@intrinsic
def call_propagate(typingctx, address, board, dirty, fields, choice):  # noqa: ANN001, ANN201
    """`fast_propagate.propagate(board, dirty, fields, choice)` at `address`."""
    if not _int64_arrays(board, fields, choice):
        return None
    return types.int64(types.int64, board, types.int64, fields, choice), address_call


@intrinsic
def call_light(typingctx, address, board, dirty, choice):  # noqa: ANN001, ANN201
    """`fast_light.light_propagate(board, dirty, choice)` at `address`."""
    if not _int64_arrays(board, choice):
        return None
    return types.int64(types.int64, board, types.int64, choice), address_call
