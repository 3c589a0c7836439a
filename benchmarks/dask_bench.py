"""The Dask client's own CPU per 1M rows (issue 36): a real scheduler and 2 worker processes on
127.0.0.1, started here, and `sudoku-pipeline solve --executor dask --scheduler ...` run
against them.

    taskset -c 0 nice -n 10 python -m benchmarks.dask_bench [--rows 1000000] [--write FILE]
        [--command validate|against|split|split-hrm|augment]

Kaggle-style rows (kaggle1m_first9999 in ../shared/data, `quizzes,solutions`, repeated up to
`--rows`, and `--small` rows for the fixed costs), as CSV and as Parquet (row groups of
100,000 rows), into Parquet. For each input, the client process alone is measured
(`os.wait4`'s rusage of the `sudoku-pipeline` process: user + system CPU; the workers are
other processes): before (`SUDOKU_PIPELINE_DASK_SLICES=0`, the client reads every input byte
and writes every output byte) and after (the workers read their slices and keep their parts;
the client plans, counts and joins). The outputs of both are checked equal (timing columns
aside). Target: <= 0.15 client CPU s per 1M rows more. `--command validate` measures
`validate` the same way (before: the client reads every row and finds the repeats; after: the
workers, hash-partitioned), its findings files checked equal; the repeated rows make nearly
every row a `duplicate` finding, the most the repeats' rounds can have to carry.
`--command split` measures `split` (before: the client keeps every row, cuts and writes the
splits; after: the workers keep, shuffle and write them, the client cuts from the small
columns), its splits checked equal: nearly every row a repeat, left out. `--command augment`
measures `augment --format hrm --copies 1` into HRM's folder of arrays (before: the client
appends each batch's arrays; after: the workers keep each batch's arrays as one file, the
client makes room for their rows and the workers write them there), its folders checked
equal. `--command split-hrm` measures `split --format hrm --augment 1` (before: the client
keeps the rows, cuts and writes the folders; after: the workers make HRM's groups and write
them). `--command against` measures `validate --against` the small corpus (every row a leak,
the most the audit's rounds can carry; before: the client indexes the training keys and
finds the leaks).
"""

import argparse
import datetime
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from functools import partial
from pathlib import Path

import polars as pl

from benchmarks.common import SETS, SHARED_DATA, machine, write_section

BIN = Path(sys.executable).parent
TARGET = 0.15  # client CPU s per 1M rows
ROW_GROUP = 100_000


