"""The candidate search behind `pipeline.minlex`: the minlex form of one grid.

The form of a grid is the smallest 81-digit string (blank = 0) over all 2 * 6^8 geometric
variants (transpose or not; bands, rows in each band, stacks, columns in each stack), each with
its digits relabelled 1, 2, 3, ... in order of first appearance. Brute force over 3,359,232
variants costs ~7 s a puzzle in numpy (20-500 ms in numba with early exits). This kernel builds the
form a row at a time and keeps only the partial variants tied for the smallest prefix.

A *candidate* is a set of variants that agree on everything that decides the form so far:

* the transpose `t`, and the source row of each target row filled so far;
* the stack order `sp` (one of 6, fixed from the start);
* for each target stack, a 6-bit mask of the column orders inside it still allowed;
* the label of each source digit seen so far, and the next free label.

Every variant of a candidate gives the same relabelled prefix (the rows filled so far) and the
same labels. Invariant after target row i: the prefix of the candidates is the smallest
possible, and every variant with that prefix either is in a candidate or has a *twin* in one:
a variant that took the same set of rows (in another order) with the same column orders and
labels, hence the same rows left, the same choices for them and the same values.

Why one row at a time, one stack at a time, is exact. Target row i + 1 of a variant depends on
its source row, its column order and the labels of the digits seen before (common to the
candidate). Its relabelled value in target stack k depends only on the column order inside
stack k and on the labels after stacks 0..k-1 of this row: digits are labelled in reading order.
So the smallest row over a candidate is found greedily: the smallest triplet of stack 0 over the
allowed column orders, then, for each way of reaching it, the smallest triplet of stack 1, then
stack 2, comparing with the best row so far over all candidates and source rows at each stack
(a smaller triplet drops everything kept before; a larger one drops this branch). The source
rows tried are exactly those a row permutation allows: any row of an unused band at the top of
a band, else an unused row of the current band. Every row order and column order is reached
by one path, so nothing is missed. Twins lead to the same forms, so when many candidates are
kept, all but one of each group of twins are dropped (`_merge_duplicates`).

Ways of reaching the smallest triplet are split by the source digits they put in the three
cells: orders that put the same digits in the same cells (they only swap blanks, or repeated
digits of a clashing row) label alike and stay together as a mask; orders that put different
new digits first get different labels, so they become different candidates. Blanks never get a
label, so the greedy is exact with any number of blanks and repeated digits: blanks (0) sort
before seen digits (their labels) and those before a new digit (the next free label).

Only the transpose and the stack order are enumerated up front (12 candidates); everything
else is pruned row by row. Pruning tests, cheapest first: a row whose given pattern cannot
beat the best row (`_FLOORS`, labels counted as 1) is skipped before any labelling; a blank
row is taken without looking at its stacks. Complete grids go to `full.py`: their
first row would split every candidate 216 ways.

Measured (one core of a loaded 2-core machine; A/B alternated in one run except the first
figure, from successive runs; the last two lines in thread CPU time, steady there): the
pattern floors took the forum+Kaggle mix from ~38,000 to ~92,000 puzzles/s; reading labels in
place and the blank-row shortcut took the empty grid from 18 ms to 2 ms; merging twins took it
to 0.1 ms and a grid with one complete band from 183 ms to 1-5 ms, no change on the public sets
(within 3%); numba-inlining the three small helpers and the one-given shortcut in
`_best_orders` took the mix from ~108,000 to ~140,000 puzzles/s (17-clue ~110,000 to
~130,000); passing `_best_orders` six ints instead of array views (numba passes an array as
a dozen words plus reference counting) took it to ~265,000 (17-clue ~245,000, the dense serg
set ~53,000 to ~150,000). Did not pay: numba-inlining `_best_orders` (+3-5% since the int
arguments; it was 10% slower with array arguments and the one-given shortcut).
"""

from typing import TypeAlias

import numpy as np
from numba import njit

