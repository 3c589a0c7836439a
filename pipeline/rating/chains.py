"""Chains: from a cell that is assumed *not* to hold a digit, a chain of forced conclusions
reaches a cell that must then hold it; so one of the two ends holds it, and the digit leaves
every cell that sees both ends.

* X-chain (one digit): links alternate between strong (the only two places of the digit in a
  row, column or box: if one is not the digit, the other is) and weak (two cells that see each
  other: if one is the digit, the other is not). The shortest X-chains are the skyscraper, the
  two-string kite and the turbot fish.
* XY-chain (cells with two candidates): in a cell {a, b} that is not a, b is placed; the next
  cell of the chain sees it and holds {b, c}, so it is c; and so on, until a cell whose forced
  digit is the one the first cell was assumed not to hold. The XY-wing is the 3-cell XY-chain.

Both search breadth-first from every possible start, over (cell, conclusion) states, so that
any chain is found, whatever its length. A walk that passes a cell twice is still a chain of
true implications, so no path bookkeeping is needed for soundness.
"""

import numpy as np

from pipeline.compiled import kernel
from pipeline.kernels.units import IS_PEER, PEERS, UNIT_CELLS
from pipeline.rating.board import POPCOUNT, eliminate_from_common_peers


@kernel
def _strong_links(candidates: np.ndarray, bit: int, partner: np.ndarray) -> bool:
    """`partner[cell, k]`: the other place of the digit in the cell's k-th unit (row, column,
    box) when the unit has exactly two, else -1. False when the digit has no strong link."""
    partner[:, :] = -1
    found = False
    for unit in range(27):
        first, second, count = -1, -1, 0
        for j in range(9):
            cell = UNIT_CELLS[unit, j]
            if candidates[cell] & bit:
                count += 1
                if count == 1:
                    first = cell
                else:
                    second = cell
        if count == 2:
            kind = unit // 9  # 0 row, 1 column, 2 box: the k of CELL_UNITS
            partner[first, kind] = second
            partner[second, kind] = first
            found = True
    return found


@kernel
def x_chain(values: np.ndarray, candidates: np.ndarray) -> int:
    """X-chain: for one digit, a chain strong - weak - strong ... - strong from cell A to cell
    E says "if A is not the digit, E is": the digit leaves every cell that sees both A and E."""
    removed = 0
    partner = np.empty((81, 3), dtype=np.int64)
    seen = np.zeros((81, 2), dtype=np.bool_)  # state (cell, 0: is not the digit / 1: is)
    queue = np.empty(2 * 81, dtype=np.int64)  # states as 2 * cell + is
    for d in range(9):
        bit = 1 << d
        if not _strong_links(candidates, bit, partner):
            continue
        for start in range(81):
            if partner[start, 0] < 0 and partner[start, 1] < 0 and partner[start, 2] < 0:
                continue
            seen[:, :] = False
            seen[start, 0] = True
            queue[0] = 2 * start
            head, tail = 0, 1
            while head < tail:
                state = queue[head]
                head += 1
                cell, is_digit = state // 2, state % 2
                if is_digit == 0:  # strong links: the other place of the digit in a unit is it
                    for k in range(3):
                        other = partner[cell, k]
                        if other >= 0 and not seen[other, 1]:
                            seen[other, 1] = True
                            queue[tail] = 2 * other + 1
                            tail += 1
                else:  # the start or this cell holds the digit
                    if cell != start:
                        removed += eliminate_from_common_peers(candidates, start, cell, bit)
                    for peer in PEERS[cell]:  # weak links: a peer of the digit is not it
                        linked = (
                            partner[peer, 0] >= 0 or partner[peer, 1] >= 0 or partner[peer, 2] >= 0
                        )
                        if linked and not seen[peer, 0]:
                            seen[peer, 0] = True
                            queue[tail] = 2 * peer
                            tail += 1
    return removed


@kernel
def xy_chain(values: np.ndarray, candidates: np.ndarray) -> int:
    """XY-chain: bivalue cells, each seeing the next, where assuming the first cell is not z
    forces each next cell in turn, down to a last cell forced to z: z leaves every cell that
    sees both the first and the last cell."""
    removed = 0
    pairs = np.empty(81, dtype=np.int64)  # the bivalue cells
    count = 0
    for cell in range(81):
        if POPCOUNT[candidates[cell]] == 2:
            pairs[count] = cell
            count += 1
    if count < 3:
        return 0
    seen = np.zeros((81, 9), dtype=np.bool_)  # state (cell, the digit it is forced to hold)
    queue = np.empty(81 * 9, dtype=np.int64)  # states as 9 * cell + digit index
    for i in range(count):
        start = pairs[i]
        both = candidates[start]
        if POPCOUNT[both] != 2:
            continue
        z = both & -both
        for _ in range(2):  # z is each of the start's two digits in turn
            z_index = POPCOUNT[z - 1]
            seen[:, :] = False
            first = POPCOUNT[(both ^ z) - 1]  # the digit the start holds if it is not z
            seen[start, first] = True
            queue[0] = 9 * start + first
            head, tail = 0, 1
            while head < tail:
                state = queue[head]
                head += 1
                cell, digit = state // 9, state % 9
                if digit == z_index and cell != start:
                    removed += eliminate_from_common_peers(candidates, start, cell, z)
                for j in range(count):
                    nxt = pairs[j]
                    mask = candidates[nxt]
                    if IS_PEER[cell, nxt] and POPCOUNT[mask] == 2 and mask >> digit & 1:
                        forced = POPCOUNT[(mask ^ (1 << digit)) - 1]
                        if not seen[nxt, forced]:
                            seen[nxt, forced] = True
                            queue[tail] = 9 * nxt + forced
                            tail += 1
            z = both ^ z
    return removed
