"""End-to-end benchmark of `sudoku-pipeline solve`: CSV in, Parquet out.

    python -m benchmarks.pipeline_e2e [--rows 1000000] [--big-rows 10000000] [--write FILE]

* A corpus of `--rows` rows made from the 17-clue and forum_hardest_1905_11+ sets (half each)
  by random Sudoku symmetries, written as CSV.
* The kernel-only rate on the same rows, in this process, one core (`solve_grids`).
* `sudoku-pipeline solve` on it with 1 and 2 workers, as a real subprocess: rows/s, and the
  peak memory of the whole process tree (the sum of the RSS of the command and its workers,
  sampled every 50 ms).
* The same command on `--big-rows` rows (17-clue only: memory depends on rows, not on how hard
  they are) for the bounded-memory claim.

* `--executor dask` (a LocalCluster of 2 workers) on the same rows.

Floors: 1 worker >= 85% of the kernel-only rate; 2 workers >= 1.7 x 1 worker; peak memory
< 1 GiB for 10,000,000 rows (issue #3); Dask LocalCluster >= 90% of the local executor (#6).
"""

import argparse
import datetime
import tempfile
import time
from pathlib import Path

import numpy as np
import polars as pl

from benchmarks.common import SETS, SHARED_DATA, load_set, machine, run_cli
from benchmarks.kernels import write_section
from pipeline.grid import format_grids
from pipeline.solver import solve_grids
from pipeline.symmetry import random_symmetries

CHUNK = 1_000_000


def make_corpus(path: Path, rows: int, names: list[str], seed: int) -> np.ndarray | None:
    """Write `rows` puzzles (symmetries of the named sets, in equal shares) as a header-less
    CSV; returns the grids when they fit comfortably in memory (for the kernel-only run)."""
    rng = np.random.default_rng(seed)
    sources = [load_set(SETS[name]) for name in names]
    keep = rows <= 2 * CHUNK
    kept = []
    with path.open("wb") as f:
        for start in range(0, rows, CHUNK):
            n = min(CHUNK, rows - start)
            parts = []
            for k, source in enumerate(sources):
                share = n // len(sources) + (1 if k < n % len(sources) else 0)
                parts.append(source[rng.integers(0, len(source), share)])
            grids = random_symmetries(np.concatenate(parts), rng)
            grids = grids[rng.permutation(len(grids))]
            pl.DataFrame({"puzzle": pl.Series(format_grids(grids, blank="0"))}).write_csv(
                f, include_header=False
            )
            if keep:
                kept.append(grids)
    return np.concatenate(kept) if keep else None


def run_solve(corpus: Path, out: Path, workers: int, *extra: str) -> tuple[float, int]:
    """`sudoku-pipeline solve`; returns (wall seconds, peak RSS of the process tree in bytes)."""
    return run_cli("solve", str(corpus), "-o", str(out), "--workers", str(workers), "--quiet",
                   *extra)  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--big-rows", type=int, default=10_000_000)
    parser.add_argument("--write", type=Path, help="update this Markdown file's e2e section")
    args = parser.parse_args()
    names = ["17-clue", "forum_hardest_1905_11+"]
    if not all((SHARED_DATA / SETS[n]).exists() for n in names):
        print("public sets not found in ../shared/data: skipping the end-to-end benchmark")
        return
    lines = ["| run | rows | wall s | rows/s | vs kernel-only | peak RSS (tree) |",
             "|---|---:|---:|---:|---:|---:|"]  # fmt: skip
    with tempfile.TemporaryDirectory() as tmp:
        corpus = Path(tmp) / "corpus.csv"
        grids = make_corpus(corpus, args.rows, names, seed=1)
        assert grids is not None
        solve_grids(grids[:10])
        start = time.perf_counter()
        solve_grids(grids)
        kernel_rate = len(grids) / (time.perf_counter() - start)
        del grids
        lines.append(f"| kernel only, 1 core, in process | {args.rows:,} | "
                     f"{args.rows / kernel_rate:.1f} | {kernel_rate:,.0f} | 100% | |")  # fmt: skip
        print(lines[-1], flush=True)
        rates = {}
        for workers in (1, 2):
            wall, peak = run_solve(corpus, Path(tmp) / "out.parquet", workers)
            rates[workers] = args.rows / wall
            lines.append(
                f"| solve --workers {workers} | {args.rows:,} | {wall:.1f} | "
                f"{rates[workers]:,.0f} | {100 * rates[workers] / kernel_rate:.0f}% | "
                f"{peak / 2**20:,.0f} MiB |"
            )
            print(lines[-1], flush=True)
        wall, peak = run_solve(corpus, Path(tmp) / "out.parquet", 2, "--executor", "dask")
        dask_rate = args.rows / wall
        lines.append(
            f"| solve --workers 2 --executor dask (LocalCluster) | {args.rows:,} | {wall:.1f} | "
            f"{dask_rate:,.0f} | {100 * dask_rate / kernel_rate:.0f}% | {peak / 2**20:,.0f} MiB |"
        )
        print(lines[-1], flush=True)
        corpus.unlink()
        if args.big_rows:
            big = Path(tmp) / "big.csv"
            make_corpus(big, args.big_rows, ["17-clue"], seed=2)
            wall, peak = run_solve(big, Path(tmp) / "big.parquet", 2)
            lines.append(
                f"| solve --workers 2, 17-clue only | {args.big_rows:,} | {wall:.1f} | "
                f"{args.big_rows / wall:,.0f} | | {peak / 2**20:,.0f} MiB |"
            )
            print(lines[-1], flush=True)
    verdict = (
        f"\n1 worker / kernel-only: {100 * rates[1] / kernel_rate:.0f}% (floor 85%); "
        f"2 workers / 1 worker: {rates[2] / rates[1]:.2f}x (floor 1.7x); "
        f"Dask LocalCluster / local, 2 workers: {100 * dask_rate / rates[2]:.0f}% (floor 90%).\n"
    )
    print(verdict)
    stamp = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    header = (f"Measured {stamp} on {machine()} with `python -m benchmarks.pipeline_e2e "
              f"--rows {args.rows} --big-rows {args.big_rows}`.\n\n")  # fmt: skip
    if args.write:
        write_section(args.write, "e2e", header + "\n".join(lines) + "\n" + verdict)
        print(f"updated {args.write}")


if __name__ == "__main__":
    main()
