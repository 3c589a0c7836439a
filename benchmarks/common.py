"""Helpers shared by the benchmark scripts: the public sets, the machine, timing."""

import os
import platform
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

SHARED_DATA = Path(__file__).resolve().parents[1] / ".." / "shared" / "data"
SETS = {
    "17-clue": "puzzles2_17_clue.txt",
    "top1465": "puzzles3_magictour_top1465.txt",
    "forum_hardest_1905_11+": "puzzles5_forum_hardest_1905_11+.txt",
    "forum_hardest_1106": "puzzles6_forum_hardest_1106.txt",
    "serg_benchmark": "puzzles7_serg_benchmark.txt",
    "kaggle_first9999": "kaggle1m_first9999.csv",
}


def load_set(file_name: str) -> np.ndarray:
    """`(n, 81) uint8` puzzles of a public set (first column of CSVs, `#` lines skipped)."""
    lines = []
    with (SHARED_DATA / file_name).open() as f:
        for line in f:
            line = line.strip()
            if line and not line.startswith("#"):
                lines.append(line.split(",")[0])
    raw = np.frombuffer("".join(lines).encode(), dtype=np.uint8).reshape(-1, 81).copy()
    raw[raw == ord(".")] = ord("0")
    return raw - ord("0")


def available_sets() -> dict[str, np.ndarray]:
    return {name: load_set(f) for name, f in SETS.items() if (SHARED_DATA / f).exists()}


def machine() -> str:
    cpu = platform.processor() or "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{cpu}, {os.cpu_count()} cores, Python {platform.python_version()}"


def best_of(repeats: int, fn: Callable[[], object]) -> float:
    """Best wall time of `repeats` calls, in seconds (the least disturbed run)."""
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best
