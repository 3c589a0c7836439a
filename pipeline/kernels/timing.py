"""Per-puzzle times that repeat: a puzzle's time is measured again when a preemption shows.

A kernel times each puzzle with the monotonic clock, read once a puzzle (a vDSO call: about
20 ns, under 3% of the easiest puzzle's time). On a busy machine the scheduler can stop a
worker in the middle of a puzzle for milliseconds, and that puzzle would look hard. So after a
batch, the puzzles whose time is far above what their search effort predicts (`OUTLIER` times
the batch's median time per node, and over `FLOOR_NS`) are solved again `RETIMES` times and
keep their least time: a preemption rarely strikes the same puzzle four times. At most
`MAX_SHARE` of a batch (the worst first) is measured again, so a uniformly slow batch costs
little more.

The thread's CPU clock would not count preemptions at all, but reading it is a system call
(0.3-0.5 us here: a quarter of an easy puzzle's time), far over the 5% the timing may cost.
"""

from collections.abc import Callable

import numpy as np

OUTLIER = 4.0  # a time this many times what its nodes predict is measured again
FLOOR_NS = 20_000  # ... when it is also over this (a preemption costs milliseconds)
RETIMES = 3
MAX_SHARE = 0.02  # of a batch, plus a few: the worst outliers first
MIN_SAMPLE = 16  # timed puzzles needed for a batch's median time per node


def outliers(nodes: np.ndarray, solve_ns: np.ndarray) -> np.ndarray:
    """Positions whose time is far above what their nodes predict, worst first."""
    timed = np.flatnonzero(solve_ns > 0)
    if timed.size < MIN_SAMPLE:
        return np.zeros(0, dtype=np.int64)
    effort = nodes[timed] + 1.0  # the root's propagation costs about a node
    per_node = float(np.median(solve_ns[timed] / effort))
    excess = solve_ns[timed] / (OUTLIER * per_node * effort)
    slow = (excess > 1.0) & (solve_ns[timed] > FLOOR_NS)
    order = np.argsort(-excess[slow], kind="stable")
    return timed[slow][order][: int(MAX_SHARE * timed.size) + 4]


def retime(
    grids: np.ndarray,
    nodes: np.ndarray,
    solve_ns: np.ndarray,
    solve_again: Callable[[np.ndarray], np.ndarray],
) -> int:
    """Measure the outliers again (`solve_again(grids)` returns their times) and keep each
    one's least time, in `solve_ns`; returns how many were measured again."""
    again = outliers(nodes, solve_ns)
    if again.size:
        subset = np.ascontiguousarray(grids[again])
        for _ in range(RETIMES):
            solve_ns[again] = np.minimum(solve_ns[again], solve_again(subset))
    return int(again.size)
