"""Naked and hidden subsets (pairs, triples, quads) inside one row, column or box.

`size` is 2 for pairs, 3 for triples, 4 for quads; the ladder calls each size as its own rung.
A sweep applies every instance it finds; candidates it read before an elimination in the same
unit can only be too many, never too few, and the rules stay true for fewer candidates, so
applying them in turn stays sound.

Naked subsets, hidden subsets and fish (fish.py) run the same search (`size` sets of 2..`size`
members whose union has `size` members) and each keeps its own copy of it: one shared
`locked_sets` kernel, its eliminations chosen by a kind flag, made the sweeps slower (naked pair
1.86 -> 2.57 us, hidden pair 5.27 -> 6.21 us, swordfish 4.84 -> 5.23 us a board; 2,405 stalled
top1465 and forum-hardest boards, one core, A/B alternating, best of 15; 2026-12-01).
"""

import numpy as np

from pipeline.compiled import kernel
from pipeline.kernels.units import ALL_DIGITS, UNIT_CELLS
from pipeline.rating.board import (
    LOWEST_DIGIT,
    POPCOUNT,
    eliminate,
    next_combination,
    small_sets,
    union_of_chosen,
)


@kernel
def naked_subset(values: np.ndarray, candidates: np.ndarray, size: int) -> int:
    """Naked pair / triple / quad: when `size` cells of a unit hold, between them, only `size`
    candidate digits, those digits go in those cells, so they leave the unit's other cells."""
    removed = 0
    spots = np.empty(9, dtype=np.int64)  # positions in the unit of cells with 2..size candidates
    chosen = np.empty(4, dtype=np.int64)
    for unit in range(27):
        count = 0
        blanks = 0
        for j in range(9):
            cell = UNIT_CELLS[unit, j]
            if values[cell] == 0:
                blanks += 1
                if 2 <= POPCOUNT[candidates[cell]] <= size:
                    spots[count] = j
                    count += 1
        if blanks <= size or count < size:
            continue
        for i in range(size):
            chosen[i] = i
        while True:
            digits = 0
            inside = 0  # positions of the chosen cells
            for i in range(size):
                j = spots[chosen[i]]
                digits |= candidates[UNIT_CELLS[unit, j]]
                inside |= 1 << j
            if POPCOUNT[digits] == size:
                for j in range(9):
                    if inside >> j & 1 == 0:
                        removed += eliminate(candidates, UNIT_CELLS[unit, j], digits)
            if not next_combination(chosen, size, count):
                break
    return removed


@kernel
def hidden_subset(values: np.ndarray, candidates: np.ndarray, size: int) -> int:
    """Hidden pair / triple / quad: when `size` digits of a unit can go, between them, in only
    `size` cells, those cells hold those digits, so every other candidate leaves those cells."""
    removed = 0
    where = np.empty(9, dtype=np.int64)  # digit -> positions in the unit where it is possible
    digits = np.empty(9, dtype=np.int64)  # digits possible in 2..size positions
    chosen = np.empty(4, dtype=np.int64)
    for unit in range(27):
        blanks = 0
        for d in range(9):
            where[d] = 0
        for j in range(9):
            cell = UNIT_CELLS[unit, j]
            if values[cell] == 0:
                blanks += 1
                mask = candidates[cell]
                # one step per candidate, not per digit: a hidden-triple sweep on a stalled
                # forum-hardest board 5.1 -> 2.75 us (measured, one core, best of 7)
                while mask != 0:
                    bit = mask & -mask
                    mask ^= bit
                    where[LOWEST_DIGIT[bit] - 1] |= 1 << j
        if blanks <= size:
            continue
        count = small_sets(where, size, digits, chosen)
        if count < size:
            continue
        while True:
            spots, keep = union_of_chosen(where, digits, chosen, size)
            if POPCOUNT[spots] == size:
                for j in range(9):
                    if spots >> j & 1:
                        removed += eliminate(candidates, UNIT_CELLS[unit, j], ALL_DIGITS & ~keep)
            if not next_combination(chosen, size, count):
                break
    return removed
