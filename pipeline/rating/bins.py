"""The difficulty scale in bins, for figures by difficulty (`score`'s summary, `report`): `0`
(no guess on any symmetry), then `0-1`, `1-2`, `2-4`, `4-8`, ... (upper bounds included):
doubling bins, since mean guesses spread over orders of magnitude, the same for every file
so that two files' bins line up.

    codes = difficulty_bins(np.array([0.0, 0.5, 3.0, np.nan]))   # [0, 1, 3, -1]
    [bin_label(c) for c in codes[:3]]                            # ['0', '0-1', '2-4']
"""

import numpy as np

NO_BIN = -1  # a missing (NaN), infinite or negative difficulty


def difficulty_bins(values: np.ndarray) -> np.ndarray:
    """`(n,) int64` bin codes of difficulties (`bin_label` names them); NO_BIN for NaN,
    infinite and negative values."""
    values = np.asarray(values, dtype=np.float64)
    codes = np.full(values.shape, NO_BIN, np.int64)
    positive = (values > 0) & np.isfinite(values)
    with np.errstate(divide="ignore", invalid="ignore"):
        tops = np.maximum(np.ceil(np.log2(np.where(positive, values, 1.0))), 0)
    codes[positive] = tops[positive].astype(np.int64) + 1
    codes[values == 0] = 0
    return codes


def bin_label(code: int) -> str:
    """`0`, `0-1`, `1-2`, `2-4`, ... for codes 0, 1, 2, 3, ..."""
    if code < 0:
        raise ValueError(f"no bin {code}")
    if code == 0:
        return "0"
    low = 0 if code == 1 else 2 ** (code - 2)
    return f"{low}-{2 ** (code - 1)}"
