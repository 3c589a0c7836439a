"""Counting solutions side by side with tdoku's library: the same puzzles, the same limit, one core.

    TDOKU_LIB=/path/to/libtdoku_shared.so python -m benchmarks.counting
        [--repeats 3] [--limit 10000] [--cpu 1] [--seed 1] [--write docs/BENCHMARKS.md]

(or TDOKU_BENCH=/path/to/run_benchmark, the library being beside it in tdoku's build folder)

* Sets: the serg benchmark (puzzles with many solutions: median about 130), and 17-clue
  puzzles with two random clues removed (counts in the thousands; a fixed sample of 500).
* Ours: `fast.solve_kernel` with `max_solutions=limit` over the whole set (the kernel alone, as
  `solve_grids` calls it). tdoku: `TdokuSolverDpllTriadSimd(puzzle, limit, 0, solution,
  &guesses)` through ctypes, one call a puzzle from Python (a call costs about a microsecond
  more than in C: under 2% of a count here, in tdoku's disfavour). Both see the same puzzles,
  their counts must agree (checked), and repeats alternate ours / tdoku, each keeping its best.
* The process pins itself to `--cpu`.

Without the library the tdoku columns stay empty (with a note).
"""

import argparse
import ctypes
import datetime
import os
import time
from pathlib import Path

import numpy as np

from benchmarks.common import SETS, SHARED_DATA, load_set, machine, tdoku_library, write_section
from pipeline.kernels.fast import solve_kernel
from pipeline.kernels.fast_entries import search_entries

SAMPLE = 500  # 17-clue puzzles with two clues removed


def sets(seed: int) -> dict[str, np.ndarray]:
    """The counting sets present in ../shared/data."""
    out = {}
    if (SHARED_DATA / SETS["serg_benchmark"]).exists():
        out["serg_benchmark"] = load_set(SETS["serg_benchmark"])
    if (SHARED_DATA / SETS["17-clue"]).exists():
        rng = np.random.default_rng(seed)
        puzzles = load_set(SETS["17-clue"])
        sample = puzzles[rng.choice(len(puzzles), size=min(SAMPLE, len(puzzles)), replace=False)]
        for row in sample:
            row[rng.choice(np.flatnonzero(row), size=2, replace=False)] = 0
        out["17-clue minus 2 clues"] = sample
    return out


def ours_once(puzzles: np.ndarray, limit: int) -> tuple[float, np.ndarray]:
    """One pass of the kernel: (seconds, counts)."""
    n = len(puzzles)
    outs = (
        np.zeros(n, np.int8),
        np.zeros((n, 81), np.uint8),
        *(np.zeros(n, np.int64) for _ in range(4)),
    )
    entries = search_entries()
    start = time.perf_counter()
    solve_kernel(puzzles, np.zeros(n, np.bool_), entries, limit, 0, *outs)
    return time.perf_counter() - start, outs[-1]


def tdoku_once(library: ctypes.CDLL, lines: list[bytes], limit: int) -> tuple[float, np.ndarray]:
    solve = library.TdokuSolverDpllTriadSimd
    out = ctypes.create_string_buffer(82)
    guesses = ctypes.c_size_t()
    counts = np.zeros(len(lines), np.int64)
    start = time.perf_counter()
    for i, line in enumerate(lines):
        counts[i] = solve(line, limit, 0, out, guesses)
    return time.perf_counter() - start, counts


def table(library: ctypes.CDLL | None, repeats: int, limit: int, seed: int) -> str:
    def num(value: float | None, places: int) -> str:
        return "" if value is None else f"{value:,.{places}f}"

    lines = [
        "| set | puzzles | limit | median count | max count | ours puzzles/s "
        "| tdoku puzzles/s | ours / tdoku | counts agree |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for name, puzzles in sets(seed).items():
        ours_once(puzzles[:5], limit)  # load the kernel before any clock runs
        texts = [bytes(np.where(p == 0, ord("."), p + ord("0")).astype(np.uint8)) for p in puzzles]
        best_ours, best_tdoku = float("inf"), float("inf")
        counts = theirs = np.zeros(0)
        for _ in range(repeats):
            seconds, counts = ours_once(puzzles, limit)
            best_ours = min(best_ours, seconds)
            if library is not None:
                seconds, theirs = tdoku_once(library, texts, limit)
                best_tdoku = min(best_tdoku, seconds)
        n = len(puzzles)
        tdoku_rate = None if library is None else n / best_tdoku
        agree = "" if library is None else ("yes" if (counts == theirs).all() else "NO")
        lines.append(
            f"| {name} | {n:,} | {limit:,} | {np.median(counts):,.0f} | {counts.max():,} "
            f"| {num(n / best_ours, 0)} | {num(tdoku_rate, 0)} "
            f"| {num(None if tdoku_rate is None else best_tdoku / best_ours, 2)} | {agree} |"
        )
        print(lines[-1], flush=True)
    return "\n".join(lines) + "\n"


def main() -> None:
    raw = argparse.RawDescriptionHelpFormatter
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=raw)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--limit", type=int, default=10_000, help="solutions counted at most")
    parser.add_argument("--cpu", type=int, default=1, help="the one core both sides run on")
    parser.add_argument("--seed", type=int, default=1, help="of the sample and clues removed")
    parser.add_argument("--write", type=Path, help="update this Markdown file's section")
    args = parser.parse_args()
    if args.cpu in os.sched_getaffinity(0):
        os.sched_setaffinity(0, {args.cpu})
    library = tdoku_library()
    load = os.getloadavg()[0]
    body = table(library, args.repeats, args.limit, args.seed)
    note = "" if library else "\ntdoku's library not found (TDOKU_LIB, TDOKU_BENCH): not run.\n"
    print(note, end="")
    if args.write:
        stamp = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
        header = (
            f"Measured {stamp} on {machine()} with `python -m benchmarks.counting "
            f"--repeats {args.repeats} --limit {args.limit}` (core {args.cpu}, seed "
            f"{args.seed}; load average {load:.2f} at the start, {os.getloadavg()[0]:.2f} at the "
            "end; the machine was shared with other work: compare the ratio).\n\n"
        )
        write_section(args.write, "counting", header + body + note)
        print(f"updated {args.write}")


if __name__ == "__main__":
    main()
