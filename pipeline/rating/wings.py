"""Wings: a pivot cell and two pincer cells it sees, which between them force one digit `z`
into one of the pincers, so `z` leaves every cell that sees both pincers (and, for XYZ-wing,
the pivot too, which may hold `z` itself).

`size` is the pivot's number of candidates: 2 for the XY-wing, 3 for the XYZ-wing; the ladder
calls each as its own rung. The two share the search (a pivot, its bivalue peers as pincers,
every pair of them) and differ in which pincers fit and which cells lose `z`.
"""

import numpy as np

from pipeline.compiled import kernel
from pipeline.kernels.units import IS_PEER, PEERS
from pipeline.rating.board import POPCOUNT, eliminate, eliminate_from_common_peers


@kernel
def wing(values: np.ndarray, candidates: np.ndarray, size: int) -> int:
    """XY-wing (`size` 2): a pivot with candidates {x, y} sees a pincer {x, z} and a pincer
    {y, z}. Whichever of x, y the pivot takes, one pincer is left with z, so z leaves every cell
    that sees both pincers.

    XYZ-wing (`size` 3): a pivot with candidates {x, y, z} sees a pincer {x, z} and a pincer
    {y, z}. Whichever digit the pivot takes, z ends up in the pivot or in a pincer, so z leaves
    every cell that sees all three."""
    removed = 0
    pincers = np.empty(20, dtype=np.int64)
    for pivot in range(81):
        held = candidates[pivot]  # {x, y} or {x, y, z}
        if POPCOUNT[held] != size:
            continue
        count = 0
        for peer in PEERS[pivot]:
            mask = candidates[peer]
            if POPCOUNT[mask] == 2 and (
                POPCOUNT[mask & held] == 1 if size == 2 else mask & ~held == 0
            ):
                pincers[count] = peer
                count += 1
        for i in range(count):
            a = pincers[i]
            for j in range(i + 1, count):
                b = pincers[j]
                xz, yz = candidates[a], candidates[b]
                z = xz & yz
                if size == 2:
                    if POPCOUNT[z] != 1 or z & held != 0 or POPCOUNT[xz | yz | held] != 3:
                        continue
                    removed += eliminate_from_common_peers(candidates, a, b, z)
                    continue
                if POPCOUNT[xz] != 2 or POPCOUNT[yz] != 2 or POPCOUNT[z] != 1:
                    continue
                if (xz | yz) != held:
                    continue
                for cell in PEERS[pivot]:
                    if cell != a and cell != b and IS_PEER[a, cell] and IS_PEER[b, cell]:
                        removed += eliminate(candidates, cell, z)
    return removed
