"""Small numba building blocks shared by the kernels: bit counting, a nanosecond clock, arrays
without reference counting, one eight-lane vector operation.

All of them compile to single instructions or a vDSO call and keep `cache=True` working
(no ctypes function pointers baked into the compiled code).
"""

import numpy as np
from llvmlite import ir
from numba import types
from numba.extending import intrinsic

from pipeline.compiled import kernel

_clock_gettime = types.ExternalFunction(
    "clock_gettime", types.int32(types.int32, types.CPointer(types.int64))
)
_CLOCK_MONOTONIC = 1


@intrinsic
def popcount(typingctx, x):  # noqa: ANN001, ANN201
    """Number of set bits of an integer (LLVM ctpop)."""

    def codegen(context, builder, signature, args):  # noqa: ANN001, ANN202
        fn = builder.module.declare_intrinsic("llvm.ctpop", [args[0].type])
        return builder.call(fn, args)

    return x(x), codegen


@intrinsic
def lowest_bit_index(typingctx, x):  # noqa: ANN001, ANN201
    """Index of the lowest set bit (LLVM cttz); undefined for 0."""

    def codegen(context, builder, signature, args):  # noqa: ANN001, ANN202
        fn = builder.module.declare_intrinsic("llvm.cttz", [args[0].type, ir.IntType(1)])
        return builder.call(fn, [args[0], ir.Constant(ir.IntType(1), 1)])

    return x(x), codegen


@kernel
def now_ns(buf: np.ndarray) -> int:
    """Monotonic clock in ns; `buf` is a scratch int64 array of length 2 (a struct timespec)."""
    _clock_gettime(_CLOCK_MONOTONIC, buf.ctypes)
    return buf[0] * 1_000_000_000 + buf[1]


@intrinsic
def unowned(typingctx, array):  # noqa: ANN001, ANN201
    """The same array (same data, shape and strides) without its reference-counted owner.

    Numba counts references to an array each time it is passed to a function that is not
    inlined, and a count is an atomic (locked) instruction: in a search that passes its
    board to the propagation at every node, these counts took 17% of the time. A view made
    by `unowned` has no owner to count, so they cost nothing; the caller must keep the
    original array alive (used after the last use of the view) for as long as the view is
    used."""

    def codegen(context, builder, signature, args):  # noqa: ANN001, ANN202
        source = context.make_array(signature.args[0])(context, builder, value=args[0])
        out = context.make_array(signature.return_type)(context, builder)
        out.meminfo = context.get_constant_null(types.MemInfoPointer(types.voidptr))
        out.parent = context.get_constant_null(types.pyobject)
        out.nitems = source.nitems
        out.itemsize = source.itemsize
        out.data = source.data
        out.shape = source.shape
        out.strides = source.strides
        return out._getvalue()

    return array(array), codegen


@intrinsic
def clear_eight(typingctx, array, start, cells):  # noqa: ANN001, ANN201
    """`array[start:start + 8] &= ~cells` on an int64 array, as one vector operation; returns
    the 8-bit set of the entries that lost something (bit k for `array[start + k]`).

    LLVM does not vectorize this loop from numba code (a reduction of comparisons into a bit
    set); written as vector IR it is a broadcast, a load, an and-not, a compare and a store
    (AVX-512 here; two halves on AVX2, scalar code elsewhere). No bounds check: the caller
    guarantees `start + 8 <= len(array)`."""

    def codegen(context, builder, signature, args):  # noqa: ANN001, ANN202
        data = context.make_array(signature.args[0])(context, builder, value=args[0]).data
        word = ir.IntType(64)
        vector = ir.VectorType(word, 8)
        pointer = builder.bitcast(builder.gep(data, [args[1]]), vector.as_pointer())
        before = builder.load(pointer, align=8)
        keep = builder.not_(args[2])
        keep_all = ir.Constant(vector, ir.Undefined)
        for lane in range(8):
            keep_all = builder.insert_element(keep_all, keep, ir.Constant(ir.IntType(32), lane))
        after = builder.and_(before, keep_all)
        builder.store(after, pointer, align=8)
        lost = builder.icmp_unsigned("!=", before, after)
        return builder.zext(builder.bitcast(lost, ir.IntType(8)), word)

    return types.int64(array, types.intp, types.int64), codegen
