"""Validation of pencilmark puzzles (`pipeline.pencilmarks`): what of the row checks applies.

A pencilmark puzzle is searched from its candidates, not from its single cells alone: its
`unsolvable`, `multiple` (with two solutions as evidence) and `limit` findings come from
`find_two_solutions(candidates=...)` (`checks.check_rows`); `clash` is two single cells
holding one digit in a unit. `few_clues` and `not_minimal` speak of givens, which a
pencilmark puzzle has not (its eliminations say as much as its single cells), so they are
not checked; its duplicate key is its candidates', so two pencilmark puzzles are the same
only when every cell allows the same digits.
"""

import numpy as np

from pipeline.grid import ParsedGrids
from pipeline.jobs.validate.duplicates import row_keys
from pipeline.splitmix import GAMMA as _TAG  # any odd constant: keeps a pencilmark key apart
from pipeline.splitmix import MIX1, MIX2


def pencilmark_keys(parsed: ParsedGrids, keys: np.ndarray) -> np.ndarray:
    """`keys` (`row_keys` of the grids) with each pencilmark row's replaced by its candidates'
    key: three grids of nibbles (bits 0-3, 4-7 and 8 of each mask), their keys mixed."""
    if parsed.pencilmark is None or parsed.candidates is None:
        return keys
    at = np.flatnonzero(parsed.pencilmark & parsed.ok)
    if not len(at):
        return keys
    masks = parsed.candidates[at]
    parts = [((masks >> shift) & 0xF).astype(np.uint8) for shift in (0, 4, 8)]
    ok = np.ones(len(at), np.bool_)
    k1, k2, k3 = (row_keys(p, ok) for p in parts)
    with np.errstate(over="ignore"):
        mixed = k1 ^ (k2 * MIX1) ^ (k3 * MIX2)  # SplitMix64's odd multipliers
    keys = keys.copy()
    keys[at] = (mixed ^ _TAG) | np.uint64(1)
    return keys
