"""The candidate search behind `pipeline.canonical_forms`: the minlex form of one grid.

The form of a grid is the smallest 81-digit string (blank = 0) over all 2 * 6^8 geometric
variants (transpose or not; bands, rows in each band, stacks, columns in each stack), each with
its digits relabelled 1, 2, 3, ... in order of first appearance. Brute force over 3,359,232
variants is far too slow (seconds a puzzle); this kernel builds the form a row at a time and
keeps only the partial variants tied for the smallest prefix.

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
beat the best row (`FLOORS`, labels counted as 1) is skipped before any labelling; a blank
row is taken without looking at its stacks. Complete grids go to `full.py`: their
first row would split every candidate 216 ways.

How it is kept fast (each step measured; the figures are in docs/BENCHMARKS.md, "Ideas
measured"): a candidate is two int64 words (below); the helpers take ints, never arrays
(numba passes an array as a dozen words plus atomic reference counts); no array is reassigned
or sliced per candidate or per grid (a grid that overflows the buffers is run again with twice
the room); the rows still to try are a bit set; blank and one-given stacks are valued and
labelled inline (`_best_orders` only for two or three givens); `read_grid` is branch-free and
computes the first-row bars.
"""

from typing import TypeAlias

import numpy as np

from pipeline.canonical_forms.stacks import (
    ALL_ORDERS,
    FLOORS,
    LOWEST_BIT,
    NO_KEY,
    PERMS,
    label_new,
    stack_orders,
)
from pipeline.compiled import kernel

# What the search works in, made once per batch (`new_scratch`, again twice as large when a
# grid needs more room): the candidate buffers `(2, capacity, 2) int64` (the one being read and
# the one being filled; the candidate layout below), a hash table `int64` (2 * capacity), then
# the grid (`read_grid`): `stacks[t, row, stack]` for stack 0..2 the cells of a stack in a row
# (t = 1: of the transposed grid), the digit of cell j as bits 4j..4j+3 and the given pattern
# (bit j set where cell j is a given) as bits 12-14, `stacks[t, row, 3]` the row's first-row key
# (-1: never barred), `lines (2, 9, 9)` the rows of a complete grid and of its transpose (for
# `full.py`), and `chosen` (14).
Scratch: TypeAlias = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]

# A candidate is two int64 words. Its *state*: the label of source digit d (1..9; 0 = not seen
# yet) as nibble d, the next free label (1..10) as nibble 0 (a blank is never looked up), the
# allowed column orders (6 bits) of target stack k at bit _MASKS + 6k, the transpose at bit _T,
# the stack order (index into PERMS: target stack k <- source stack PERMS[sp][k]) from bit _SP.
# Its *path*: the source row of target row r as nibble r, the source rows used as bits from
# _USED. Twins (`_merge_duplicates`) have the same state and the same rows used.
_MASKS = 40
_T = 58
_SP = 59
_USED = 36
START_CAPACITY = 1024  # candidates


def _free_bands() -> np.ndarray:
    """`free_bands[used]`: the rows of the bands none of whose rows is in `used`."""
    free_bands = np.zeros(512, np.int64)
    for used in range(512):
        for band in range(3):
            if not used & (7 << (3 * band)):
                free_bands[used] |= 7 << (3 * band)
    return free_bands


_FREE_BANDS = _free_bands()
_MERGE_FROM = 16  # merge twin candidates when more than this many are kept


@kernel
def _merge_duplicates(buffer: np.ndarray, count: int, table: np.ndarray) -> int:
    """Keep one of each group of candidates with the same future, with the hash `table` (a power
    of 2 long, at least 2 * count); returns the new count.

    Two candidates that differ only in which rows they took, not in the set of rows taken (nor in
    transpose, stack order, masks, labels), have the same rows left to take, the same current
    band (the one partly taken) and the same possible values for every later row: they lead to
    the same form, and either one gives a variant reaching it. Such twins come from swapping
    blank rows (the empty grid would keep all 15,552 of its candidates to the end; merged, 12)."""
    size = table.shape[0]
    table[:] = -1
    kept = 0
    for c in range(count):
        state, used = buffer[c, 0], buffer[c, 1] >> _USED
        h = (state * 1000003) ^ used
        slot = (h ^ (h >> 29)) & (size - 1)
        while table[slot] >= 0 and not (
            buffer[table[slot], 0] == state and buffer[table[slot], 1] >> _USED == used
        ):
            slot = (slot + 1) & (size - 1)
        if table[slot] >= 0:
            continue  # a twin of a candidate kept already
        buffer[kept, 0], buffer[kept, 1] = state, buffer[c, 1]
        table[slot] = kept
        kept += 1
    return kept


