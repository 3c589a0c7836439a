"""Benchmark of `sudoku-pipeline enumerate` on one worker and on two, side by side.

    python -m benchmarks.enumerate_bench [--limit 100000] [--repeats 2] [--seed 1] [--write FILE]

* Sets (made from ../shared/data, seeded): the Kaggle sample (9,999 puzzles) with 6 random
  clues removed from each, and 300 17-clue puzzles with two random clues removed: corpora of
  many puzzles with many solutions each.
* `enumerate --limit N` to Parquet, as a real subprocess, `--workers 1` and `--workers 2`
  alternating, each keeping its best wall time (start-up included), the CPU time (user + system)
  of that run and its peak memory (the whole process tree); the two outputs must be the same
  (checked). On a loaded machine the CPU times say what the wall times cannot: how much more
  work two workers do for the same output.
* One untimed run on a few rows first, so that the kernels are compiled (or loaded) and cached
  before any clock starts.
"""

import argparse
import datetime
import resource
import tempfile
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq

from benchmarks.common import SETS, SHARED_DATA, load_set, machine, run_cli, write_section
from pipeline.grid import format_grids

SEVENTEEN = 300


def corpora(seed: int) -> dict[str, np.ndarray]:
    """The sets present in ../shared/data, clues removed."""
    rng = np.random.default_rng(seed)
    out = {}
    for name, removed, size in (("kaggle_first9999", 6, None), ("17-clue", 2, SEVENTEEN)):
        if not (SHARED_DATA / SETS[name]).exists():
            continue
        puzzles = load_set(SETS[name])
        if size is not None:
            puzzles = puzzles[rng.choice(len(puzzles), size=size, replace=False)]
        for row in puzzles:
            row[rng.choice(np.flatnonzero(row), size=removed, replace=False)] = 0
        out[f"{name} minus {removed} clues"] = puzzles
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=100_000)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--write", type=Path)
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        tmp = Path(folder)
        for name, puzzles in corpora(args.seed).items():
            source = tmp / "in.txt"
            source.write_text("\n".join(format_grids(puzzles).to_pylist()) + "\n")
            warm = tmp / "warm.txt"
            warm.write_text("\n".join(format_grids(puzzles[:3]).to_pylist()) + "\n")
            run_cli(
                "enumerate",
                str(warm),
                "-o",
                str(tmp / "warm.parquet"),
                "--force",
                "-q",
                "--limit",
                "10",
            )
            best: dict[int, tuple[float, int, float]] = {}
            for _ in range(args.repeats):
                for workers in (1, 2):
                    out = tmp / f"w{workers}.parquet"
                    before = resource.getrusage(resource.RUSAGE_CHILDREN)
                    wall, peak = run_cli(
                        "enumerate",
                        str(source),
                        "-o",
                        str(out),
                        "-q",
                        "--force",
                        "--limit",
                        str(args.limit),
                        "--workers",
                        str(workers),
                    )
                    after = resource.getrusage(resource.RUSAGE_CHILDREN)
                    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
                    if workers not in best or wall < best[workers][0]:
                        best[workers] = (wall, peak, cpu)
            one, two = pq.read_table(tmp / "w1.parquet"), pq.read_table(tmp / "w2.parquet")
            if not one.equals(two):
                raise SystemExit(f"{name}: the outputs of 1 and 2 workers differ")
            solutions = one.num_rows
            cells = [
                f"{wall:.2f} s ({solutions / wall / 1e6:.2f}M/s; CPU {cpu:.1f} s; "
                f"{peak / 2**20:.0f} MiB)"
                for wall, peak, cpu in (best[1], best[2])
            ]
            line = (
                f"| {name} | {len(puzzles):,} | {solutions:,} | {cells[0]} | {cells[1]} | "
                f"{best[1][0] / best[2][0]:.2f}x |"
            )
            print(line, flush=True)
            rows.append(line)
    body = (
        f"`python -m benchmarks.enumerate_bench` ({datetime.date.today()}, {machine()}): "
        f"`enumerate --limit {args.limit:,}` to Parquet as a process, start-up included, "
        f"best of {args.repeats}, 1 and 2 workers alternating: wall time, solutions written "
        "per second, the CPU time of that run and the peak memory of the process tree.\n\n"
        "| set | puzzles | solutions | 1 worker | 2 workers | speed-up |\n"
        "|---|---:|---:|---:|---:|---:|\n" + "".join(r + "\n" for r in rows)
    )
    print(body)
    if args.write:
        write_section(args.write, "enumerate-workers", body)


if __name__ == "__main__":
    main()