# What one grid's search works in, made once per batch (`new_scratch`) and passed along whole
# (one argument, not seven): two candidate buffers `(capacity, _WIDTH) int32` (grown and
# returned), label levels `(2, _WIDTH) int32` (labels after stack 0, after stack 1 of the row
# being tried), a hash table `int64` (a power of 2 long, grown too), then the grid: `lines[t,
# row, stack, j]` the digit of cell j of a stack in a row (t = 1: of the transposed grid),
# `patterns[t, row, stack]` with bit j set where that cell is a given, and `chosen` (14).
Scratch: TypeAlias = tuple[
    np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray
]

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


_FLOORS, _REACHING = _pattern_floors()
_ALL_ORDERS = 63  # all 6 column orders of a stack allowed
_NO_KEY = 1 << 20  # larger than any triplet key (3 labels of 4 bits)

# Fields of a candidate row (int32).
_T = 0  # transpose: 0 or 1
_SP = 1  # stack order: index into PERMS (target stack k <- source stack PERMS[sp][k])
_USED = 2  # bitmask of the source rows used
_NEXT = 3  # next free label (1..10)
_ROWS = 4  # 9 fields: source row of each target row filled so far
_MASK = 13  # 3 fields: allowed column orders (6 bits) of each target stack
_LABEL = 16  # 10 fields: label of each source digit (0 = not seen yet; field 16 is unused)
_WIDTH = 26
_START_CAPACITY = 1024
_MERGE_FROM = 16  # merge twin candidates when more than this many are kept


@njit(nogil=True, cache=True, inline="always")
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


@njit(nogil=True, cache=True, inline="always")
def _triplet_key(a: int, b: int, c: int, la: int, lb: int, lc: int, first_new: int) -> int:
    """Relabelled value of source digits (a, b, c) read in this order, with labels (la, lb, lc)
    (0: not seen yet), as 3 nibbles.

    Blanks are 0, seen digits their label, new digits the next free labels in reading order
    (a new digit repeated in the triplet keeps the label of its first cell)."""
    va, new = _cell_value(a, la, 0, 0, 0, 0, first_new)
    vb, new = _cell_value(b, lb, a, va, 0, 0, new)
    vc, _ = _cell_value(c, lc, a, va, b, vb, new)
    return (va << 8) | (vb << 4) | vc


@njit(nogil=True, cache=True)
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
    if pattern == 0:  # a blank triplet: every order ties, no labels
        return 0, 1, mask | (_lowest_order(mask) << 6)
    if pattern == 1 or pattern == 2 or pattern == 4:
        # One given: the orders that put it furthest right tie (they only swap blanks); its
        # value is its label, or the next free one.
        value = lx if pattern == 1 else (ly if pattern == 2 else lz)
        if value == 0:
            value = first_new
        orders = _REACHING[pattern, mask]
        return _FLOORS[pattern, mask] * value, 1, orders | (_lowest_order(orders) << 6)
    digits = (x, y, z)
    labels = (lx, ly, lz)
    best = _NO_KEY
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


@njit(nogil=True, cache=True, inline="always")
def _stack_orders(
    lines: np.ndarray,
    patterns: np.ndarray,
    t: int,
    row: int,
    stack: int,
    table: np.ndarray,
    index: int,
    mask: int,
    first_new: int,
) -> tuple[int, int, int]:
    """`_best_orders` of source stack `stack` of a row, with the labels of `table[index]`:
    inlined, so `_best_orders` still gets plain ints (not array views)."""
    x, y, z = lines[t, row, stack, 0], lines[t, row, stack, 1], lines[t, row, stack, 2]
    return _best_orders(
        x,
        y,
        z,
        table[index, _LABEL + x],
        table[index, _LABEL + y],
        table[index, _LABEL + z],
        patterns[t, row, stack],
        mask,
        first_new,
    )


