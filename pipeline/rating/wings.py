"""Wings: a pivot cell and two pincer cells it sees, which between them force one digit `z`
into one of the pincers, so `z` leaves every cell that sees both pincers (and, for XYZ-wing,
the pivot too, which may hold `z` itself).
"""

import numpy as np
from numba import njit

from pipeline.rating.board import IS_PEER, PEERS, POPCOUNT, eliminate


@njit(nogil=True, cache=True)
def xy_wing(values: np.ndarray, candidates: np.ndarray) -> int:
    """XY-wing: a pivot with candidates {x, y} sees a pincer {x, z} and a pincer {y, z}.
    Whichever of x, y the pivot takes, one pincer is left with z, so z leaves every cell that
    sees both pincers."""
    removed = 0
    pincers = np.empty(20, dtype=np.int64)
    for pivot in range(81):
        xy = candidates[pivot]
        if POPCOUNT[xy] != 2:
            continue
        count = 0
        for peer in PEERS[pivot]:
            mask = candidates[peer]
            if POPCOUNT[mask] == 2 and POPCOUNT[mask & xy] == 1:
                pincers[count] = peer
                count += 1
        for i in range(count):
            a = pincers[i]
            for j in range(i + 1, count):
                b = pincers[j]
                xz, yz = candidates[a], candidates[b]
                z = xz & yz
                if POPCOUNT[z] != 1 or z & xy != 0 or POPCOUNT[xz | yz | xy] != 3:
                    continue
                for cell in PEERS[a]:
                    if cell != b and IS_PEER[b, cell]:
                        removed += eliminate(candidates, cell, z)
    return removed


@njit(nogil=True, cache=True)
def xyz_wing(values: np.ndarray, candidates: np.ndarray) -> int:
    """XYZ-wing: a pivot with candidates {x, y, z} sees a pincer {x, z} and a pincer {y, z}.
    Whichever digit the pivot takes, z ends up in the pivot or in a pincer, so z leaves every
    cell that sees all three."""
    removed = 0
    pincers = np.empty(20, dtype=np.int64)
    for pivot in range(81):
        xyz = candidates[pivot]
        if POPCOUNT[xyz] != 3:
            continue
        count = 0
        for peer in PEERS[pivot]:
            mask = candidates[peer]
            if POPCOUNT[mask] == 2 and mask & ~xyz == 0:
                pincers[count] = peer
                count += 1
        for i in range(count):
            a = pincers[i]
            for j in range(i + 1, count):
                b = pincers[j]
                xz, yz = candidates[a], candidates[b]
                z = xz & yz
                if POPCOUNT[xz] != 2 or POPCOUNT[yz] != 2 or POPCOUNT[z] != 1:
                    continue
                if (xz | yz) != xyz:
                    continue
                for cell in PEERS[pivot]:
                    if cell != a and cell != b and IS_PEER[a, cell] and IS_PEER[b, cell]:
                        removed += eliminate(candidates, cell, z)
    return removed