@kernel
def read_grid(grids: np.ndarray, i: int, stacks: np.ndarray) -> tuple[bool, int]:
    """Fill `stacks` (`Scratch`) from grid `grids[i]` (81 cells); returns whether the grid is
    complete (every row and column holds 1..9 once) and the rows that cannot be target row 0
    of the form, as bits (bit 9 t + row: row `row` of the grid, t = 0, or of its transpose).

    Target row 0 has no labels before it: a row whose digits are distinct gets labels 1, 2,
    3, ... in reading order, so its best value under any stack and column order is its best
    given pattern, its stacks' floors sorted (`FLOORS`, all orders allowed), and two such
    rows compare as their patterns do. Such a row is barred when its pattern is above the
    best pattern of these rows (a row with a repeated digit, in a clashing grid, can go below
    its pattern: never barred). Measured on 17-clue rows (thread CPU, A/B alternated on a
    loaded 2-core machine): 9.5-10.7 -> 8.0-8.7 us a puzzle, forms unchanged on 100,000 rows."""
    complete = True
    best = NO_KEY << 24
    for t in range(2):
        for line in range(9):
            seen = repeated = 0
            for k in range(3):
                code = 0
                for j in range(3):  # branch-free: blanks are most cells, placed at random
                    cell = 9 * line + 3 * k + j if t == 0 else 9 * (3 * k + j) + line
                    d = np.int64(grids[i, cell])
                    code |= (d << (4 * j)) | (np.int64(d != 0) << (12 + j))
                    bit = (1 << d) & ~1
                    repeated |= seen & bit
                    seen |= bit
                stacks[t, line, k] = code
            complete &= seen == 0x3FE
            a = FLOORS[(stacks[t, line, 0] >> 12) & 7, ALL_ORDERS]
            b = FLOORS[(stacks[t, line, 1] >> 12) & 7, ALL_ORDERS]
            c = FLOORS[(stacks[t, line, 2] >> 12) & 7, ALL_ORDERS]
            a, b = min(a, b), max(a, b)
            b, c = min(b, c), max(b, c)
            a, b = min(a, b), max(a, b)
            key = (a << 24) | (b << 12) | c if repeated == 0 else -1  # -1: never barred
            stacks[t, line, 3] = key
            best = min(best, key) if key >= 0 else best
    bars = 0
    for t in range(2):
        for line in range(9):
            bars |= np.int64(stacks[t, line, 3] > best) << (9 * t + line)
    return complete, bars


