"""Shared test helpers: where the public puzzle sets live (when present), read as `solve` reads
them."""

from pathlib import Path

import numpy as np
import pytest

from pipeline.io.dataset import read_puzzles

SHARED_DATA = Path(__file__).resolve().parents[1] / ".." / "shared" / "data"


def shared_puzzles(name: str, limit: int | None = None) -> np.ndarray:
    """`(n, 81) uint8` puzzles from a public set in ../shared/data, or skip the test."""
    path = SHARED_DATA / name
    if not path.exists():
        pytest.skip(f"{path} not present (public sets are optional for the tests)")
    return read_puzzles(path, limit=limit).grids
