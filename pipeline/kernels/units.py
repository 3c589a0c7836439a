"""The board's 27 units as numbers, shared by every kernel that works cell by cell (the
reference strategies, the checks, the technique ladder of `pipeline.rating`).

A *unit* is a row, a column or a box, numbered 0..8 (rows), 9..17 (columns) and 18..26 (boxes,
row-major). Cells are 0..80, row-major. numba freezes these globals into the compiled kernels.

* `UNIT_CELLS[unit]`: the unit's nine cells, in reading order;
* `CELL_UNITS[cell]`: the cell's three units, in the order row, column, box (`ROW`, `COLUMN`,
  `BOX` index them);
* `PEERS[cell]`: the 20 cells that share a unit with it, ascending; `IS_PEER[a, b]` the same
  as a matrix.
"""

import numpy as np

ROW, COLUMN, BOX = 0, 1, 2  # positions in a row of CELL_UNITS
ALL_DIGITS = 0x1FF  # digits 1..9 as bits 0..8


def _unit_tables() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    units = np.zeros((27, 9), dtype=np.int64)
    for i in range(9):
        for j in range(9):
            units[i, j] = 9 * i + j  # row i
            units[9 + i, j] = 9 * j + i  # column i
            units[18 + i, j] = 9 * (3 * (i // 3) + j // 3) + 3 * (i % 3) + j % 3  # box i
    cell_units = np.zeros((81, 3), dtype=np.int64)
    for unit in range(27):
        for cell in units[unit]:
            cell_units[cell, unit // 9] = unit
    is_peer = np.zeros((81, 81), dtype=np.bool_)
    for unit in range(27):
        for a in units[unit]:
            for b in units[unit]:
                is_peer[a, b] = a != b
    peers = np.array([np.flatnonzero(is_peer[cell]) for cell in range(81)], dtype=np.int64)
    return units, cell_units, peers, is_peer


UNIT_CELLS, CELL_UNITS, PEERS, IS_PEER = _unit_tables()
