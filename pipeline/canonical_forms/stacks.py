"""One stack of a row, the step the candidate search (`search.py`) repeats: the smallest
relabelled triplet a stack's three cells can take over the column orders still allowed, the
orders that reach it (grouped by the digits they put in the cells), and the labels the new
digits get. Also the tables it reads: the 6 orders of 3 things, the floors of the given
patterns (a cheap bound to prune by), the lowest bit of a 9-bit set.

The helpers take ints, never arrays (numba passes an array as a dozen words plus atomic
reference counts); blank and one-given stacks are valued and labelled inline, `_best_orders`
only for two or three givens (docs/BENCHMARKS.md, "Ideas measured"). The state's layout (the
labels as nibbles) is `search.py`'s.
"""

import numpy as np

from pipeline.compiled import inline_part, kernel

# The 6 orders of 3 things: PERMS[p][j] is the source position put at target position j.
PERMS = np.array([[0, 1, 2], [0, 2, 1], [1, 0, 2], [1, 2, 0], [2, 0, 1], [2, 1, 0]], np.int64)


def _pattern_floors() -> tuple[np.ndarray, np.ndarray]:
    """`floors[pattern, mask]`: the smallest triplet key that a stack with givens at the cells
    of `pattern` (bit j: cell j) can reach with the orders of `mask`, counting every given as
    label 1. No relabelled triplet is smaller (labels are >= 1): a cheap bound to prune by.
    `reaching[pattern, mask]`: the orders of `mask` that reach it (bits)."""
    floors = np.full((8, 64), 1 << 20, np.int64)
    reaching = np.zeros((8, 64), np.int64)
    for pattern in range(8):
        for mask in range(64):
            for p in range(6):
                if mask & (1 << p):
                    key = 0
                    for j in range(3):
                        key = (key << 4) | ((pattern >> PERMS[p, j]) & 1)
                    if key < floors[pattern, mask]:
                        floors[pattern, mask], reaching[pattern, mask] = key, 0
                    if key == floors[pattern, mask]:
                        reaching[pattern, mask] |= 1 << p
    return floors, reaching


FLOORS, REACHING = _pattern_floors()
ALL_ORDERS = 63  # all 6 column orders of a stack allowed
NO_KEY = 1 << 20  # larger than any triplet key (3 labels of 4 bits)


def _lowest_bits() -> np.ndarray:
    """`lowest[bits]`: the lowest bit set of a 9-bit set (of rows, or of orders)."""
    lowest = np.zeros(512, np.int64)
    for bits in range(1, 512):
        lowest[bits] = (bits & -bits).bit_length() - 1
    return lowest


LOWEST_BIT = _lowest_bits()


@inline_part
def _cell_value(d: int, label: int, p: int, vp: int, q: int, vq: int, new: int) -> tuple[int, int]:
    """(value, next free label) of a cell holding source digit d (0: blank) with label `label`
    (0: not seen yet), after earlier cells of the triplet with digits p, q (0: none) and values
    vp, vq: a new digit repeated in the triplet keeps the value of its first cell."""
    if d == 0:
        return 0, new
    if label != 0:
        return label, new
    if d == p:
        return vp, new
    if d == q:
        return vq, new
    return new, new + 1


@inline_part
def _triplet_key(a: int, b: int, c: int, la: int, lb: int, lc: int, first_new: int) -> int:
    """Relabelled value of source digits (a, b, c) read in this order, with labels (la, lb, lc)
    (0: not seen yet), as 3 nibbles.

    Blanks are 0, seen digits their label, new digits the next free labels in reading order
    (a new digit repeated in the triplet keeps the label of its first cell)."""
    va, new = _cell_value(a, la, 0, 0, 0, 0, first_new)
    vb, new = _cell_value(b, lb, a, va, 0, 0, new)
    vc, _ = _cell_value(c, lc, a, va, b, vb, new)
    return (va << 8) | (vb << 4) | vc


@kernel
def _best_orders(
    x: int,
    y: int,
    z: int,
    lx: int,
    ly: int,
    lz: int,
    pattern: int,
    mask: int,
    first_new: int,
) -> tuple[int, int, int]:
    """The smallest triplet key of a stack's cells (digits x, y, z with labels lx, ly, lz, 0 for
    not seen yet; givens as the bits of `pattern`) over the column orders in `mask`.

    Returns (key, number of groups, groups). The orders reaching the key are split into groups
    that put the same source digits in the same target cells; group g is `(groups >> 9 * g) &
    511`: its orders as bits 0-5 and one of them (to label the new digits with) as bits 6-8."""
    digits = (x, y, z)
    labels = (lx, ly, lz)
    best = NO_KEY
    groups = 0
    packed = 0
    for p in range(6):
        if not mask & (1 << p):
            continue
        i, j, k = PERMS[p, 0], PERMS[p, 1], PERMS[p, 2]
        a, b, c = digits[i], digits[j], digits[k]
        key = _triplet_key(a, b, c, labels[i], labels[j], labels[k], first_new)
        if key > best:
            continue
        if key < best:
            best, groups, packed = key, 0, 0
        g = 0
        while g < groups:  # a group whose orders put the same digits in the same cells?
            q = (packed >> (9 * g + 6)) & 7
            if digits[PERMS[q, 0]] == a and digits[PERMS[q, 1]] == b and digits[PERMS[q, 2]] == c:
                break
            g += 1
        if g < groups:
            packed |= (1 << p) << (9 * g)
        else:
            packed |= ((1 << p) | (p << 6)) << (9 * g)
            groups += 1
    return best, groups, packed


@inline_part
def stack_orders(code: int, state: int, mask: int) -> tuple[int, int, int]:
    """`_best_orders` of a stack's cells (`code`: digits and pattern, as in `stacks`) with the
    labels, the next free label and the allowed orders `mask` of a candidate's `state`."""
    pattern = (code >> 12) & 7
    if pattern == 0:  # a blank triplet: every order ties, no labels
        return 0, 1, mask | (LOWEST_BIT[mask] << 6)
    if pattern == 1 or pattern == 2 or pattern == 4:
        # One given: the orders that put it furthest right tie (they only swap blanks); its
        # value is its label, or the next free one.
        value = (state >> (4 * ((code >> (4 * (pattern >> 1))) & 15))) & 15
        if value == 0:
            value = state & 15
        orders = REACHING[pattern, mask]
        return FLOORS[pattern, mask] * value, 1, orders | (LOWEST_BIT[orders] << 6)
    x, y, z = code & 15, (code >> 4) & 15, (code >> 8) & 15
    return _best_orders(
        x,
        y,
        z,
        (state >> (4 * x)) & 15,
        (state >> (4 * y)) & 15,
        (state >> (4 * z)) & 15,
        pattern,
        mask,
        state & 15,
    )


@inline_part
def label_new(code: int, order: int, state: int) -> int:
    """`state` with the new digits of a stack's cells (`code`) read in `order` given the next
    free labels (nibble 0 of the state counts them on)."""
    pattern = (code >> 12) & 7
    if pattern == 0:
        return state
    if pattern == 1 or pattern == 2 or pattern == 4:  # one given: the order does not matter
        d = (code >> (4 * (pattern >> 1))) & 15
        if (state >> (4 * d)) & 15 == 0:
            state = (state | ((state & 15) << (4 * d))) + 1
        return state
    for j in range(3):
        d = (code >> (4 * PERMS[order, j])) & 15
        if d != 0 and (state >> (4 * d)) & 15 == 0:
            state = (state | ((state & 15) << (4 * d))) + 1
    return state
