"""The `fast` strategy's board (see `pipeline.kernels.fast` for its layout): slot numbers, the
states propagation ends in, the lookup tables (`fast_tables`), and the small bit operations
every stage shares."""

from pipeline.compiled import kernel_part
from pipeline.cpu import fast_pext
from pipeline.kernels.bits import row_box_triads
from pipeline.kernels.fast_tables import ROW_MASK, build

_T = build()
ROW_TRIADS = _T["ROW_TRIADS"]
TRIAD_CELLS = _T["TRIAD_CELLS"]
TRIADS_KEPT = _T["TRIADS_KEPT"]
KEPT_CELLS = _T["KEPT_CELLS"]
CONFIGURATIONS = _T["CONFIGURATIONS"]
CONFIGURATION_COUNT = _T["CONFIGURATION_COUNT"]
CONFIGURATION_TRIADS = _T["CONFIGURATION_TRIADS"]
CONFIGURATIONS_UNION = _T["CONFIGURATIONS_UNION"]
COMPATIBLE = _T["COMPATIBLE"]
ROW_CELLS = _T["ROW_CELLS"]
BOX_CELLS = _T["BOX_CELLS"]
NEIGHBOURS_KEEP = _T["NEIGHBOURS_KEEP"]

UNSOLVED = 27  # slots 27..29 of the board hold each band's unsolved cells
DIGIT_SLOTS = 1 | (1 << 9) | (1 << 18)  # the slots of digit 0 (shift left by the digit)
FIELD = 30  # slots 30..38: each digit's triad patterns (see `fast_triads`), kept current
BOARD_SLOTS = 39
CHOICE = 7  # the branch chosen: digit, three band masks of the first way, three of the other
CONTRADICTION = 0
COMPLETE = 1
STUCK = 2


@kernel_part
def _triads_by_tables(cells: int) -> int:
    """The 9-bit set of row-box triads of a band that hold at least one of `cells`: three
    table loads, one a row (for CPUs without a fast `pext`)."""
    return (
        ROW_TRIADS[cells & ROW_MASK]
        | (ROW_TRIADS[(cells >> 9) & ROW_MASK] << 3)
        | (ROW_TRIADS[(cells >> 18) & ROW_MASK] << 6)
    ) & 511  # (the masks spare numba's checks for negative indices)


@kernel_part
def _triads_by_pext(cells: int) -> int:
    """`_triads_by_tables` by one `pext` (`bits.row_box_triads`): every set 3-13% faster on
    one core of an AMD EPYC (Zen 3 class), Kaggle rows and 17-clue the most (docs/BENCHMARKS.md,
    "Ideas measured"). The band update's critical path runs through it into `KEPT_CELLS`."""
    return row_box_triads(cells)


# Chosen once, when the kernels are compiled (`pipeline.cpu.fast_pext`, in their cache's stamp).
_triad_pattern = _triads_by_pext if fast_pext() else _triads_by_tables


@kernel_part
def _columns(cells: int) -> int:
    """The 9-bit set of columns holding at least one of the band `cells`."""
    return (cells | (cells >> 9) | (cells >> 18)) & ROW_MASK


@kernel_part
def _spread_columns(columns: int) -> int:
    """A 9-bit column set with each stack's three columns moved to bits 9 * stack."""
    return (columns & 7) | ((columns & 0x38) << 6) | ((columns & 0x1C0) << 12)


@kernel_part
def _gather_columns(fields: int, band: int) -> int:
    """Inverse of `_spread_columns` for one band of the three stack patterns in `fields`."""
    x = fields >> (3 * band)
    return (x & 7) | ((x >> 6) & 0x38) | ((x >> 12) & 0x1C0)
