"""Benchmark of `sudoku-pipeline augment`: augmented rows written per second, end to end.

    python -m benchmarks.augment_bench [--rows 500000] [--copies 8] [--write FILE]

* The input: `--rows` puzzles with their solutions (CSV: puzzle, solution), made from the
  Kaggle rows in ../shared/data (kaggle1m_first9999.csv) by random symmetries; and the same
  puzzles without their solutions (augment solves them first).
* `augment --copies K` on it, 2 workers, as a real subprocess: wall time with start-up,
  augmented rows written per second, and the peak memory of the whole process tree; to
  Parquet, and to a folder of arrays (`--format npy`).
* Every run is preceded by one untimed run on a few rows, so that the kernels are compiled
  (or loaded) and cached before any clock starts.

Floor: >= 1,000,000 augmented rows/s to Parquet with the solutions given, start-up
included (aim: 3,000,000).
"""

import argparse
import datetime
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import polars as pl

from benchmarks.common import SETS, SHARED_DATA, machine, run_cli
from benchmarks.kernels import write_section

FLOOR = 1_000_000
WORKERS = 2


def make_input(path: Path, rows: int, solutions: bool) -> None:
    """`rows` Kaggle puzzles (with their solutions when `solutions`) as CSV, made by
    symmetries of the public sample (`pipeline.augment` itself, seed 1)."""
    import pipeline

    kaggle = pl.read_csv(
        SHARED_DATA / SETS["kaggle_first9999"],
        has_header=False,
        infer_schema=False,
        new_columns=["puzzle", "solution"],
    )
    copies = -(-rows // kaggle.height)
    frame = pipeline.augment(kaggle, copies=copies, seed=1, workers=WORKERS).head(rows)
    frame.select(["puzzle", "solution"] if solutions else ["puzzle"]).write_csv(path)


def run_command(*args: str) -> tuple[float, int, float]:
    """(wall s, peak RSS of the tree, CPU s of the tree: user + system, every process)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    wall, peak = run_cli(*args, "--quiet", "--workers", str(WORKERS))
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, peak, cpu


def one_core(*args: str) -> float:
    """Wall seconds of `sudoku-pipeline ARGS --quiet --workers 1`, pinned to the last core."""
    core = max(os.sched_getaffinity(0))
    argv = [sys.executable, "-m", "pipeline.cli", *args, "--quiet", "--workers", "1"]
    start = time.perf_counter()
    done = subprocess.run(
        argv, capture_output=True, text=True, preexec_fn=lambda: os.sched_setaffinity(0, {core})
    )
    if done.returncode != 0:
        raise SystemExit(f"{args[0]} failed: {done.stderr}")
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, default=500_000)
    parser.add_argument("--copies", type=int, default=8)
    parser.add_argument("--write", type=Path, help="update this Markdown file's augment section")
    args = parser.parse_args()
    if not (SHARED_DATA / SETS["kaggle_first9999"]).exists():
        print("the Kaggle sample is not in ../shared/data: skipping the augment benchmark")
        return
    lines = [
        "| run | input rows | rows written | wall s | rows written/s | CPU s | peak RSS (tree) |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    rates, cpus = {}, {}
    load_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        few, solved, bare = folder / "few.csv", folder / "solved.csv", folder / "bare.csv"
        make_input(few, 100, True)
        make_input(solved, args.rows, True)
        make_input(bare, args.rows, False)
        out, arrays = folder / "out.parquet", folder / "arrays"
        k = str(args.copies)
        for label, source, extra, target in (
            ("to Parquet, solutions given", solved, [], out),
            ("to npy, solutions given", solved, ["--format", "npy"], arrays),
            ("to Parquet, solved first", bare, [], out),
        ):
            run_command("augment", str(few), "-o", str(target), "--copies", k, *extra)
            wall, peak, cpu = run_command(
                "augment", str(source), "-o", str(target), "--copies", k, "--seed", "7", *extra
            )
            if target == out:
                written = pl.scan_parquet(out).select(pl.len()).collect().item()
            else:
                written = len(np.load(arrays / "group.npy", mmap_mode="r"))
            inputs = pl.scan_csv(source).select(pl.len()).collect().item()
            rates[label], cpus[label] = written / wall, (cpu, written)
            lines.append(
                f"| {label}, {WORKERS} workers, K = {k} | {inputs:,} | {written:,} "
                f"| {wall:.2f} | {written / wall:,.0f} | {cpu:.2f} "
                f"| {peak / 2**20:,.0f} MiB |"
            )
            print(lines[-1], flush=True)
        # one core, side by side: augment against solve reading the same file (a ratio that
        # says more than a rate on a machine others share)
        solve_wall = one_core("solve", str(solved), "-o", str(folder / "solved.parquet"))
        augment_wall = one_core("augment", str(solved), "-o", str(out), "--copies", k)
        inputs = pl.scan_csv(solved).select(pl.len()).collect().item()
        per_core = inputs * args.copies / augment_wall
        lines.append(
            f"| one core: solve the same input (1 worker) | {inputs:,} | {inputs:,} "
            f"| {solve_wall:.2f} | {inputs / solve_wall:,.0f} | | |"
        )
        lines.append(
            f"| one core: augment to Parquet (1 worker), K = {k} | {inputs:,} "
            f"| {inputs * args.copies:,} | {augment_wall:.2f} "
            f"| {per_core:,.0f} | | |"
        )
        print("\n".join(lines[-2:]), flush=True)
    rate = rates["to Parquet, solutions given"]
    cpu, written = cpus["to Parquet, solutions given"]
    cores = len(os.sched_getaffinity(0))
    verdict = (
        f"\nAugmented rows to Parquet, solutions given: {rate:,.0f}/s, start-up "
        f"included (floor {FLOOR:,}: {'ok' if rate >= FLOOR else 'MISSED'}; aim "
        f"3,000,000). The run took {1e6 * cpu / written:.2f} CPU-us a row (every "
        f"process, start-up included): {cores} cores of its own would write "
        f"{cores * written / cpu:,.0f} rows/s (an estimate: CPU time taken on a shared "
        "machine is itself inflated). On one core, augmenting K copies of a file took "
        f"{augment_wall / solve_wall:.2f} x the time of solving it.\n"
    )
    print(verdict)
    stamp = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    load = f"{load_before:.1f} before, {os.getloadavg()[0]:.1f} after"
    header = (
        f"Measured {stamp} on {machine()} with `python -m benchmarks.augment_bench "
        f"--rows {args.rows} --copies {args.copies}` (wall time of the command, start-up "
        f"included; load average {load} on {os.cpu_count()} cores: other work shared "
        "the machine, so the rates are lower bounds and the one-core ratio says "
        "more).\n\n"
    )
    if args.write:
        write_section(args.write, "augment", header + "\n".join(lines) + "\n" + verdict)
        print(f"updated {args.write}")


if __name__ == "__main__":
    main()
