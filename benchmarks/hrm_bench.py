"""Benchmark of `sudoku-pipeline split --format hrm --augment K`: a CSV to HRM's arrays.

    python -m benchmarks.hrm_bench [--rows 1000000] [--copies 8] [--workers 2] [--write FILE]

* `--rows` generated puzzles (`pipeline.generate_file`, untimed), as a CSV with solutions.
* `split --format hrm --fractions 0.9,0.1 --augment K --workers N` as a real subprocess,
  once untimed on 200 rows first (no kernel compiles in the timed run): wall time (start-up
  included), output rows (HRM examples: every training puzzle and its K copies, the test
  puzzles) per second, and the peak memory of the process tree.
"""

import argparse
import datetime
import json
import tempfile
from pathlib import Path

from benchmarks.common import machine, run_cli
from benchmarks.kernels import write_section


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--copies", type=int, default=8)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--write", type=Path, help="update this Markdown file's hrm section")
    args = parser.parse_args()
    import pipeline

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        few, rows = folder / "few.csv", folder / "corpus.csv"
        pipeline.generate_file(200, few, seed=3)
        pipeline.generate_file(args.rows, rows, seed=3)
        command = ["--format", "hrm", "--fractions", "0.9,0.1", "--augment", str(args.copies),
                   "--quiet", "--workers", str(args.workers), "--force"]  # fmt: skip
        run_cli("split", str(few), "-o", str(folder / "warm"), *command)
        wall, peak = run_cli("split", str(rows), "-o", str(folder / "hrm"), *command)
        manifest = json.loads((folder / "hrm" / "manifest.json").read_text())
        examples = sum(s["examples"] for s in manifest["splits"].values())
        size = sum(p.stat().st_size for p in (folder / "hrm").rglob("*") if p.is_file())
    line = (f"| {args.rows:,} | {args.copies} | {args.workers} | {examples:,} | {wall:.1f} | "
            f"{examples / wall:,.0f} | {peak / 2**20:,.0f} MiB | "
            f"{size / 2**30:.2f} GiB |")  # fmt: skip
    table = (
        "| input rows | K | workers | output rows | wall s | output rows/s | peak RSS "
        "(tree) | written |\n|---:|---:|---:|---:|---:|---:|---:|---:|\n" + line + "\n"
    )
    print(table)
    stamp = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    header = (f"Measured {stamp} on {machine()} with `python -m benchmarks.hrm_bench --rows "
              f"{args.rows} --copies {args.copies} --workers {args.workers}` (one run, wall "
              "time of the command, start-up and solving every row included).\n\n")  # fmt: skip
    if args.write:
        write_section(args.write, "hrm", header + table)
        print(f"updated {args.write}")


if __name__ == "__main__":
    main()
