"""Small numba building blocks shared by the kernels: bit counting, a nanosecond clock, arrays
without reference counting, and three vector operations of the `fast` kernel (a band's eight
digits cleared at once; a grid's cells compared with every value, and a board's digits written
back, 32 bytes at a time: `value_masks` and `write_digits` took Kaggle rows from 0.96 to 1.06M
puzzles/s on one core, docs/BENCHMARKS.md "Ideas measured"), and a band's triads gathered by
`pext` where the CPU runs it fast (`row_box_triads`, `pipeline.cpu.fast_pext`).

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


@intrinsic
def value_masks(typingctx, cells, masks):  # noqa: ANN001, ANN201
    """For a grid's 81 cells (uint8, contiguous), `masks[3 * value + band]` = the 27-bit set of
    the band's cells holding `value` (0..9), each band's bytes compared with every value at
    once (32 lanes a compare: AVX2 and AVX-512 here, two 16-byte halves on SSE2); returns
    whether a cell holds a value above 9. Reads exactly the 81 bytes (the third band from byte
    49, its 27 cells in the top lanes). No bounds check: the caller guarantees 81 cells and
    30 masks."""

    def codegen(context, builder, signature, args):  # noqa: ANN001, ANN202
        data = context.make_array(signature.args[0])(context, builder, value=args[0]).data
        out = context.make_array(signature.args[1])(context, builder, value=args[1]).data
        byte, lane_bits, word = ir.IntType(8), ir.IntType(32), ir.IntType(64)
        vector = ir.VectorType(byte, 32)
        above = ir.Constant(lane_bits, 0)
        for band, (offset, shift) in enumerate(((0, 0), (27, 0), (49, 5))):
            pointer = builder.gep(data, [ir.Constant(lane_bits, offset)])
            cells_ = builder.load(builder.bitcast(pointer, vector.as_pointer()), align=1)
            for value in range(10):
                target = builder.gep(out, [ir.Constant(lane_bits, 3 * value + band)])
                hits = _band_lanes(builder, "==", cells_, value, shift)
                builder.store(builder.zext(hits, word), target)
            above = builder.or_(above, _band_lanes(builder, ">", cells_, 9, shift))
        return builder.icmp_unsigned("!=", above, ir.Constant(lane_bits, 0))

    return types.boolean(cells, masks), codegen


def _band_lanes(
    builder: ir.IRBuilder, compare: str, cells: ir.Value, value: int, shift: int
) -> ir.Value:
    """The 27-bit set (i32) of a band's cells, 32 bytes loaded from `shift` bytes before its
    first, for which `cells compare value` holds."""
    hit = builder.icmp_unsigned(compare, cells, ir.Constant(cells.type, [value] * 32))
    bits = builder.bitcast(hit, ir.IntType(32))
    if shift:
        bits = builder.lshr(bits, ir.Constant(ir.IntType(32), shift))
    return builder.and_(bits, ir.Constant(ir.IntType(32), (1 << 27) - 1))


@intrinsic
def write_digits(typingctx, board, out):  # noqa: ANN001, ANN201
    """A complete board's 81 digits into `out` (uint8, contiguous): `board[9 * band + digit]`
    is the band's 27-bit set of cells holding `digit + 1`. Each of three 32-byte stores
    (bytes 0-31, 27-58, 49-80: each byte written is its cell's digit, where stores overlap
    the same one) is built by a select a digit, from the masks' bits spread over 32 lanes.
    Writes exactly the 81 bytes. No bounds check: the caller guarantees 27 slots and 81 cells."""

    def codegen(context, builder, signature, args):  # noqa: ANN001, ANN202
        slots = context.make_array(signature.args[0])(context, builder, value=args[0]).data
        data = context.make_array(signature.args[1])(context, builder, value=args[1]).data
        byte, lane_bits, word = ir.IntType(8), ir.IntType(32), ir.IntType(64)
        vector = ir.VectorType(byte, 32)
        flags = ir.VectorType(ir.IntType(1), 32)
        masks = [
            builder.load(builder.gep(slots, [ir.Constant(lane_bits, slot)])) for slot in range(27)
        ]
        for offset, (band, shift) in ((0, (0, 0)), (27, (1, 0)), (49, (1, 22))):
            digits = ir.Constant(vector, [0] * 32)
            for digit in range(9):
                low = masks[9 * band + digit]
                if shift:  # bytes 49-53 are the middle band's cells 22-26, then the bottom band
                    spread = builder.or_(
                        builder.lshr(low, ir.Constant(word, shift)),
                        builder.shl(masks[18 + digit], ir.Constant(word, 27 - shift)),
                    )
                else:  # the band, then the next band's first five cells
                    nxt = masks[9 * (band + 1) + digit]
                    spread = builder.or_(low, builder.shl(nxt, ir.Constant(word, 27)))
                lanes = builder.bitcast(builder.trunc(spread, lane_bits), flags)
                digits = builder.select(lanes, ir.Constant(vector, [digit + 1] * 32), digits)
            pointer = builder.gep(data, [ir.Constant(lane_bits, offset)])
            builder.store(digits, builder.bitcast(pointer, vector.as_pointer()), align=1)
        return context.get_dummy_value()

    return types.none(board, out), codegen


@intrinsic
def row_box_triads(typingctx, cells):  # noqa: ANN001, ANN201
    """The 9-bit set of a band's row-box triads (bit 3 * row + box) holding at least one of
    the band's 27-bit `cells`: each triad's three bits or-ed onto its first (`x | x >> 1 |
    x >> 2`), then those nine bits gathered by one `pext` (BMI2). Only where
    `pipeline.cpu.fast_pext()`: elsewhere the instruction is missing or slow, and
    `fast_board._triad_pattern` reads three tables instead."""

    def codegen(context, builder, signature, args):  # noqa: ANN001, ANN202
        half = ir.IntType(32)
        x = builder.trunc(args[0], half)
        x = builder.or_(
            x,
            builder.or_(
                builder.lshr(x, ir.Constant(half, 1)), builder.lshr(x, ir.Constant(half, 2))
            ),
        )
        pext = builder.module.declare_intrinsic(
            "llvm.x86.bmi.pext.32", fnty=ir.FunctionType(half, [half, half])
        )
        firsts = ir.Constant(half, sum(1 << (3 * triad) for triad in range(9)))
        return builder.zext(builder.call(pext, [x, firsts]), ir.IntType(64))

    return types.int64(cells), codegen
