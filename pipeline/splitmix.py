"""SplitMix64, the one random stream and 64-bit mix of the package (Steele, Lea and Flood,
"Fast splittable pseudorandom number generators", 2014): every seeded draw (generate's
puzzles, augment's copies, the symmetries a rating is measured over) and every stable key
(split's groups and orders) is made of it.

A stream is a 64-bit state that moves on by `GAMMA` at each draw; a draw is the state put
through `mix`, a bijection of 64-bit values. So the n-th draw of a stream is
`mix(start + n * GAMMA)`: a whole chunk's draws can be computed at once, without walking the
stream (generate), and a stream keyed by (seed, number) is the same whichever batch or worker
draws it (`stream_start`).

Written once, called two ways: `mix` and the draws are kernel parts (numba: one value at a
time inside a kernel, compiled once and linked, where LLVM inlines them); `mix_array` is the
same function over a whole numpy uint64 array (wrapping arithmetic, as numba's). Parts, not
parts numba inlines (`inline_part`): numba copies an inlined part's code at every call, and
a symmetry's draw calls these 55 times, nested; the rating's copies compiled in 2.9-3.2 CPU s
instead of 4.5-5.3, augment's kernel in 5.6-6.4 instead of 7.4-7.6, at the same speed (one
core of a loaded 2-core AMD EPYC, in turn, 2026-12-06).

Fixed for good: every seeded output depends on these lines, so changing one changes what
generate, augment, rate and split write (the tests pin them). numba keys the cache of a
kernel that links them by that kernel's own file: after an edit here, `make clean-kernels`.
"""

import numpy as np

from pipeline.compiled import kernel_part

GAMMA = np.uint64(0x9E3779B97F4A7C15)  # the golden ratio's 64 bits, odd: a stream's step
MIX1 = np.uint64(0xBF58476D1CE4E5B9)  # the finaliser's multipliers
MIX2 = np.uint64(0x94D049BB133111EB)


def _finalise(z: np.uint64) -> np.uint64:
    """SplitMix64's output function: a 64-bit value to a well-mixed one (a bijection)."""
    z = z ^ (z >> np.uint64(30))  # a new value: the in-place steps never touch the caller's
    z *= MIX1
    z ^= z >> np.uint64(27)
    z *= MIX2
    z ^= z >> np.uint64(31)
    return z


mix = kernel_part(_finalise)


def mix_array(z: np.ndarray) -> np.ndarray:
    """`mix` over a uint64 array, value by value (wrapping arithmetic): a new array."""
    with np.errstate(over="ignore"):  # a 0-d array computes as a scalar, which would warn
        return _finalise(np.asarray(z, dtype=np.uint64))


def stream_start(seed: np.uint64 | np.ndarray, number: np.uint64 | np.ndarray) -> np.ndarray:
    """The start of stream `number` (puzzle i of a corpus, row g of a batch) of `seed`, over
    arrays: `mix(number * GAMMA + mix(seed + GAMMA))` (`augment_kernel` computes the same one
    value at a time)."""
    base = mix_array(np.asarray(seed, dtype=np.uint64) + GAMMA)
    return mix_array(np.asarray(number, dtype=np.uint64) * GAMMA + base)


@kernel_part
def next_draw(state: np.ndarray) -> np.uint64:
    """The next draw of the stream whose state is `state[0]` (which moves on)."""
    state[0] += GAMMA
    return mix(state[0])


# Two ways to turn a draw into an int in [0, bound): each stream keeps the one it was made
# with, so that its seeded outputs stay what they were. Both are for small bounds (2..9),
# where neither has a bias worth naming.


@kernel_part
def scaled(draw: np.uint64, bound: int) -> int:
    """A draw as an int in [0, bound): its high 32 bits scaled by `bound` (a multiply and a
    shift, no division). augment's copies are drawn so."""
    return int(((draw >> np.uint64(32)) * np.uint64(bound)) >> np.uint64(32))


@kernel_part
def modulo(draw: np.uint64, bound: int) -> int:
    """A draw as an int in [0, bound): its high 53 bits modulo `bound`. The symmetries a
    rating is measured over are drawn so."""
    return int((draw >> np.uint64(11)) % np.uint64(bound))


@kernel_part
def below_scaled(state: np.ndarray, bound: int) -> int:
    """The stream's next draw, `scaled`."""
    return scaled(next_draw(state), bound)


@kernel_part
def below_modulo(state: np.ndarray, bound: int) -> int:
    """The stream's next draw, `modulo`."""
    return modulo(next_draw(state), bound)
