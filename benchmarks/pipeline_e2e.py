"""End-to-end benchmark of `sudoku-pipeline solve`: whole commands, wall time with start-up.

    python -m benchmarks.pipeline_e2e [--rows 1000000] [--big-rows 10000000] [--write FILE]

Side by side in one run, each figure the best of `--repeats` runs of a real process:

* for each corpus of `--rows` rows, CSV in and Parquet out, made by random symmetries from the
  public sets (Kaggle-style easy rows from kaggle1m_first9999; the 17-clue set; a hard mix of
  17-clue and forum_hardest_1905_11+):
  - in process, one core: a Python process that reads the CSV with polars, calls
    `pipeline.solve_batch` and writes Parquet, pinned to one CPU (`taskset`);
  - `sudoku-pipeline solve --workers 1`, `--workers 2`, and `--executor processes` and
    `--executor dask` (a LocalCluster) with 2 workers on the hard mix;
* the 3,000-row sample `data/sample.csv`, warm, and `sudoku-pipeline --help`;
* the first run after install: a fresh copy of the package (no compiled kernels) on the
  sample;
* `--big-rows` 17-clue rows with 2 workers: peak memory of the whole process tree.

Floors (issue 11): `--workers 1` >= 0.85 x in process; `--workers 2` >= 0.70 x twice in
process; the sample <= 0.6 s; `--help` <= 0.35 s; the first run <= 8 s; 10M rows < 1 GiB;
Dask LocalCluster >= 0.9 x local on the same rows.
"""

import argparse
import datetime
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import polars as pl

from benchmarks.common import SETS, SHARED_DATA, load_set, machine, run_cli, write_section
from pipeline.grid import format_grids
from pipeline.symmetry import random_symmetries

CHUNK = 1_000_000
ROOT = Path(__file__).resolve().parents[1]
CORPORA = {
    "Kaggle-style": ["kaggle_first9999"],
    "17-clue": ["17-clue"],
    "hard mix (17-clue + forum_hardest_1905_11+)": ["17-clue", "forum_hardest_1905_11+"],
}
IN_PROCESS = """
import sys, polars as pl
from pipeline import solve_batch
frame = pl.read_csv(sys.argv[1], infer_schema=False)
solve_batch(frame["puzzle"]).write_parquet(sys.argv[2], compression="zstd")
"""


def make_corpus(path: Path, rows: int, names: list[str], seed: int) -> None:
    """Write `rows` puzzles (symmetries of the named sets, in equal shares) as a CSV with a
    `puzzle` header, a million rows at a time."""
    rng = np.random.default_rng(seed)
    sources = [load_set(SETS[name]) for name in names]
    with path.open("wb") as f:
        for start in range(0, rows, CHUNK):
            n = min(CHUNK, rows - start)
            parts = []
            for k, source in enumerate(sources):
                share = n // len(sources) + (1 if k < n % len(sources) else 0)
                parts.append(source[rng.integers(0, len(source), share)])
            grids = random_symmetries(np.concatenate(parts), rng)
            grids = grids[rng.permutation(len(grids))]
            frame = pl.DataFrame({"puzzle": pl.Series(format_grids(grids, blank="0"))})
            frame.write_csv(f, include_header=start == 0)


def timed(argv: list[str], env: dict[str, str] | None = None, cwd: Path | None = None) -> float:
    """Wall seconds of a whole command (start-up included); exits on failure."""
    start = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, text=True, env=env, cwd=cwd)
    wall = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed ({done.returncode}): {done.stderr}")
    return wall


def best(repeats: int, argv: list[str], env: dict[str, str] | None = None) -> float:
    return min(timed(argv, env) for _ in range(repeats))


def cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "pipeline.cli", *args]


