"""Shared test helpers: where the public puzzle sets live (when present) and small readers."""

from pathlib import Path

import numpy as np
import pytest

SHARED_DATA = Path(__file__).resolve().parents[1] / ".." / "shared" / "data"


def shared_puzzles(name: str, limit: int | None = None) -> np.ndarray:
    """`(n, 81) uint8` puzzles from a public set in ../shared/data, or skip the test."""
    path = SHARED_DATA / name
    if not path.exists():
        pytest.skip(f"{path} not present (public sets are optional for the tests)")
    lines = []
    with path.open() as f:
        for line in f:
            line = line.strip()
            if line and not line.startswith("#"):
                lines.append(line.split(",")[0])
                if limit is not None and len(lines) >= limit:
                    break
    raw = np.frombuffer("".join(lines).encode(), dtype=np.uint8).reshape(-1, 81).copy()
    raw[raw == ord(".")] = ord("0")
    return raw - ord("0")
