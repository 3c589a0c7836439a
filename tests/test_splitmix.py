"""SplitMix64, the one random stream of the package (`pipeline.splitmix`): generate, augment,
the ratings' symmetries and split's keys all draw from it, so its values are pinned here to the
published algorithm's, and its two forms (a kernel part, numpy arrays) to each other."""

import numpy as np
from numba import njit

from pipeline import splitmix
from pipeline.splitmix import GAMMA, mix_array, stream_start

# The parts are called from kernels only (they have no Python entry of their own): called
# here as a kernel calls them.
next_draw = njit(lambda state: splitmix.next_draw(state))
mix = njit(lambda z: splitmix.mix(z))
below_scaled = njit(lambda state, bound: splitmix.below_scaled(state, bound))
below_modulo = njit(lambda state, bound: splitmix.below_modulo(state, bound))

# The first draws of SplitMix64 from state 0 (Steele, Lea and Flood 2014; the reference
# implementation's `next()`, and every port of it, gives these).
FIRST_DRAWS = [0xE220A8397B1DCDAF, 0x6E789E6AA1B965F4, 0x06C45D188009454F]


def test_the_stream_from_zero_is_splitmix64s():
    state = np.zeros(1, np.uint64)

    drawn = [int(next_draw(state)) for _ in FIRST_DRAWS]

    assert drawn == FIRST_DRAWS
    assert int(state[0]) == (3 * int(GAMMA)) % 2**64


def test_the_array_form_gives_the_kernels_values_and_leaves_its_input_alone():
    counters = np.arange(1, 4, dtype=np.uint64) * GAMMA
    before = counters.copy()

    mixed = mix_array(counters)

    assert mixed.tolist() == FIRST_DRAWS
    assert (counters == before).all()
    assert [int(mix(np.uint64(c))) for c in counters] == FIRST_DRAWS
    assert mix_array(counters.reshape(1, 3)).tolist() == [FIRST_DRAWS]
    assert int(mix_array(np.uint64(GAMMA))) == FIRST_DRAWS[0]  # a 0-d array, without a warning


def test_a_draw_becomes_a_small_int_in_two_ways_each_kept():
    """augment's draws are scaled (high 32 bits times the bound), the ratings' taken modulo:
    each stream keeps the one its outputs were made with."""
    for bound in (2, 3, 9):
        scaled, modulo = np.zeros(1, np.uint64), np.zeros(1, np.uint64)

        got_scaled = [below_scaled(scaled, bound) for _ in FIRST_DRAWS]
        got_modulo = [below_modulo(modulo, bound) for _ in FIRST_DRAWS]

        assert got_scaled == [((z >> 32) * bound) >> 32 for z in FIRST_DRAWS]
        assert got_modulo == [(z >> 11) % bound for z in FIRST_DRAWS]


def test_a_stream_keyed_by_seed_and_number_starts_where_its_formula_says():
    seed, numbers = 7, np.array([0, 1, 2**40], dtype=np.uint64)
    base = int(mix_array(np.uint64((seed + int(GAMMA)) % 2**64)))

    starts = stream_start(np.array([seed], np.uint64), numbers)

    expected = [int(mix_array(np.uint64((int(n) * int(GAMMA) + base) % 2**64))) for n in numbers]
    assert starts.tolist() == expected
