"""Benchmark of HRM's arrays made from a CSV: `augment --format hrm --copies K` (every row a group
of itself and K copies) and `split --format hrm --augment K` (the same for the training split,
after every row is solved with its uniqueness proved and grouped by canonical form).

    python -m benchmarks.hrm_bench [--rows 1000000] [--copies 8] [--workers 2] [--repeats 1]
                                   [--corpus CSV] [--folder DIR] [--write FILE]

* `--rows` generated puzzles (`pipeline.generate_file`, untimed) in sudoku-extreme's layout
  (`source,question,answer,rating`), read with `--column question --solution-column answer`;
  or `--corpus`: a CSV in that layout (sudoku-extreme's own `train.csv`, say), all its rows.
* Each command run as a real process, once untimed on 200 rows first (no kernel compiles in
  the timed runs), then `--repeats` times in turn (the best kept): wall time (start-up
  included), output rows (HRM examples) per second, the CPU seconds of the process tree (user
  and system: what the run costs whatever else shares the machine), and its peak memory.
* `--folder`: where the corpus and the outputs go, in a temporary folder (default: the
  system's); `/dev/shm` (memory) leaves the disk out of the figures.
* The floor (issue 35): 1M rows x 8 copies to HRM's arrays at >= 1M output rows/s.
"""

import argparse
import datetime
import json
import os
import resource
import shutil
import tempfile
from pathlib import Path

import polars as pl

from benchmarks.common import machine, run_cli
from benchmarks.kernels import write_section

FLOOR = 1_000_000  # output rows a second, end to end
COLUMNS = ("--column", "question", "--solution-column", "answer")


def _extreme(rows: int, path: Path) -> None:
    """`rows` generated puzzles written in sudoku-extreme's layout."""
    import pipeline

    generated = path.with_suffix(".generated.csv")
    pipeline.generate_file(rows, generated, seed=3)
    frame = pl.read_csv(generated, infer_schema=False)
    pl.DataFrame(
        {
            "source": pl.Series(["generated", "generated-hard"] * (rows // 2 + 1))[:rows],
            "question": frame["puzzle"],
            "answer": frame["solution"],
            "rating": pl.Series(range(rows)) % 50,
        }
    ).write_csv(path)
    generated.unlink()


def _timed(*args: str) -> tuple[float, int, float]:
    """(wall s, peak RSS bytes, CPU s of the process tree) of one run."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    wall, peak = run_cli(*args)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, peak, cpu


def _examples(folder: Path) -> int:
    """HRM examples in a dataset folder: each split's `all__inputs.npy` rows."""
    total = 0
    for dataset in folder.glob("*/dataset.json"):
        meta = json.loads((dataset.parent / "meta.json").read_text())
        total += meta["rows"]
    return total


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--copies", type=int, default=8)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--corpus", type=Path, help="a CSV in sudoku-extreme's layout")
    parser.add_argument("--folder", type=Path, help="where the files go (default: the temp dir)")
    parser.add_argument("--write", type=Path, help="update this Markdown file's hrm section")
    args = parser.parse_args()
    k, workers = str(args.copies), str(args.workers)
    runs = {  # the command, and where its -o goes in the dataset folder
        f"augment --format hrm --copies {k}": (
            ["augment", "--format", "hrm", "--copies", k],
            "train",
        ),
        f"split --format hrm --augment {k} --fractions 0.9,0.1": (
            ["split", "--format", "hrm", "--augment", k, "--fractions", "0.9,0.1"],
            "",
        ),
    }
    best: dict[str, tuple[float, int, float, int, int]] = {}
    load = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(dir=args.folder) as tmp:
        folder = Path(tmp)
        few, rows = folder / "few.csv", folder / "corpus.csv"
        _extreme(200, few)
        if args.corpus is None:
            _extreme(args.rows, rows)
        else:
            rows = args.corpus
            args.rows = pl.scan_csv(rows, infer_schema=False).select(pl.len()).collect().item()
        for command, inside in runs.values():  # kernels compiled and cached, untimed
            (folder / "warm").mkdir(exist_ok=True)
            run_cli(
                command[0],
                str(few),
                "-o",
                str(folder / "warm" / inside),
                *command[1:],
                *COLUMNS,
                "--quiet",
                "--force",
            )
        for _ in range(args.repeats):
            for name, (command, inside) in runs.items():
                out = folder / "out"
                shutil.rmtree(out, ignore_errors=True)
                out.mkdir()
                argv = [command[0], str(rows), "-o", str(out / inside), *command[1:], *COLUMNS]
                wall, peak, cpu = _timed(*argv, "--quiet", "--workers", workers, "--force")
                size = sum(p.stat().st_size for p in out.rglob("*") if p.is_file())
                if name not in best or wall < best[name][0]:
                    best[name] = (wall, peak, cpu, _examples(out), size)
    lines = [
        "| run | input rows | output rows | wall s | output rows/s | CPU s (tree) | "
        "peak RSS (tree) | written |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for name, (wall, peak, cpu, examples, size) in best.items():
        lines.append(
            f"| `{name}` | {args.rows:,} | {examples:,} | {wall:.1f} | "
            f"{examples / wall:,.0f} | {cpu:.1f} | {peak / 2**20:,.0f} MiB | "
            f"{size / 2**30:.2f} GiB |"
        )
    verdicts = [
        f"`{name.split(' --')[0]}`: {best[name][3] / best[name][0]:,.0f} output rows/s "
        f"({'meets' if best[name][3] / best[name][0] >= FLOOR else 'below'} the floor "
        f"of {FLOOR:,})"
        for name in best
    ]
    body = "\n".join(lines) + "\n\n" + "; ".join(verdicts) + ".\n"
    print(body)
    stamp = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    where = f" --folder {args.folder}" if args.folder else ""
    where += f" --corpus {args.corpus.name}" if args.corpus else ""
    header = (
        f"Measured {stamp} on {machine()}, load average {load:.1f} when it started, with "
        f"`python -m benchmarks.hrm_bench --rows {args.rows} --copies {args.copies} "
        f"--workers {args.workers} --repeats {args.repeats}{where}` (wall time of each "
        "command, start-up included, the best of the repeats, run in turn).\n\n"
    )
    if args.write:
        write_section(args.write, "hrm", header + body)
        print(f"updated {args.write}")


if __name__ == "__main__":
    main()
