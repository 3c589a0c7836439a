"""Benchmark of `sudoku-pipeline validate` against `solve` on the same rows.

    python -m benchmarks.validate_bench [--rows 1000000] [--big-rows 0] [--write FILE]

* A corpus of `--rows` rows made from the 17-clue set by random Sudoku symmetries (header-less
  CSV, as in the end-to-end benchmark), so that start-up (about 1.5 s for the worker processes)
  does not hide the steady rates.
* `solve` and `validate` on it, 2 workers, as real subprocesses: wall time, rows/s, and the
  peak memory of the whole process tree.
* `validate --minimal` on the 17-clue set itself (49,158 puzzles, all minimal): the cost of the
  minimality check, which runs one more uniqueness search per given.
* Every command runs once untimed first, on a few rows: a machine where validate never ran
  compiles its kernels then (about 10 s for `--symmetry`), and that is not its rate.
* With `--big-rows N`, `validate` on N rows (17-clue by symmetries) for the memory of the
  duplicate check (16 bytes a row in the parent).

Floor: validate (without --minimal) >= 80% of solve's rate on the same rows.
"""

import argparse
import datetime
import tempfile
from pathlib import Path

from benchmarks.common import SETS, SHARED_DATA, machine, run_cli
from benchmarks.kernels import write_section
from benchmarks.pipeline_e2e import make_corpus

FLOOR = 0.80
WORKERS = 2


def run_command(*args: str) -> tuple[float, int]:
    """Run `sudoku-pipeline ARGS --quiet --workers 2`; (wall seconds, peak tree RSS bytes)."""
    return run_cli(*args, "--quiet", "--workers", str(WORKERS))


def warm_up(folder: Path, out: str) -> None:
    """Each command of the benchmark once on a few rows, untimed: the kernels it calls are
    compiled (or loaded) and cached before any clock starts."""
    few = folder / "few.csv"
    make_corpus(few, 200, ["17-clue"], seed=5)
    for args in (["solve"], ["validate"], ["validate", "--symmetry"], ["validate", "--minimal"]):
        run_command(*args[:1], str(few), "-o", out, *args[1:])
    few.unlink()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--big-rows", type=int, default=0)
    parser.add_argument("--write", type=Path, help="update this Markdown file's validate section")
    args = parser.parse_args()
    seventeen = SHARED_DATA / SETS["17-clue"]
    if not seventeen.exists():
        print("the 17-clue set is not in ../shared/data: skipping the validate benchmark")
        return
    lines = [
        "| run | rows | wall s | rows/s | vs solve | peak RSS (tree) |",
        "|---|---:|---:|---:|---:|---:|",
    ]

    def row(label: str, rows: int, wall: float, peak: int, base: float | None) -> float:
        rate = rows / wall
        versus = f"{100 * rate / base:.0f}%" if base else ""
        lines.append(
            f"| {label} | {rows:,} | {wall:.1f} | {rate:,.0f} | {versus} | "
            f"{peak / 2**20:,.0f} MiB |"
        )
        print(lines[-1], flush=True)
        return rate

    with tempfile.TemporaryDirectory() as tmp:
        corpus = Path(tmp) / "corpus.csv"
        make_corpus(corpus, args.rows, ["17-clue"], seed=3)
        out = str(Path(tmp) / "out.parquet")
        warm_up(Path(tmp), out)
        wall, peak = run_command("solve", str(corpus), "-o", out)
        solve_rate = row(
            f"solve, 17-clue by symmetries, {WORKERS} workers", args.rows, wall, peak, None
        )
        wall, peak = run_command("validate", str(corpus), "-o", out)
        validate_rate = row(
            f"validate, same rows, {WORKERS} workers", args.rows, wall, peak, solve_rate
        )
        wall, peak = run_command("validate", str(corpus), "-o", out, "--symmetry")
        symmetry_rate = row(
            f"validate --symmetry, same rows, {WORKERS} workers", args.rows, wall, peak, solve_rate
        )
        corpus.unlink()
        n17 = sum(1 for line in seventeen.open() if line.strip() and not line.startswith("#"))
        wall, peak = run_command("solve", str(seventeen), "-o", out)
        plain = row("solve, the 17-clue set", n17, wall, peak, None)
        wall, peak = run_command("validate", str(seventeen), "-o", out)
        checked = row("validate, the 17-clue set", n17, wall, peak, plain)
        wall, peak = run_command("validate", str(seventeen), "-o", out, "--minimal")
        minimal_rate = row("validate --minimal, the 17-clue set", n17, wall, peak, plain)
        if args.big_rows:
            big = Path(tmp) / "big.csv"
            make_corpus(big, args.big_rows, ["17-clue"], seed=4)
            wall, peak = run_command("validate", str(big), "-o", out)
            row(
                f"validate, 17-clue by symmetries, {WORKERS} workers",
                args.big_rows,
                wall,
                peak,
                None,
            )
    ratio = validate_rate / solve_rate
    verdict = (
        f"\nvalidate / solve on {args.rows:,} rows: {100 * ratio:.0f}% (floor "
        f"{100 * FLOOR:.0f}%: {'ok' if ratio >= FLOOR else 'MISSED'}); `--symmetry` runs at "
        f"{symmetry_rate / validate_rate:.2f} x a plain validate (floor 0.50); `--minimal` takes "
        f"{checked / minimal_rate:.1f}x the time of a plain validate on the 17-clue set, "
        "start-up included (one more uniqueness search per given: 17 for these puzzles).\n"
    )
    print(verdict)
    stamp = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    header = (
        f"Measured {stamp} on {machine()} with `python -m benchmarks.validate_bench "
        f"--rows {args.rows} --big-rows {args.big_rows}` (wall time of the command, "
        "start-up included).\n\n"
    )
    if args.write:
        write_section(args.write, "validate", header + "\n".join(lines) + "\n" + verdict)
        print(f"updated {args.write}")


if __name__ == "__main__":
    main()
