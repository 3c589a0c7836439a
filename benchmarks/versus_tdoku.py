"""Side by side with tdoku: our `fast` kernel and tdoku on the same puzzles, one core.

    TDOKU_BENCH=/path/to/tdoku/build/run_benchmark \\
        python -m benchmarks.versus_tdoku [--repeats 3] [--seconds 1] [--cpu 1] [--seed 1]
        [--sets 17-clue,top1465] [--write docs/BENCHMARKS.md]

* Every public set found in ../shared/data, each puzzle moved by one random Sudoku symmetry
  (fixed seed), so that neither solver meets the puzzles in the orientation it was tuned on.
* Both sides count up to 2 solutions and solve the same transformed puzzles: ours in process
  through `fast.solve_kernel` (the kernel alone, as the pipeline calls it; no parsing), tdoku
  through its own harness, `run_benchmark -r0 -n N` on a temporary file of those puzzles (`-r0`:
  no re-permutation; `-n N`: exactly the N puzzles, in order). Its timed loop also leaves the
  parsing out: it solves puzzles already in memory.
* One repeat of each side is full passes over the set until `--seconds` have passed (tdoku's
  harness does the same after its warm-up), puzzles/s from all passes; repeats alternate
  ours / tdoku, and each side keeps its best repeat.
* The process pins itself (and so tdoku, its child) to `--cpu`.

Guesses do not count the same thing on both sides. tdoku counts a guess per branch point (it
branches on a digit's configuration in a band: this one, or not this one); ours counts, per the
contract of `pipeline.kernels`, every candidate tried at a branching cell. The `branch points`
column is ours counted tdoku's way: cells branched on.

fastdoku (github rocketbombs/fastdoku, Rust) runs beside them when FASTDOKU_COUNT2 names a
count-to-2 harness built on its library (`fastdoku-count2 FILE --engine auto --rounds R`: its
`auto` engine, the jcz bitboards first, the triad engine when they give up): the same file as
tdoku's, in the same alternation. Its harness times R full passes and keeps the best one
(rounds chosen so that a repeat lasts about `--seconds`), a shade in its favour against the
all-passes rate of the other two.

Without TDOKU_BENCH (FASTDOKU_COUNT2) the tdoku (fastdoku) columns stay empty, with a note.
"""

import argparse
import datetime
import os
import re
import subprocess
import tempfile
import time
from pathlib import Path

import numpy as np

from benchmarks.common import available_sets, machine, write_section
from pipeline.kernels.fast import branch_points, solve_kernel
from pipeline.kernels.fast_entries import search_entries
from pipeline.symmetry import random_symmetries

ENV = "TDOKU_BENCH"
FASTDOKU_ENV = "FASTDOKU_COUNT2"


def transformed_sets(names: list[str] | None, seed: int) -> dict[str, np.ndarray]:
    """The public sets present, each puzzle moved by one random symmetry."""
    rng = np.random.default_rng(seed)
    sets = available_sets()
    return {
        name: random_symmetries(puzzles, rng)
        for name, puzzles in sets.items()
        if names is None or name in names
    }


def ours_once(puzzles: np.ndarray, seconds: float) -> tuple[float, np.ndarray]:
    """Full passes of `fast.solve_kernel` over `puzzles` until `seconds` have passed:
    (puzzles/s, guesses of the last pass)."""
    n = len(puzzles)
    skip = np.zeros(n, dtype=np.bool_)
    verdicts = np.zeros(n, dtype=np.int8)
    solutions = np.zeros((n, 81), dtype=np.uint8)
    nodes = np.zeros(n, dtype=np.int64)
    guesses = np.zeros(n, dtype=np.int64)
    solve_ns = np.zeros(n, dtype=np.int64)
    counts = np.zeros(n, dtype=np.int64)
    entries = search_entries()
    passes = 0
    start = time.perf_counter()
    while True:
        solve_kernel(
            puzzles, skip, entries, 2, 0, verdicts, solutions, nodes, guesses, solve_ns, counts
        )
        passes += 1
        elapsed = time.perf_counter() - start
        if elapsed >= seconds:
            return passes * n / elapsed, guesses


