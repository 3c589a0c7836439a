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
* tdoku's function again through the batch contract (`library.py`: the batch handed to the
  library in one call): a wrapper of a few lines (`SHIM`, compiled with `cc` into a temporary
  folder, linked to the library), one call a batch that loops over tdoku's function in C.
* `around` is what the pipeline adds to each puzzle, in us: 1e6 / its rate, less the call's
  own time (`us/puzzle (call)`): reading, the clash check, the solver's process (copies in
  and out of shared memory), the result table.
* The process pins itself (and so tdoku, its child, and the solver's processes) to `--cpu`.
* The floors of issue 25: at least 0.8x run_benchmark on the hard sets (17-clue, top1465,
  forum_hardest_1905_11+), 0.6x on Kaggle rows.

Without TDOKU_BENCH (or without the library) nothing is measured, with a note.
"""

import argparse
import datetime
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from benchmarks.common import SETS, SHARED_DATA, machine, tdoku_path, write_section

ENV = "TDOKU_BENCH"
SYMBOL = "TdokuSolverDpllTriadSimd"
FLOORS = {"17-clue": 0.8, "top1465": 0.8, "forum_hardest_1905_11+": 0.8, "kaggle_first9999": 0.6}
BATCH_SYMBOL = "tdoku_batch"
SHIM = f"""
#include <stddef.h>
#include <stdint.h>
size_t {SYMBOL}(const char *, size_t, uint32_t, char *, size_t *);
const char {BATCH_SYMBOL}_sudoku_contract[] = "batch";
void {BATCH_SYMBOL}(const char *puzzles, size_t count, size_t limit, uint32_t config,
                    char *solutions, size_t *counts, size_t *guesses) {{
    for (size_t i = 0; i < count; i++)
        counts[i] = {SYMBOL}(puzzles + 82 * i, limit, config, solutions + 81 * i, guesses + i);
}}
"""


def batch_shim(library: Path, folder: Path) -> Path | None:
    """`SHIM` built beside nothing of ours (in `folder`), linked to tdoku's library; None
    without a C compiler."""
    cc = shutil.which("cc")
    if cc is None:
        return None
    source, built = folder / "tdoku_batch.c", folder / "libtdoku_batch.so"
    source.write_text(SHIM)
    where = str(library.resolve().parent)
    subprocess.run(
        [
            cc,
            "-O2",
            "-shared",
            "-fPIC",
            "-o",
            str(built),
            str(source),
            f"-L{where}",
            f"-l:{library.name}",
            f"-Wl,-rpath,{where}",
        ],
        check=True,
    )
    return built


def table(names: list[str], library: Path, binary: str, repeats: int, shim: Path | None) -> str:
    from pipeline.jobs.bench.job import bench

    spec = f"c:{library}:{SYMBOL}"
    batch = f"c:{shim}:{BATCH_SYMBOL}" if shim is not None else None
    lines = [
        "| set | puzzles | through `bench --solver` puzzles/s | its us/puzzle (call) | around "
        "| batch contract puzzles/s | around | run_benchmark puzzles/s | ratio | ratio, batch "
        "| floor | kernel agrees | `fast` puzzles/s |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for name in names:
        path = SHARED_DATA / SETS[name]
        solvers = [spec] + ([batch] if batch else [])
        result = bench(path, "fast", repeats=repeats, tdoku=binary, solvers=solvers, progress=False)
        rows = {r.strategy: r for r in result.rows}
        mine, ours = rows[spec], rows["fast"]
        whole = rows.get(batch) if batch else None
        reference = next(iter(mine.references.values()), None)
        agrees = _agreement(path, spec)
        floor = FLOORS.get(name)
        lines.append(
            f"| {name} | {mine.puzzles:,} | {mine.puzzles_per_s:,.0f} "
            f"| {mine.us_per_puzzle or 0:.2f} | {_around(mine)} "
            f"| {f'{whole.puzzles_per_s:,.0f}' if whole else ''} | {_around(whole)} "
            f"| {reference or 0:,.0f} | {_ratio(mine, reference)} | {_ratio(whole, reference)} "
            f"| {'' if floor is None else floor} | {agrees} | {ours.puzzles_per_s:,.0f} |"
        )
        print(lines[-1], flush=True)
    return "\n".join(lines) + "\n"


def _around(row: object) -> str:
    """us the pipeline adds to each puzzle around the call."""
    if row is None or not row.puzzles_per_s or row.us_per_puzzle is None:  # type: ignore[attr-defined]
        return ""
    return f"{1e6 / row.puzzles_per_s - row.us_per_puzzle:.2f}"  # type: ignore[attr-defined]


def _ratio(row: object, reference: float | None) -> str:
    if row is None or not reference:
        return ""
    return f"{row.puzzles_per_s / reference:.2f}"  # type: ignore[attr-defined]


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
    binary, library = os.environ.get(ENV), tdoku_path()
    names = args.sets.split(",") if args.sets else list(FLOORS)
    names = [n for n in names if (SHARED_DATA / SETS[n]).exists()]
    if not binary or library is None or not names:
        body = (
            f"Not measured: {ENV} (tdoku's run_benchmark, with libtdoku_shared.so beside "
            "it or TDOKU_LIB) and the public sets in ../shared/data are needed.\n"
        )
        print(body, end="")
    else:
        with tempfile.TemporaryDirectory() as folder:
            body = table(names, library, binary, args.repeats, batch_shim(library, Path(folder)))
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
