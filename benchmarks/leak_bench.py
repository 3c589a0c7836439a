"""Benchmark of the leak audit, `sudoku-pipeline validate TEST --against TRAIN`.

    python -m benchmarks.leak_bench [--train-rows 1000000] [--test-rows 100000] [--write FILE]

* TRAIN: `--train-rows` distinct puzzles, made from 2,000 generated ones (`pipeline.generate`,
  seeded) by adding 6 to 20 random givens of each one's solution (every row a puzzle with one
  solution, and almost surely a canonical form of its own); TEST: `--test-rows` made alike
  from 2,000 other generated puzzles, with 1% of its rows planted copies of TRAIN rows: half
  of them exact, half in disguise (a random Sudoku symmetry each). Header-less CSVs.
* The command on them, 2 workers, as a real subprocess (`--exit-zero`: it finds the leaks):
  wall time (start-up included) and the peak memory of the process tree; its findings are
  checked to be exactly the planted copies.
* The command runs once untimed first, on a few rows, so that its kernels are compiled.

Goal (issue 35): 1M TRAIN rows against 100k TEST rows in <= 15 s on 2 cores, memory bounded
by TRAIN's keys (12 bytes a row), not by its rows.
"""

import argparse
import datetime
import os
import tempfile
from pathlib import Path

import numpy as np
import polars as pl

from benchmarks.common import machine, run_cli, write_section
from pipeline import generate
from pipeline.grid import format_grids, parse_puzzles
from pipeline.symmetry import random_symmetries

WORKERS = 2
GOAL_S = 15.0


def more_givens(base: pl.DataFrame, n: int, rng: np.random.Generator) -> np.ndarray:
    """`(n, 81)` puzzles: random rows of `base`, each with 6 to 20 givens of its solution added."""
    pick = rng.integers(0, base.height, n)
    grids = parse_puzzles(base["puzzle"]).grids[pick]
    solutions = parse_puzzles(base["solution"]).grids[pick]
    extra = rng.random((n, 81)) < (rng.integers(6, 21, n) / 81)[:, None]
    return np.where((grids == 0) & extra, solutions, grids).astype(np.uint8)


def make_inputs(folder: Path, train_rows: int, test_rows: int) -> tuple[Path, Path, int]:
    """TRAIN and TEST CSVs (one puzzle a line, no header), and how many copies TEST holds."""
    rng = np.random.default_rng(35)
    train = more_givens(generate(2000, seed=1, clues=26), train_rows, rng)
    train = np.unique(train, axis=0)  # distinct rows (a few may still share a form)
    test = more_givens(generate(2000, seed=2, clues=26), test_rows, rng)
    planted = rng.choice(test_rows, test_rows // 100, replace=False)
    copied = train[rng.choice(len(train), len(planted), replace=False)]
    half = len(planted) // 2
    copied[half:] = random_symmetries(copied[half:], rng)
    test[planted] = copied
    paths = folder / "train.csv", folder / "test.csv"
    for path, grids in zip(paths, (train, test), strict=True):
        path.write_text("\n".join(format_grids(grids).to_pylist()) + "\n")
    return paths[0], paths[1], len(planted)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--train-rows", type=int, default=1_000_000)
    parser.add_argument("--test-rows", type=int, default=100_000)
    parser.add_argument("--write", type=Path, help="update this Markdown file's leak section")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        (folder / "few").mkdir()
        few_train, few_test, _ = make_inputs(folder / "few", 500, 100)
        out = folder / "findings.parquet"
        common = ("-o", str(out), "--exit-zero", "--quiet", "--workers", str(WORKERS))
        run_cli("validate", str(few_test), "--against", str(few_train), *common)
        load = os.getloadavg()[0]
        train, test, planted = make_inputs(folder, args.train_rows, args.test_rows)
        wall, peak = run_cli("validate", str(test), "--against", str(train), *common)
        found = pl.read_parquet(out).filter(pl.col("code") == "leak")
        exact = int(found["exact"].sum())
    line = (
        f"| {args.train_rows:,} | {args.test_rows:,} | {planted:,} | {found.height:,} "
        f"({exact:,} exact) | {wall:.1f} | {peak / 2**20:,.0f} MiB |"
    )
    print(line)
    ok = "ok" if wall <= GOAL_S else "MISSED"
    stamp = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    body = (
        f"Measured {stamp} on {machine()} (load average {load:.1f} when it started) with "
        f"`python -m benchmarks.leak_bench --train-rows {args.train_rows} --test-rows "
        f"{args.test_rows}`: `validate TEST --against TRAIN --workers {WORKERS}`, wall time "
        "of the command, start-up included.\n\n"
        "| TRAIN rows | TEST rows | planted copies | leaks found | wall s | peak RSS (tree) |\n"
        "|---:|---:|---:|---:|---:|---:|\n"
        f"{line}\n\nGoal: <= {GOAL_S:.0f} s ({ok}).\n"
    )
    if args.write:
        write_section(args.write, "leak", body)
        print(f"updated {args.write}")


if __name__ == "__main__":
    main()