def write_for_tdoku(puzzles: np.ndarray, path: Path) -> None:
    """One 81-character line per puzzle, `.` for blanks (tdoku reads no `0`)."""
    chars = np.where(puzzles == 0, ord("."), puzzles + ord("0")).astype(np.uint8)
    lines = np.concatenate([chars, np.full((len(puzzles), 1), ord("\n"), np.uint8)], axis=1)
    path.write_bytes(lines.tobytes())


def tdoku_once(binary: str, path: Path, n: int, seconds: float) -> tuple[float, float]:
    """One run of tdoku's harness on the file: (puzzles/s, guesses/puzzle)."""
    command = [
        binary,
        "-s",
        "tdoku",
        "-r0",
        "-n",
        str(n),
        "-w",
        "1",
        "-t",
        str(max(1, round(seconds))),
        "-c1",
        "-v0",
        str(path),
    ]
    out = subprocess.run(command, capture_output=True, text=True, check=True).stdout
    line = [x for x in out.splitlines() if "," in x][-1]
    fields = line.split(",")  # ...,file,solver,puzzles/s,us/puzzle,%no guess,guesses/puzzle
    return float(fields[-4]), float(fields[-1])


def parse_fastdoku(out: str, n: int) -> float:
    """puzzles/s from the count-to-2 harness's line, `NAME  19.213 us  52.0K/s  [1465 puzzles,
    count-to-2: ...]` (from the microseconds a puzzle: more digits than the K/s); the number of
    puzzles it read must be `n` (it skips lines it cannot parse)."""
    found = re.search(r"([0-9.]+) us\s+[0-9.]+K/s\s+\[(\d+) puzzles", out)
    if found is None:
        raise ValueError(f"no 'us ... K/s [N puzzles' in fastdoku's output: {out.strip()!r}")
    if int(found[2]) != n:
        raise ValueError(f"fastdoku read {found[2]} puzzles of {n}")
    return 1e6 / float(found[1])


def fastdoku_once(binary: str, path: Path, n: int, rounds: int) -> float:
    """One run of the count-to-2 harness on the file (best of `rounds` passes): puzzles/s."""
    command = [binary, str(path), "--engine", "auto", "--rounds", str(rounds)]
    out = subprocess.run(command, capture_output=True, text=True, check=True).stdout
    return parse_fastdoku(out, n)


def best(old: float | None, new: float) -> float:
    return new if old is None else max(old, new)


def ratio(ours: float, theirs: float | None) -> float | None:
    return None if theirs is None else ours / theirs


def measure(
    name: str,
    puzzles: np.ndarray,
    binary: str | None,
    repeats: int,
    seconds: float,
    folder: Path,
    fastdoku: str | None = None,
) -> dict[str, float | None]:
    """Best of `repeats` alternating runs of each side on one set."""
    ours_once(puzzles[:50], 0.0)  # load the kernel before any clock runs
    path = folder / f"{re.sub(r'[^A-Za-z0-9_]+', '_', name)}.txt"
    if binary or fastdoku:
        write_for_tdoku(puzzles, path)
    best_ours, best_tdoku, tdoku_guesses, best_fastdoku = 0.0, None, None, None
    guesses = np.zeros(0)
    for _ in range(repeats):
        rate, guesses = ours_once(puzzles, seconds)
        best_ours = max(best_ours, rate)
        if binary:
            rate, tdoku_guesses = tdoku_once(binary, path, len(puzzles), seconds)
            best_tdoku = best(best_tdoku, rate)
        if fastdoku:
            rounds = max(1, round(seconds * best_ours / len(puzzles)))
            best_fastdoku = best(best_fastdoku, fastdoku_once(fastdoku, path, len(puzzles), rounds))
    return {
        "puzzles": len(puzzles),
        "ours": best_ours,
        "tdoku": best_tdoku,
        "ratio": ratio(best_ours, best_tdoku),
        "fastdoku": best_fastdoku,
        "fastdoku_ratio": ratio(best_ours, best_fastdoku),
        "guesses": float(guesses.mean()),
        "branch_points": float(branch_points(puzzles).mean()),
        "tdoku_guesses": tdoku_guesses,
    }


