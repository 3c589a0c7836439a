"""Lookup tables of the `fast` kernels, built once at import (numba freezes them as constants).

A band is three rows; its 27 cells are bits `9 * row + column` of one integer. A *triad* is the
three cells where a row of the band meets one of its boxes (a minirow), numbered
`3 * row + box`; a 9-bit *triad pattern* says which triads still hold a digit. The same tables
serve stacks (three columns of boxes): there a triad is where a band meets a column of the
stack, numbered `3 * band + column`.

A digit stands once in each row and once in each box of a band, so its triads form a
permutation (row -> box): six *configurations*, numbered as tdoku numbers them (the three
cyclic permutations first).
"""

import numpy as np

ALL_CELLS = 0x7FFFFFF  # 27 bits: the cells of one band
ROW_MASK = 0x1FF  # one row of a band
COLUMNS_TO_BAND = 0x40201  # multiply a 9-bit column set to cover the band's three rows
PERMUTATIONS = ((0, 1, 2), (1, 2, 0), (2, 0, 1), (2, 1, 0), (0, 2, 1), (1, 0, 2))


def _triads(cells: int) -> int:
    """Triad pattern of a set of band cells."""
    return sum(1 << t for t in range(9) if cells >> (9 * (t // 3) + 3 * (t % 3)) & 7)


def build() -> dict[str, np.ndarray]:
    """Every table, by name."""
    row_triads = np.array([_triads(row) for row in range(512)], dtype=np.int64)  # 3-bit boxes
    triad_cells = np.array(
        [
            sum(7 << (9 * (t // 3) + 3 * (t % 3)) for t in range(9) if ts >> t & 1)
            for ts in range(512)
        ],
        dtype=np.int64,
    )
    configuration_triads = np.array(
        [sum(1 << (3 * r + perm[r]) for r in range(3)) for perm in PERMUTATIONS], dtype=np.int64
    )
    configurations = np.zeros(512, dtype=np.int64)  # pattern -> 6-bit set of configurations
    for pattern in range(512):
        for k, triads in enumerate(configuration_triads):
            if pattern & triads == triads:
                configurations[pattern] |= 1 << k
    kept = np.zeros(512, dtype=np.int64)  # pattern -> its triads that are in a configuration
    union = np.zeros(64, dtype=np.int64)  # set of configurations -> their triads
    for configs in range(64):
        for k in range(6):
            if configs >> k & 1:
                union[configs] |= configuration_triads[k]
    for pattern in range(512):
        kept[pattern] = union[configurations[pattern]]
    compatible = np.zeros(512, dtype=np.int64)  # triads -> the triads allowed beside all of them
    for triads in range(512):
        allowed = 511
        for t in range(9):
            if triads >> t & 1:
                r, k = divmod(t, 3)
                line = (7 << (3 * r)) | (0x49 << k)  # its row and its box, in triad numbers
                allowed &= ~line | (1 << t)
        compatible[triads] = allowed
    counts = np.array([bin(int(c)).count("1") for c in configurations], dtype=np.int64)
    rows = np.array(  # 3-bit set of a band's rows -> their cells
        [sum(ROW_MASK << (9 * r) for r in range(3) if s >> r & 1) for s in range(8)], dtype=np.int64
    )
    boxes = np.array(  # 3-bit set of a band's boxes -> their cells
        [sum((7 << (3 * k)) * COLUMNS_TO_BAND for k in range(3) if s >> k & 1) for s in range(8)],
        dtype=np.int64,
    )
    # pattern -> the cells of its kept triads (27 bits) | the kept triads << 32: one load
    # where the band update needs both (0 when no configuration is left)
    kept_cells = triad_cells[kept] | (kept << 32)
    # 9-bit set of the columns where a digit may stand in a band -> the cells of the other two
    # bands the digit keeps: a box whose cells for the digit are in one column puts the digit
    # in that column, which the stack's other boxes then lose
    neighbours_keep = np.full(512, ALL_CELLS, dtype=np.int64)
    for columns in range(512):
        for box in range(3):
            c = (columns >> (3 * box)) & 7
            if c and c & (c - 1) == 0:
                neighbours_keep[columns] &= ~(COLUMNS_TO_BAND << (3 * box + c.bit_length() - 1))
    return {
        "ROW_TRIADS": row_triads,
        "NEIGHBOURS_KEEP": neighbours_keep,
        "KEPT_CELLS": kept_cells,
        "TRIAD_CELLS": triad_cells,
        "TRIADS_KEPT": kept,
        "CONFIGURATIONS": configurations,
        "CONFIGURATION_COUNT": counts,
        "CONFIGURATION_TRIADS": configuration_triads,
        "CONFIGURATIONS_UNION": union,
        "COMPATIBLE": compatible,
        "ROW_CELLS": rows,
        "BOX_CELLS": boxes,
    }