@njit(nogil=True, cache=True, inline="always")
def _lowest_order(mask: int) -> int:
    """The first column order allowed by a (non-empty) mask."""
    order = 0
    while not mask & (1 << order):
        order += 1
    return order


@njit(nogil=True, cache=True, inline="always")
def _label_new(
    lines: np.ndarray,
    t: int,
    row: int,
    stack: int,
    order: int,
    table: np.ndarray,
    index: int,
    new: int,
) -> int:
    """Give the new digits of a triplet read in `order` the next labels, in `table[index]`;
    returns the next free label."""
    for j in range(3):
        d = lines[t, row, stack, PERMS[order, j]]
        if d != 0 and table[index, _LABEL + d] == 0:
            table[index, _LABEL + d] = new
            new += 1
    return new


@njit(nogil=True, cache=True)
def _grow(buffer: np.ndarray) -> np.ndarray:
    bigger = np.empty((2 * buffer.shape[0], _WIDTH), np.int32)
    bigger[: buffer.shape[0]] = buffer
    return bigger


@njit(nogil=True, cache=True)
def _same_future(buffer: np.ndarray, a: int, b: int) -> bool:
    """Whether candidates a and b agree on all but their row map (so have the same future)."""
    for f in range(_WIDTH):
        if (f < _ROWS or f >= _ROWS + 9) and buffer[a, f] != buffer[b, f]:
            return False
    return True


@njit(nogil=True, cache=True)
def _merge_duplicates(buffer: np.ndarray, count: int, table: np.ndarray) -> tuple[int, np.ndarray]:
    """Keep one of each group of candidates with the same future; returns the new count (and the
    hash table, grown if it had to be).

    Two candidates that differ only in which rows they took, not in the set of rows taken (nor in
    transpose, stack order, masks, labels), have the same rows left to take, the same current
    band (the one partly taken) and the same possible values for every later row: they lead to
    the same form, and either one gives a variant reaching it. Such twins come from swapping
    blank rows (the empty grid would keep all 15,552 of its candidates to the end; merged, 12)."""
    size = 4 * table.shape[0] if 2 * count > table.shape[0] else table.shape[0]
    if size != table.shape[0]:
        while size < 2 * count:
            size *= 2
        table = np.empty(size, np.int64)
    table[:] = -1
    kept = 0
    for c in range(count):
        h = 0
        for f in range(_WIDTH):
            if f < _ROWS or f >= _ROWS + 9:
                h = (h * 1000003) ^ buffer[c, f]
        slot = (h ^ (h >> 29)) & (size - 1)
        while table[slot] >= 0 and not _same_future(buffer, table[slot], c):
            slot = (slot + 1) & (size - 1)
        if table[slot] >= 0:
            continue  # a twin of a candidate kept already
        if kept != c:
            for f in range(_WIDTH):
                buffer[kept, f] = buffer[c, f]
        table[slot] = kept
        kept += 1
    return kept, table


@njit(nogil=True, cache=True)
def _first_row_bars(lines: np.ndarray, patterns: np.ndarray) -> int:
    """Rows that cannot be target row 0 of the form, as bits (bit 9 t + row).

    Target row 0 has no labels before it: a row whose digits are distinct gets labels 1, 2,
    3, ... in reading order, so its best value under any stack and column order is its best
    given pattern, its stacks' floors sorted (`_FLOORS`, all orders allowed), and two such
    rows compare as their patterns do. Such a row is barred when its pattern is above the
    best pattern of these rows (a row with a repeated digit, in a clashing grid, can go below
    its pattern: never barred). Measured on 17-clue rows (thread CPU, A/B alternated on a
    loaded 2-core machine): 9.5-10.7 -> 8.0-8.7 us a puzzle, forms unchanged on 100,000 rows."""
    keys = np.empty(18, np.int64)
    best = _NO_KEY << 24
    distinct = 0
    for t in range(2):
        for row in range(9):
            seen = 0
            repeated = False
            for k in range(3):
                for j in range(3):
                    d = lines[t, row, k, j]
                    if d != 0:
                        repeated |= (seen >> d) & 1 == 1
                        seen |= 1 << d
            a = _FLOORS[patterns[t, row, 0], _ALL_ORDERS]
            b = _FLOORS[patterns[t, row, 1], _ALL_ORDERS]
            c = _FLOORS[patterns[t, row, 2], _ALL_ORDERS]
            if a > b:
                a, b = b, a
            if b > c:
                b, c = c, b
            if a > b:
                a, b = b, a
            key = (a << 24) | (b << 12) | c
            keys[9 * t + row] = key
            if not repeated:
                distinct |= 1 << (9 * t + row)
                if key < best:
                    best = key
    bars = 0
    for i in range(18):
        if (distinct >> i) & 1 and keys[i] > best:
            bars |= 1 << i
    return bars