def fresh_install(folder: Path) -> dict[str, str]:
    """A copy of the package without any compiled kernel, and the environment that runs it."""
    shutil.copytree(
        ROOT / "pipeline", folder / "pipeline", ignore=shutil.ignore_patterns("__pycache__")
    )
    return {**os.environ, "PYTHONPATH": str(folder)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--big-rows", type=int, default=10_000_000)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--write", type=Path, help="update this Markdown file's e2e section")
    args = parser.parse_args()
    if not all((SHARED_DATA / SETS[n]).exists() for names in CORPORA.values() for n in names):
        print("public sets not found in ../shared/data: skipping the end-to-end benchmark")
        return
    cpu = str(min(os.sched_getaffinity(0)))
    lines = [
        "| corpus | run | rows | wall s | rows/s | vs in process |",
        "|---|---|---:|---:|---:|---:|",
    ]
    verdicts = []
    with tempfile.TemporaryDirectory() as tmp:
        out = str(Path(tmp) / "out.parquet")
        for name, sets in CORPORA.items():
            corpus = Path(tmp) / "corpus.csv"
            make_corpus(corpus, args.rows, sets, seed=1)
            plain = str(Path(tmp) / "in-process.parquet")  # not ours: solve would refuse it
            runs = {
                "in process, 1 core": [
                    "taskset",
                    "-c",
                    cpu,
                    sys.executable,
                    "-c",
                    IN_PROCESS,
                    str(corpus),
                    plain,
                ]
            }
            for workers in (1, 2):
                runs[f"solve --workers {workers}"] = cli(
                    "solve", str(corpus), "-o", out, "-q", "--workers", str(workers)
                )
            if name.startswith("hard"):
                for executor in ("processes", "dask"):
                    runs[f"solve --workers 2 --executor {executor}"] = cli(
                        "solve",
                        str(corpus),
                        "-o",
                        out,
                        "-q",
                        "--workers",
                        "2",
                        "--executor",
                        executor,
                    )
            walls = {}
            for run, argv in runs.items():
                walls[run] = best(args.repeats, argv)
                ratio = walls["in process, 1 core"] / walls[run]
                lines.append(
                    f"| {name} | {run} | {args.rows:,} | {walls[run]:.2f} | "
                    f"{args.rows / walls[run]:,.0f} | {ratio:.2f} |"
                )
                print(lines[-1], flush=True)
            base = walls["in process, 1 core"]
            one, two = base / walls["solve --workers 1"], base / walls["solve --workers 2"] / 2
            verdicts.append(
                f"{name}: --workers 1 at {one:.2f} x in process (floor 0.85), "
                f"--workers 2 at {two:.2f} x twice in process "
                "(floor 0.70)"
            )
            if name.startswith("hard"):
                dask = walls["solve --workers 2"] / walls["solve --workers 2 --executor dask"]
                verdicts.append(f"Dask LocalCluster at {dask:.2f} x local (floor 0.90)")
            corpus.unlink()

        sample = str(ROOT / "data" / "sample.csv")
        small = ["| command | wall s (best of 5) | floor |", "|---|---:|---:|"]
        timed(cli("solve", sample, "-o", out, "-q"))  # warm
        warm = best(5, cli("solve", sample, "-o", out, "-q"))
        small.append(f"| `solve data/sample.csv` (3,000 rows, warm) | {warm:.2f} | 0.6 |")
        script = str(Path(sys.executable).with_name("sudoku-pipeline"))
        helped = best(5, [script, "--help"])
        small.append(f"| `sudoku-pipeline --help` | {helped:.2f} | 0.35 |")
        fresh = Path(tmp) / "fresh"
        env = fresh_install(fresh)  # run from there, so that its copy is the one imported
        first = timed(
            [sys.executable, "-m", "pipeline.cli", "solve", sample, "-o", out], env, fresh
        )
        small.append(f"| `solve data/sample.csv`, first run after install | {first:.1f} | 8 |")
        print("\n".join(small), flush=True)

        memory = ""
        if args.big_rows:
            big = Path(tmp) / "big.csv"
            make_corpus(big, args.big_rows, ["17-clue"], seed=2)
            wall, peak = run_cli(
                "solve", str(big), "-o", str(Path(tmp) / "big.parquet"), "-q", "--workers", "2"
            )
            memory = (
                f"\n{args.big_rows:,} 17-clue rows, `solve --workers 2`: {wall:.1f} s, "
                f"peak memory of the whole process tree {peak / 2**20:,.0f} MiB "
                "(floor: under 1 GiB).\n"
            )
            print(memory, flush=True)
    summary = "\n".join(f"* {v}" for v in verdicts)
    print(summary)
    stamp = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    header = (
        f"Measured {stamp} on {machine()} with `python -m benchmarks.pipeline_e2e "
        f"--rows {args.rows} --big-rows {args.big_rows} --repeats {args.repeats}` (wall "
        "time of whole processes, start-up included; best of the repeats).\n\n"
    )
    body = "\n".join(lines) + "\n\n" + summary + "\n\n" + "\n".join(small) + "\n" + memory
    if args.write:
        write_section(args.write, "e2e", header + body)
        print(f"updated {args.write}")


if __name__ == "__main__":
    main()
