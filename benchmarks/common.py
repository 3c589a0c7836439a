"""Helpers shared by the benchmark scripts (and the tests that check our answers against
tdoku): the public sets, the machine, timing, tdoku's library."""

import ctypes
import os
import platform
import re
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from pipeline.cpu import instructions
from pipeline.io.opening import read_puzzles
from pipeline.io.runinfo import cpu_model

SHARED_DATA = Path(__file__).resolve().parents[1] / ".." / "shared" / "data"
SETS = {
    "17-clue": "puzzles2_17_clue.txt",
    "top1465": "puzzles3_magictour_top1465.txt",
    "forum_hardest_1905_11+": "puzzles5_forum_hardest_1905_11+.txt",
    "forum_hardest_1106": "puzzles6_forum_hardest_1106.txt",
    "serg_benchmark": "puzzles7_serg_benchmark.txt",
    "kaggle_first9999": "kaggle1m_first9999.csv",
}


def tdoku_path() -> Path | None:
    """tdoku's shared library: `TDOKU_LIB`, else `libtdoku_shared.so` beside `TDOKU_BENCH`'s
    `run_benchmark`; None when neither names a file that exists."""
    candidates = [os.environ.get("TDOKU_LIB")]
    bench = os.environ.get("TDOKU_BENCH")
    if bench:
        candidates.append(str(Path(bench).with_name("libtdoku_shared.so")))
    return next((Path(c) for c in candidates if c and Path(c).is_file()), None)


def tdoku_library() -> ctypes.CDLL | None:
    """`tdoku_path()` loaded, its solver's signature declared; None when not built."""
    path = tdoku_path()
    if path is None:
        return None
    library = ctypes.CDLL(str(path))
    solve = library.TdokuSolverDpllTriadSimd
    solve.restype = ctypes.c_size_t
    solve.argtypes = [ctypes.c_char_p, ctypes.c_size_t, ctypes.c_uint32,
                      ctypes.c_char_p, ctypes.POINTER(ctypes.c_size_t)]  # fmt: skip
    return library


def load_set(file_name: str) -> np.ndarray:
    """`(n, 81) uint8` puzzles of a public set, read the way `solve` reads it."""
    return read_puzzles(SHARED_DATA / file_name).grids


def available_sets() -> dict[str, np.ndarray]:
    return {name: load_set(f) for name, f in SETS.items() if (SHARED_DATA / f).exists()}


def machine() -> str:
    """The machine, as the benchmark tables name it (the run metadata's CPU and Python)."""
    return (
        f"{cpu_model()} ({instructions()}), {os.cpu_count()} cores, "
        f"Python {platform.python_version()}"
    )


def best_of(repeats: int, fn: Callable[[], object]) -> float:
    """Best wall time of `repeats` calls, in seconds (the least disturbed run)."""
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def tree_rss(pid: int) -> int:
    """Sum of VmRSS (bytes) of `pid` and all its descendants."""
    total = 0
    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
            children.setdefault(int(fields[1]), []).append(int(stat.parent.name))
        except (OSError, IndexError, ValueError):
            continue
    todo = [pid]
    while todo:
        p = todo.pop()
        todo.extend(children.get(p, []))
        try:
            for line in Path(f"/proc/{p}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1]) * 1024
        except OSError:
            pass
    return total


def _high_water(pid: int) -> int:
    """A process's peak RSS so far (VmHWM, bytes); 0 once it has gone."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def run_cli(*args: str) -> tuple[float, int]:
    """Run `sudoku-pipeline ARGS` as a real process; returns (wall seconds, peak RSS in bytes of
    the whole process tree, sampled every 50 ms, or the main process's own peak if higher)."""
    command = [sys.executable, "-m", "pipeline.cli", *args]
    start = time.perf_counter()
    process = subprocess.Popen(
        command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    )
    peak = 0
    done = threading.Event()

    def sample() -> None:  # the root's own high-water mark too: a sample may miss a peak
        nonlocal peak
        while not done.is_set():
            peak = max(peak, tree_rss(process.pid), _high_water(process.pid))
            time.sleep(0.05)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    _, err = process.communicate()
    wall = time.perf_counter() - start
    done.set()
    sampler.join()
    if process.returncode != 0:
        raise SystemExit(f"{args[0]} failed ({process.returncode}): {err}")
    return wall, peak


def write_section(doc: Path, section: str, body: str) -> None:
    """Replace the text between `<!-- NAME:start -->` and `<!-- NAME:end -->` in `doc`."""
    text = doc.read_text() if doc.exists() else ""
    start, end = f"<!-- {section}:start -->", f"<!-- {section}:end -->"
    block = f"{start}\n{body}{end}"
    if start in text:
        text = re.sub(re.escape(start) + ".*?" + re.escape(end), lambda _: block, text, flags=re.S)
    else:
        text += f"\n{block}\n"
    doc.write_text(text)