@kernel
def _canonical_one(
    forms: np.ndarray,
    i: int,
    buffers: np.ndarray,
    table: np.ndarray,
    stacks: np.ndarray,
    barred: int,
) -> tuple[int, int]:
    """The form of one grid into `forms[i]`, from its `stacks` and `barred` (`read_grid`),
    with the candidates in `buffers` (`Scratch`) and the hash table `table` (twice as long);
    returns (which buffer holds the candidates left, how many candidates reach the form: the
    variants giving it, in groups), or (0, -1) when the buffers were too small. No array is
    reassigned here: numba would count references on it at every candidate."""
    capacity = buffers.shape[1]
    cur = 0
    count = 0
    all_masks = ALL_ORDERS * ((1 << _MASKS) | (1 << (_MASKS + 6)) | (1 << (_MASKS + 12)))
    for t in range(2):
        for sp in range(6):
            buffers[0, count, 0] = 1 | all_masks | (t << _T) | (sp << _SP)
            buffers[0, count, 1] = 0
            count += 1
    for target in range(9):
        best0 = best1 = best2 = NO_KEY
        kept = 0
        nxt = 1 - cur
        band_top = target % 3 == 0
        for c in range(count):
            state, path = buffers[cur, c, 0], buffers[cur, c, 1]
            t = (state >> _T) & 1
            sp = (state >> _SP) & 7
            used = path >> _USED
            if target == 0:
                rows = 511 & ~(barred >> (9 * t))  # rows that can come first
            elif band_top:
                rows = _FREE_BANDS[used]
            else:
                rows = (7 << (3 * (((path >> (4 * (target - 1))) & 15) // 3))) & ~used
            stack0, stack1, stack2 = PERMS[sp, 0], PERMS[sp, 1], PERMS[sp, 2]
            mask0 = (state >> _MASKS) & 63
            mask1 = (state >> (_MASKS + 6)) & 63
            mask2 = (state >> (_MASKS + 12)) & 63
            while rows:
                row = LOWEST_BIT[rows] & 15
                rows &= rows - 1
                code0, code1, code2 = (
                    stacks[t, row, stack0],
                    stacks[t, row, stack1],
                    stacks[t, row, stack2],
                )
                # No triplet is below its floor, so a row whose floors are above the best row
                # (in the order of rows) cannot reach it.
                floor0 = FLOORS[(code0 >> 12) & 7, mask0]
                if floor0 > best0:
                    continue
                if floor0 == best0:
                    floor1 = FLOORS[(code1 >> 12) & 7, mask1]
                    if floor1 > best1:
                        continue
                    if floor1 == best1 and FLOORS[(code2 >> 12) & 7, mask2] > best2:
                        continue
                taken = path | (row << (4 * target)) | (1 << (_USED + row))
                if not (code0 | code1 | code2):
                    # A blank row: its value is 0, it changes no mask and no label.
                    if best0 | best1 | best2:
                        best0, best1, best2, kept = 0, 0, 0, 0
                    if kept < capacity:
                        buffers[nxt, kept, 0], buffers[nxt, kept, 1] = state, taken
                    kept += 1
                    continue
                key0, groups0, packed0 = stack_orders(code0, state, mask0)
                if key0 > best0:
                    continue
                if key0 < best0:
                    best0, best1, best2, kept = key0, NO_KEY, NO_KEY, 0
                if FLOORS[(code1 >> 12) & 7, mask1] > best1:
                    continue
                for g0 in range(groups0):
                    group0 = packed0 >> (9 * g0)
                    state1 = label_new(code0, (group0 >> 6) & 7, state)
                    key1, groups1, packed1 = stack_orders(code1, state1, mask1)
                    if key1 > best1:
                        continue
                    if key1 < best1:
                        best1, best2, kept = key1, NO_KEY, 0
                    if FLOORS[(code2 >> 12) & 7, mask2] > best2:
                        continue
                    for g1 in range(groups1):
                        group1 = packed1 >> (9 * g1)
                        state2 = label_new(code1, (group1 >> 6) & 7, state1)
                        key2, groups2, packed2 = stack_orders(code2, state2, mask2)
                        if key2 > best2:
                            continue
                        if key2 < best2:
                            best2, kept = key2, 0
                        for g2 in range(groups2):
                            group2 = packed2 >> (9 * g2)
                            masks = (group0 & 63) | ((group1 & 63) << 6) | ((group2 & 63) << 12)
                            labels = label_new(code2, (group2 >> 6) & 7, state2)
                            if kept < capacity:
                                buffers[nxt, kept, 0] = (labels & ~all_masks) | (masks << _MASKS)
                                buffers[nxt, kept, 1] = taken
                            kept += 1
        if kept > capacity:
            return 0, -1
        for j in range(3):
            shift = 4 * (2 - j)
            forms[i, 9 * target + j] = (best0 >> shift) & 15
            forms[i, 9 * target + 3 + j] = (best1 >> shift) & 15
            forms[i, 9 * target + 6 + j] = (best2 >> shift) & 15
        if kept > _MERGE_FROM:
            kept = _merge_duplicates(buffers[nxt], kept, table)
        cur, count = nxt, kept
    return cur, count


@kernel
def search_form(
    forms: np.ndarray,
    i: int,
    buffers: np.ndarray,
    table: np.ndarray,
    stacks: np.ndarray,
    chosen: np.ndarray,
    barred: int,
) -> bool:
    """The form of one grid into `forms[i]`, from its `stacks` and `barred` (`read_grid`), and
    one variant giving it into `chosen` (t, stack order, order in target stacks 0, 1, 2, source
    row of target rows 0..8); False (and no form) when the buffers (`Scratch`) are too small."""
    cur, count = _canonical_one(forms, i, buffers, table, stacks, barred)
    if count < 0:
        return False
    state, path = buffers[cur, 0, 0], buffers[cur, 0, 1]  # any candidate left gives the form
    chosen[0] = (state >> _T) & 1
    chosen[1] = (state >> _SP) & 7
    for k in range(3):
        chosen[2 + k] = LOWEST_BIT[(state >> (_MASKS + 6 * k)) & 63]
    for r in range(9):
        chosen[5 + r] = (path >> (4 * r)) & 15
    return True


@kernel
def new_scratch(capacity: int) -> Scratch:
    """Scratch for `search_form` (`Scratch`) with room for `capacity` candidates, made once per
    batch (again, twice as large, when a grid needs more); at least the 12 candidates to start."""
    capacity = max(capacity, 16)
    return (
        np.empty((2, capacity, 2), np.int64),
        np.empty(2 * capacity, np.int64),
        np.empty((2, 9, 4), np.int64),
        np.empty((2, 9, 9), np.int64),
        np.empty(14, np.int64),
    )