def table(
    sets: dict[str, np.ndarray],
    binary: str | None,
    repeats: int,
    seconds: float,
    fastdoku: str | None = None,
) -> str:
    def num(value: float | None, places: int) -> str:
        return "" if value is None else f"{value:,.{places}f}"

    lines = [
        "| set | puzzles | ours puzzles/s | tdoku puzzles/s | ours / tdoku | fastdoku puzzles/s "
        "| ours / fastdoku | our guesses/puzzle | our branch points/puzzle "
        "| tdoku guesses/puzzle |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    with tempfile.TemporaryDirectory(prefix="versus_tdoku_") as folder:
        for name, puzzles in sets.items():
            m = measure(name, puzzles, binary, repeats, seconds, Path(folder), fastdoku)
            lines.append(
                f"| {name} | {m['puzzles']:,} | {num(m['ours'], 0)} | {num(m['tdoku'], 0)} "
                f"| {num(m['ratio'], 2)} | {num(m['fastdoku'], 0)} "
                f"| {num(m['fastdoku_ratio'], 2)} | {num(m['guesses'], 1)} "
                f"| {num(m['branch_points'], 1)} | {num(m['tdoku_guesses'], 1)} |"
            )
            print(lines[-1], flush=True)
    return "\n".join(lines) + "\n"


def notes(binary: str | None, fastdoku: str | None) -> str:
    """What was not run, said under the table."""
    missing = [f"{ENV} is not set: tdoku was not run (its columns are empty)."] * (not binary)
    missing += [f"{FASTDOKU_ENV} is not set: fastdoku was not run (its columns are empty)."] * (
        not fastdoku
    )
    return "".join(f"\n{line}\n" for line in missing)


def main() -> None:
    raw = argparse.RawDescriptionHelpFormatter
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=raw)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=1.0, help="per repeat and side")
    parser.add_argument("--cpu", type=int, default=1, help="the one core both sides run on")
    parser.add_argument("--seed", type=int, default=1, help="of the random symmetries")
    parser.add_argument("--sets", help="comma-separated set names (default: all present)")
    parser.add_argument("--write", type=Path, help="update this Markdown file's section")
    args = parser.parse_args()
    if args.cpu in os.sched_getaffinity(0):
        os.sched_setaffinity(0, {args.cpu})  # tdoku, a child process, inherits it
    binary = os.environ.get(ENV) or None
    fastdoku = os.environ.get(FASTDOKU_ENV) or None
    load = os.getloadavg()[0]
    sets = transformed_sets(args.sets.split(",") if args.sets else None, args.seed)
    if not sets:
        print("No public sets found in ../shared/data: nothing to measure.")
        return
    body = table(sets, binary, args.repeats, args.seconds, fastdoku)
    note = notes(binary, fastdoku)
    print(note, end="")
    if args.write:
        stamp = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
        header = (
            f"Measured {stamp} on {machine()} with `python -m benchmarks.versus_tdoku "
            f"--repeats {args.repeats} --seconds {args.seconds:g}` (core {args.cpu}, "
            f"symmetry seed {args.seed}; load average {load:.2f} at the start, "
            f"{os.getloadavg()[0]:.2f} at the end).\n\n"
        )
        write_section(args.write, "versus_tdoku", header + body + note)
        print(f"updated {args.write}")


if __name__ == "__main__":
    main()