@njit(nogil=True, cache=True)
def _canonical_one(form: np.ndarray, scratch: Scratch) -> tuple[Scratch, int]:
    """The form of one grid into `form`, from the lines and patterns of `scratch` (`Scratch`);
    returns the scratch (its buffers may have grown; `current` holds the candidates left) and
    how many candidates reach the form (the variants giving it, in groups)."""
    current, following, levels, table, lines, patterns, chosen = scratch
    count = 0
    for t in range(2):
        for sp in range(6):
            for f in range(_WIDTH):
                current[count, f] = 0
            current[count, _T] = t
            current[count, _SP] = sp
            current[count, _NEXT] = 1
            for k in range(3):
                current[count, _MASK + k] = _ALL_ORDERS
            count += 1
    barred = _first_row_bars(lines, patterns)
    for target in range(9):
        best0 = best1 = best2 = _NO_KEY
        kept = 0
        band_top = target % 3 == 0
        for c in range(count):
            t = current[c, _T]
            sp = current[c, _SP]
            used = current[c, _USED]
            skip = used
            if target == 0:
                skip = (barred >> (9 * t)) & 511  # rows that cannot come first
            stack0, stack1, stack2 = PERMS[sp, 0], PERMS[sp, 1], PERMS[sp, 2]
            mask0, mask1, mask2 = current[c, _MASK], current[c, _MASK + 1], current[c, _MASK + 2]
            if band_top:
                first, last = 0, 9
            else:
                first = 3 * (current[c, _ROWS + target - 1] // 3)
                last = first + 3
            for row in range(first, last):
                if skip & (1 << row) or (band_top and used & (7 << (row - row % 3))):
                    continue
                # No triplet is below its floor, so a row whose floors are above the best row
                # (in the order of rows) cannot reach it.
                floor0 = _FLOORS[patterns[t, row, stack0], mask0]
                if floor0 > best0:
                    continue
                if floor0 == best0:
                    floor1 = _FLOORS[patterns[t, row, stack1], mask1]
                    if floor1 > best1:
                        continue
                    if floor1 == best1 and _FLOORS[patterns[t, row, stack2], mask2] > best2:
                        continue
                if not (patterns[t, row, 0] | patterns[t, row, 1] | patterns[t, row, 2]):
                    # A blank row: its value is 0, it changes no mask and no label.
                    if best0 | best1 | best2:
                        best0, best1, best2, kept = 0, 0, 0, 0
                    if kept == following.shape[0]:
                        following = _grow(following)
                    for f in range(_WIDTH):
                        following[kept, f] = current[c, f]
                    following[kept, _USED] = used | (1 << row)
                    following[kept, _ROWS + target] = row
                    kept += 1
                    continue
                next0 = current[c, _NEXT]
                key0, groups0, packed0 = _stack_orders(
                    lines, patterns, t, row, stack0, current, c, mask0, next0
                )
                if key0 > best0:
                    continue
                if key0 < best0:
                    best0, best1, best2, kept = key0, _NO_KEY, _NO_KEY, 0
                if _FLOORS[patterns[t, row, stack1], mask1] > best1:
                    continue
                for g0 in range(groups0):
                    group0 = packed0 >> (9 * g0)
                    for d in range(10):
                        levels[0, _LABEL + d] = current[c, _LABEL + d]
                    next1 = _label_new(lines, t, row, stack0, (group0 >> 6) & 7, levels, 0, next0)
                    key1, groups1, packed1 = _stack_orders(
                        lines, patterns, t, row, stack1, levels, 0, mask1, next1
                    )
                    if key1 > best1:
                        continue
                    if key1 < best1:
                        best1, best2, kept = key1, _NO_KEY, 0
                    if _FLOORS[patterns[t, row, stack2], mask2] > best2:
                        continue
                    for g1 in range(groups1):
                        group1 = packed1 >> (9 * g1)
                        for d in range(10):
                            levels[1, _LABEL + d] = levels[0, _LABEL + d]
                        next2 = _label_new(
                            lines, t, row, stack1, (group1 >> 6) & 7, levels, 1, next1
                        )
                        key2, groups2, packed2 = _stack_orders(
                            lines, patterns, t, row, stack2, levels, 1, mask2, next2
                        )
                        if key2 > best2:
                            continue
                        if key2 < best2:
                            best2, kept = key2, 0
                        for g2 in range(groups2):
                            group2 = packed2 >> (9 * g2)
                            if kept == following.shape[0]:
                                following = _grow(following)
                            for f in range(_ROWS + 9):
                                following[kept, f] = current[c, f]
                            following[kept, _USED] = used | (1 << row)
                            following[kept, _ROWS + target] = row
                            following[kept, _MASK] = group0 & 63
                            following[kept, _MASK + 1] = group1 & 63
                            following[kept, _MASK + 2] = group2 & 63
                            for d in range(10):
                                following[kept, _LABEL + d] = levels[1, _LABEL + d]
                            following[kept, _NEXT] = _label_new(
                                lines, t, row, stack2, (group2 >> 6) & 7, following, kept, next2
                            )
                            kept += 1
        for j in range(3):
            shift = 4 * (2 - j)
            form[9 * target + j] = (best0 >> shift) & 15
            form[9 * target + 3 + j] = (best1 >> shift) & 15
            form[9 * target + 6 + j] = (best2 >> shift) & 15
        if kept > _MERGE_FROM:
            kept, table = _merge_duplicates(following, kept, table)
        current, following, count = following, current, kept
    return (current, following, levels, table, lines, patterns, chosen), count


@njit(nogil=True, cache=True)
def search_form(form: np.ndarray, scratch: Scratch) -> Scratch:
    """The form of one grid into `form`, from the lines and patterns of `scratch`, and one
    variant giving it into the scratch's `chosen` (t, stack order, order in target stacks 0, 1,
    2, source row of target rows 0..8); returns the scratch (its buffers may have grown)."""
    scratch, _ = _canonical_one(form, scratch)
    current, chosen = scratch[0], scratch[6]
    chosen[0] = current[0, _T]  # any surviving candidate gives the form
    chosen[1] = current[0, _SP]
    for k in range(3):
        chosen[2 + k] = _lowest_order(current[0, _MASK + k])
    for r in range(9):
        chosen[5 + r] = current[0, _ROWS + r]
    return scratch


@njit(nogil=True, cache=True)
def new_scratch() -> Scratch:
    """Scratch for `search_form` (`Scratch`), made once per batch."""
    return (
        np.empty((_START_CAPACITY, _WIDTH), np.int32),
        np.empty((_START_CAPACITY, _WIDTH), np.int32),
        np.empty((2, _WIDTH), np.int32),
        np.empty(2 * _START_CAPACITY, np.int64),
        np.empty((2, 9, 3, 3), np.int64),
        np.empty((2, 9, 3), np.int64),
        np.empty(14, np.int64),
    )
