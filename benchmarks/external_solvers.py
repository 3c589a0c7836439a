"""A solver from outside through the pipeline against its own harness: tdoku's library
through `bench --solver c:LIBRARY:TdokuSolverDpllTriadSimd` beside tdoku's `run_benchmark`
on the same puzzles, one core.

    TDOKU_BENCH=/path/to/tdoku/build/run_benchmark \\
        python -m benchmarks.external_solvers [--repeats 3] [--cpu 1] [--sets 17-clue,top1465]
        [--write docs/BENCHMARKS.md]

* The library is `TDOKU_LIB`, else `libtdoku_shared.so` beside `TDOKU_BENCH` (tdoku's cmake
  target `tdoku_shared`).
* Everything runs through `pipeline.jobs.bench.bench` (the API of `sudoku-pipeline bench`): the
  solver as `--solver` measures it (its puzzles/s: rows over the wall time of the solve step,
  reading, clash check and result table included; its grids fetched and its answers checked
  after the clock), `fast` beside it, and `run_benchmark -s tdoku` measured in the same
  round-robin repeats on the same puzzles, untransformed, counting to 2 (`bench --tdoku`).
* The process pins itself (and so tdoku, its child) to `--cpu`.
* The floors of issue 25: at least 0.8x run_benchmark on the hard sets (17-clue, top1465,
  forum_hardest_1905_11+), 0.6x on Kaggle rows.

Without TDOKU_BENCH (or without the library) nothing is measured, with a note.
"""

import argparse
import datetime
import os
from pathlib import Path

from benchmarks.common import SETS, SHARED_DATA, machine, write_section

ENV = "TDOKU_BENCH"
SYMBOL = "TdokuSolverDpllTriadSimd"
FLOORS = {"17-clue": 0.8, "top1465": 0.8, "forum_hardest_1905_11+": 0.8, "kaggle_first9999": 0.6}


def tdoku_library() -> Path | None:
    """tdoku's shared library: TDOKU_LIB, else beside TDOKU_BENCH; None when not built."""
    named = os.environ.get("TDOKU_LIB")
    bench = os.environ.get(ENV)
    path = Path(named) if named else Path(bench).with_name("libtdoku_shared.so") if bench else None
    return path if path is not None and path.is_file() else None


def table(names: list[str], library: Path, binary: str, repeats: int) -> str:
    from pipeline.jobs.bench.job import bench

    spec = f"c:{library}:{SYMBOL}"
    lines = [
        "| set | puzzles | through `bench --solver` puzzles/s | its us/puzzle (call) "
        "| run_benchmark puzzles/s | ratio | floor | kernel agrees | `fast` puzzles/s |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for name in names:
        path = SHARED_DATA / SETS[name]
        result = bench(path, "fast", repeats=repeats, tdoku=binary, solvers=[spec], progress=False)
        rows = {r.strategy: r for r in result.rows}
        mine, ours = rows[spec], rows["fast"]
        reference = next(iter(mine.references.values()), None)
        ratio = mine.puzzles_per_s / reference if reference else None
        agrees = _agreement(path, spec)
        floor = FLOORS.get(name)
        lines.append(
            f"| {name} | {mine.puzzles:,} | {mine.puzzles_per_s:,.0f} "
            f"| {mine.us_per_puzzle or 0:.2f} | {reference or 0:,.0f} "
            f"| {'' if ratio is None else f'{ratio:.2f}'} | {'' if floor is None else floor} "
            f"| {agrees} | {ours.puzzles_per_s:,.0f} |"
        )
        print(lines[-1], flush=True)
    return "\n".join(lines) + "\n"


def _agreement(path: Path, spec: str) -> str:
    """How many of the set's puzzles tdoku's verdict and our kernel agree on (solve --solver,
    checked answers), as `k of n`."""
    import polars as pl

    from pipeline import solve_batch
    from pipeline.io.opening import read_puzzles

    grids = read_puzzles(path).grids
    frame = solve_batch(grids, solver=spec)
    agreed = int(frame["kernel_agrees"].sum())
    wrong = frame.filter(pl.col("verdict").cast(pl.String) == "wrong_answer").height
    return f"{agreed:,} of {frame.height:,}" + (f" ({wrong} wrong answers)" if wrong else "")


def main() -> None:
    raw = argparse.RawDescriptionHelpFormatter
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=raw)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--cpu", type=int, default=1, help="the one core everything runs on")
    parser.add_argument("--sets", help="comma-separated set names (default: the floors' sets)")
    parser.add_argument("--write", type=Path, help="update this Markdown file's section")
    args = parser.parse_args()
    if args.cpu in os.sched_getaffinity(0):
        os.sched_setaffinity(0, {args.cpu})  # tdoku, a child process, inherits it
    binary, library = os.environ.get(ENV), tdoku_library()
    names = args.sets.split(",") if args.sets else list(FLOORS)
    names = [n for n in names if (SHARED_DATA / SETS[n]).exists()]
    if not binary or library is None or not names:
        body = (f"Not measured: {ENV} (tdoku's run_benchmark, with libtdoku_shared.so beside "
                "it or TDOKU_LIB) and the public sets in ../shared/data are needed.\n")  # fmt: skip
        print(body, end="")
    else:
        body = table(names, library, binary, args.repeats)
    if args.write:
        stamp = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
        header = (
            f"Measured {stamp} on {machine()} with `python -m benchmarks.external_solvers "
            f"--repeats {args.repeats}` (core {args.cpu}).\n\n"
        )
        write_section(args.write, "external_solvers", header + body)
        print(f"updated {args.write}")


if __name__ == "__main__":
    main()
