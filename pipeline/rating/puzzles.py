"""The puzzles the rating functions take, read one way: grids (`(n, 81) uint8` givens, 0 for a
blank) or pencilmark puzzles (`(n, 81) uint16` candidates, `pipeline.kernels.candidates`), and
the rows to leave out."""

import numpy as np

from pipeline.kernels.candidates import as_candidates


def rated_puzzles(
    grids: np.ndarray | None, candidates: np.ndarray | None, skip: np.ndarray | None, who: str
) -> tuple[np.ndarray, np.ndarray]:
    """`(puzzles (n, 81), skip (n,) bool)`: the candidates when given (`grids` is then
    ignored), else the grids; no row skipped when `skip` is None. ValueError, naming the
    function `who`, when neither is given or `skip` is not one flag a puzzle."""
    if candidates is not None:
        puzzles = as_candidates(candidates)
    elif grids is None:
        raise ValueError(f"{who} needs grids or candidates")
    else:
        puzzles = np.ascontiguousarray(grids, dtype=np.uint8).reshape(-1, 81)
    n = puzzles.shape[0]
    skip = np.zeros(n, dtype=np.bool_) if skip is None else np.asarray(skip, dtype=np.bool_)
    if skip.shape != (n,):
        raise ValueError(f"skip must have shape ({n},), got {skip.shape}")
    return puzzles, skip