def corpus(folder: Path, rows: int) -> tuple[Path, Path]:
    kaggle = pl.read_csv(
        SHARED_DATA / SETS["kaggle_first9999"],
        has_header=False,
        new_columns=["quizzes", "solutions"],
        infer_schema=False,
    )
    frame = pl.concat([kaggle] * (-(-rows // kaggle.height))).head(rows)
    csv, parquet = folder / "kaggle.csv", folder / "kaggle.parquet"
    folder.mkdir()
    frame.write_csv(csv)
    frame.write_parquet(parquet, row_group_size=ROW_GROUP)
    return csv, parquet


def start_cluster(folder: Path) -> tuple[str, list[subprocess.Popen]]:
    """A scheduler and two single-threaded worker processes on loopback."""
    scheduler_file = folder / "scheduler.json"
    log = (folder / "cluster.log").open("w")
    started = [subprocess.Popen(
        [str(BIN / "dask"), "scheduler", "--host", "127.0.0.1", "--port", "0",
         "--no-dashboard", "--scheduler-file", str(scheduler_file)],
        stdout=log, stderr=subprocess.STDOUT, start_new_session=True)]  # fmt: skip
    deadline = time.monotonic() + 120
    while not scheduler_file.exists() or not scheduler_file.read_text().strip():
        if time.monotonic() > deadline:
            raise SystemExit("the scheduler did not start")
        time.sleep(0.1)
    time.sleep(0.2)
    address = json.loads(scheduler_file.read_text())["address"]
    for i in range(2):
        started.append(subprocess.Popen(
            [str(BIN / "dask"), "worker", address, "--nthreads", "1", "--no-dashboard",
             "--name", f"w{i}", "--local-directory", str(folder / f"w{i}")],
            stdout=log, stderr=subprocess.STDOUT, start_new_session=True))  # fmt: skip
    from distributed import Client

    with Client(address, timeout="120s") as client:
        client.wait_for_workers(2, timeout=120)
    return address, started


# What each `--command` runs: the command line after the input (`TRAIN`: the training input
# of a leak audit), and what its output is named by (a folder: "")
COMMANDS = {
    "solve": (["solve", "--force"], ".parquet"),
    "validate": (["validate", "--force", "--exit-zero"], ".parquet"),
    "against": (["validate", "--force", "--exit-zero", "--against", "TRAIN"], ".parquet"),
    "split": (["split"], ""),  # a split's folder of its own is replaced without --force
    "split-hrm": (["split", "--format", "hrm", "--augment", "1"], ""),
    "augment": (["augment", "--force", "--format", "hrm", "--copies", "1"], ""),
}
INTO = {
    "solve": "Parquet",
    "validate": "Parquet",
    "against": "Parquet (`--against` the 9,999 puzzles: every row a leak)",
    "split": "Parquet",
    "split-hrm": "HRM's folders of arrays (`--format hrm --augment 1`)",
    "augment": "HRM's folder of arrays (`--format hrm --copies 1`)",
}


def client_cpu(
    source: Path,
    out: Path,
    address: str,
    legacy: bool,
    command: str = "solve",
    train: Path | None = None,
) -> tuple[float, float]:
    """(client CPU s, wall s) of one run of `command` on the cluster."""
    env = {**os.environ, "SUDOKU_PIPELINE_COMPILE_AHEAD": "0"}
    if legacy:
        env["SUDOKU_PIPELINE_DASK_SLICES"] = "0"
    line, _ = COMMANDS[command]
    line = [str(train) if word == "TRAIN" else word for word in line]
    args = [str(BIN / "sudoku-pipeline"), line[0], str(source), *line[1:], "-o", str(out),
            "--quiet", "--executor", "dask", "--scheduler", address]  # fmt: skip
    start = time.perf_counter()
    process = subprocess.Popen(args, env=env, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{' '.join(args)} failed: {process.stderr.read().decode()}")
    return usage.ru_utime + usage.ru_stime, wall


def _same(before: Path, after: Path) -> bool:
    """Whether two runs' outputs hold the same rows (timing columns aside): a Parquet file's
    table, or a folder's files (Parquet tables, other files byte for byte, but what says how
    a run went: `meta.json`, `manifest.json`)."""
    if before.is_file():
        timing = ["solve_ns"]
        return (
            pl.read_parquet(before)
            .drop(timing, strict=False)
            .equals(pl.read_parquet(after).drop(timing, strict=False))
        )
    files = [
        sorted(p.relative_to(folder) for p in folder.rglob("*") if p.is_file())
        for folder in (before, after)
    ]
    if files[0] != files[1]:
        return False
    for name in files[0]:
        if name.name in ("meta.json", "manifest.json"):
            continue
        if name.suffix == ".parquet":
            same = pl.read_parquet(before / name).equals(pl.read_parquet(after / name))
        else:
            same = (before / name).read_bytes() == (after / name).read_bytes()
        if not same:
            return False
    return True


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--small", type=int, default=10_000, help="rows of the fixed-cost run")
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--write", type=Path, help="record the table in this Markdown file")
    parser.add_argument("--command", choices=tuple(COMMANDS), default="solve")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="dask-bench-") as tmp:
        folder = Path(tmp)
        small = corpus(folder / "small", args.small)
        inputs = corpus(folder / "large", args.rows)
        train = folder / "train.csv"  # `against`'s training input: the small corpus's rows
        shutil.copyfile(small[0], train)
        address, started = start_cluster(folder)
        run = partial(client_cpu, address=address, command=args.command, train=train)
        lines = []
        try:
            for k, source in enumerate(inputs):
                outputs = {}
                for legacy in (True, False):
                    kind = "before" if legacy else "after"
                    out = folder / f"{source.suffix[1:]}-{kind}{COMMANDS[args.command][1]}"
                    small_out = folder / f"small-out{COMMANDS[args.command][1]}"
                    fixed = min(
                        run(small[k], small_out, legacy=legacy) for _ in range(args.repeats)
                    )[0]
                    runs = [run(source, out, legacy=legacy) for _ in range(args.repeats)]
                    cpu, wall = min(runs)
                    marginal = (cpu - fixed) * 1e6 / (args.rows - args.small)
                    outputs[legacy] = out
                    label = "before (client reads and writes)" if legacy else "after (workers)"
                    lines.append(
                        f"| {source.suffix[1:]} | {label} | {cpu:.2f} | {fixed:.2f} | "
                        f"**{marginal:.3f}** | {wall:.2f} |"
                    )
                    print(lines[-1], flush=True)
                if not _same(outputs[True], outputs[False]):
                    raise SystemExit(f"{source.name}: the outputs before and after differ")
        finally:
            for process in reversed(started):
                if process.poll() is None:
                    os.killpg(process.pid, signal.SIGKILL)
                process.wait()
    today = datetime.date.today().isoformat()
    body = (
        f"Measured {today} on {machine()}, `taskset -c 0 nice -n 10 python -m "
        f"benchmarks.dask_bench --rows {args.rows} --command {args.command}`: "
        f"`{args.command}` of {args.rows:,} Kaggle-style rows into {INTO[args.command]}, a `dask "
        "scheduler` and 2 `dask worker --nthreads 1` processes on 127.0.0.1; "
        f"client CPU is the `sudoku-pipeline` process alone (`os.wait4`), best of "
        f"{args.repeats}. The client's CPU per row is the growth between a run of "
        f"{args.small:,} rows and one of {args.rows:,} (its start-up, imports and connecting "
        f"are paid once a run); target <= {TARGET} s per 1M rows.\n\n"
        f"| input | path | client CPU s, {args.rows:,} rows | client CPU s, {args.small:,} "
        "rows (start-up, connecting, warm-up) | client CPU s per 1M rows more | wall s |\n"
        "|---|---|---|---|---|---|\n" + "\n".join(lines) + "\n"
    )
    print(body)
    if args.write:
        if args.command == "solve":  # each section named whole (`make bench` writes each)
            write_section(args.write, "dask-client", body)
        elif args.command == "validate":
            write_section(args.write, "dask-client-validate", body)
        elif args.command == "against":
            write_section(args.write, "dask-client-against", body)
        elif args.command == "split":
            write_section(args.write, "dask-client-split", body)
        elif args.command == "split-hrm":
            write_section(args.write, "dask-client-split-hrm", body)
        else:
            write_section(args.write, "dask-client-augment", body)


if __name__ == "__main__":
    main()
