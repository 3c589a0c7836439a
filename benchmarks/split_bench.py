"""Benchmark of `sudoku-pipeline split` against `solve --canonical` on the same rows.

    python -m benchmarks.split_bench [--rows 1000000] [--workers 2] [--repeats 3] [--write FILE]

* A corpus of `--rows` rows made from the 17-clue set by random Sudoku symmetries (so most
  rows are disguised copies of another: about 49,000 groups), the CSV of the end-to-end
  benchmark, or, without the shared data, `pipeline.generate`'s puzzles.
* `solve --canonical` (the solving and canonical forms a split needs, written as one file),
  then `split` (the same work, the groups cut, the rows shuffled, a folder of three Parquet
  files and a manifest), `split --format npy` and `split --stratify clues`, `--workers`, as
  real subprocesses, in turn `--repeats` times: the best wall time (start-up included),
  rows/s, and the peak memory of the whole process tree (the parent keeps the kept rows on
  disk, in the output's temporary folder, and holds about 30 bytes a row for the cut).
* Every command runs once untimed first, on a few rows, so that no kernel compiles in a timed
  run.
"""

import argparse
import datetime
import tempfile
from pathlib import Path

from benchmarks.common import SETS, SHARED_DATA, machine, run_cli
from benchmarks.kernels import write_section
from benchmarks.pipeline_e2e import make_corpus


def run_command(workers: int, *args: str) -> tuple[float, int]:
    """Run `sudoku-pipeline ARGS --quiet --workers N`; (wall seconds, peak tree RSS bytes)."""
    return run_cli(*args, "--quiet", "--workers", str(workers), "--force")


def corpus(path: Path, rows: int) -> str:
    """The benchmark's rows; what they are, in words."""
    if (SHARED_DATA / SETS["17-clue"]).exists():
        make_corpus(path, rows, ["17-clue"], seed=3)
        return "17-clue by symmetries"
    import pipeline

    pipeline.generate_file(rows, path, seed=3)
    return "generated"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=3, help="the best of this many runs")
    parser.add_argument("--write", type=Path, help="update this Markdown file's split section")
    args = parser.parse_args()
    lines = [
        "| run | rows | wall s | rows/s | vs solve --canonical | peak RSS (tree) |",
        "|---|---:|---:|---:|---:|---:|",
    ]

    def row(label: str, wall: float, peak: int, base: float | None) -> float:
        rate = args.rows / wall
        versus = f"{100 * rate / base:.0f}%" if base else ""
        lines.append(
            f"| {label} | {args.rows:,} | {wall:.1f} | {rate:,.0f} | {versus} | "
            f"{peak / 2**20:,.0f} MiB |"
        )
        print(lines[-1], flush=True)
        return rate

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        few, rows = folder / "few.csv", folder / "corpus.csv"
        kind = corpus(rows, args.rows)
        corpus(few, 200)
        runs = {
            f"solve --canonical, {kind}": ["solve", "--canonical", "-o", str(folder / "s.parquet")],
            "split 0.8,0.1,0.1, same rows": ["split", "-o", str(folder / "splits")],
            "split --format npy, same rows": [
                "split",
                "-o",
                str(folder / "npy"),
                "--format",
                "npy",
            ],
            "split --stratify clues, same rows": [
                "split",
                "-o",
                str(folder / "c"),
                "--stratify",
                "clues",
            ],
        }
        for command in runs.values():
            run_command(args.workers, command[0], str(few), *command[1:])  # compiled first
        best: dict[str, tuple[float, int]] = {}
        for _ in range(args.repeats):  # interleaved: the machine's load falls on all alike
            for label, command in runs.items():
                wall, peak = run_command(args.workers, command[0], str(rows), *command[1:])
                was = best.get(label, (wall, peak))
                best[label] = (min(wall, was[0]), max(peak, was[1]))
        rates = []
        for label, (wall, peak) in best.items():
            rates.append(
                row(
                    f"{label}, {args.workers} worker{'s' * (args.workers > 1)}",
                    wall,
                    peak,
                    rates[0] if rates else None,
                )
            )
        base, rate = rates[0], rates[1]
    verdict = (
        f"\nsplit: {rate:,.0f} rows/s end to end on {args.rows:,} rows, "
        f"{100 * rate / base:.0f}% of `solve --canonical` on the same rows.\n"
    )
    print(verdict)
    stamp = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    header = (
        f"Measured {stamp} on {machine()} with `python -m benchmarks.split_bench "
        f"--rows {args.rows} --workers {args.workers} --repeats {args.repeats}` (wall "
        "time of the command, start-up included, the best of the repeats, run in "
        "turn).\n\n"
    )
    if args.write:
        write_section(args.write, "split", header + "\n".join(lines) + "\n" + verdict)
        print(f"updated {args.write}")


if __name__ == "__main__":
    main()
