"""Per-puzzle times that repeat: a time a preemption inflated is measured again."""

import numpy as np

from pipeline.kernels import solve_grids
from pipeline.kernels.timing import FLOOR_NS, outliers, retime
from tests.conftest import shared_puzzles


def test_a_time_far_above_what_its_nodes_predict_is_an_outlier():
    nodes = np.array([1] * 50 + [40, 1, 1])
    ns = np.array([3_000] * 50 + [120_000, 5_000_000, 0])  # 40 nodes: slow but expected
    assert outliers(nodes, ns).tolist() == [51]  # the easy puzzle that took 5 ms; not the empty


def test_small_excesses_and_small_batches_are_left_alone():
    nodes = np.ones(50, dtype=np.int64)
    ns = np.full(50, 2_000)
    ns[7] = FLOOR_NS - 1  # ten times its prediction, but a cache miss, not a preemption
    assert outliers(nodes, ns).size == 0
    assert outliers(nodes[:5], ns[:5] * 1000).size == 0  # too few to know what is normal


def test_retime_keeps_the_least_time_and_measures_few_in_a_slow_batch():
    nodes = np.ones(1000, dtype=np.int64)
    ns = np.full(1000, 2_000)
    ns[[3, 500]] = 9_000_000
    asked = []

    def again(grids):
        asked.append(len(grids))
        return np.full(len(grids), 2_500)

    assert retime(np.zeros((1000, 81), np.uint8), nodes, ns, again) == 2
    assert ns[[3, 500]].tolist() == [2_500, 2_500] and asked == [2, 2, 2]
    everything = np.full(1000, 9_000_000)
    everything[:100] = 2_000  # a batch slowed as a whole is not what a preemption looks like
    assert retime(np.zeros((1000, 81), np.uint8), nodes, everything, again) <= 24


def test_solve_grids_times_every_searched_puzzle():
    grids = shared_puzzles("puzzles3_magictour_top1465.txt", 200)
    found = solve_grids(grids)
    assert (found.solve_ns > 0).all()
    assert np.median(found.solve_ns / found.nodes) < 5_000  # microseconds, not preemptions
