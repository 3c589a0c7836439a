"""The first run after an install, and the runs after it: every kind of command, on the sample.

    python -m benchmarks.first_run [--write docs/BENCHMARKS.md] [--kernels] [--only LABEL]

Each command runs as a real process, on the shipped sample (3,000 rows; a file of predictions
made from it for `score`), so wall times include start-up and every kernel compiled.

* **First command**: each kind with an empty cache folder of its own (`XDG_CACHE_HOME`): what a
  new user's first command takes, with the estimate its notice gave. The process it starts to
  compile the other commands' kernels ahead (`pipeline.run.compile_ahead`) is stopped before
  the next one is measured. Floor (issue 34): every kind <= 10 s.
* **Every later command**: one empty cache; `solve` first (the README's first command), then,
  once the kernels compiled ahead are all in the cache (the time that took is given, from the
  first command's start), every kind in turn. Floor: every kind <= 3 s.

`--kernels` also times each kernel of `pipeline.run.warmup.KERNELS` compiled alone, from
nothing (CPU seconds, each in a fresh process and cache; a kernel made of parts with its
parts): the figures behind `pipeline.compiled.COMPILE_SECONDS`.
"""

import argparse
import csv
import datetime
import os
import re
import resource
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.common import machine, write_section

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = str(ROOT / "data" / "sample.csv")
FIRST_FLOOR = 10.0
LATER_FLOOR = 3.0
NOTICE = re.compile(r"compiling the solver kernels \(first use; about (\d+) s")


def predictions(folder: Path) -> str:
    """A file of predictions made from the sample (its solutions, as a model's answers)."""
    path = folder / "predictions.csv"
    with open(SAMPLE, newline="") as source, open(path, "w", newline="") as out:
        rows = csv.reader(source)
        next(rows)
        writer = csv.writer(out)
        writer.writerow(["id", "puzzle", "prediction"])
        writer.writerows((row[0], row[1], row[2]) for row in rows)
    return str(path)


def commands(folder: Path) -> dict[str, list[str]]:
    """Every kind of command, as a new user runs it on the sample: label -> arguments."""
    out = str(folder / "out")
    return {
        "solve": ["solve", SAMPLE, "-o", f"{out}.parquet", "--force"],
        "validate": [
            "validate",
            SAMPLE,
            "-o",
            f"{out}.findings.parquet",
            "--force",
            "--exit-zero",
        ],
        "generate 1000": ["generate", "1000", "-o", f"{out}.csv", "--force"],
        "bench": ["bench", SAMPLE, "--repeats", "1", "--rows", "300"],
        "split": ["split", SAMPLE, "-o", f"{out}.splits", "--force"],
        "augment": [
            "augment",
            SAMPLE,
            "-o",
            f"{out}.augmented.parquet",
            "--force",
            "--copies",
            "2",
        ],
        "enumerate": [
            "enumerate",
            SAMPLE,
            "-o",
            f"{out}.solutions.parquet",
            "--force",
            "--limit",
            "2",
        ],
        "score": ["score", predictions(folder), "-o", f"{out}.scored.parquet", "--force"],
        "solve --rate": ["solve", SAMPLE, "-o", f"{out}.rated.parquet", "--force", "--rate"],
        "solve --canonical": [
            "solve",
            SAMPLE,
            "-o",
            f"{out}.canonical.parquet",
            "--force",
            "--canonical",
        ],
        "validate --symmetry": [
            "validate",
            SAMPLE,
            "-o",
            f"{out}.sym.parquet",
            "--force",
            "--exit-zero",
            "--symmetry",
        ],
    }


def run(argv: list[str], cache: Path) -> tuple[float, float, str]:
    """Wall seconds of `sudoku-pipeline ARGV` with the cache folder `cache`, the CPU seconds
    of it and the helpers it waited for (not the process compiling ahead, which it does not
    wait for), and its stderr. On a loaded machine the CPU time says more than the wall."""
    env = {**os.environ, "XDG_CACHE_HOME": str(cache)}
    env.pop("NUMBA_CACHE_DIR", None)
    env.pop("SUDOKU_PIPELINE_COMPILE_AHEAD", None)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "pipeline.cli", *argv], env=env, capture_output=True, text=True
    )
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed ({done.returncode}): {done.stderr}")
    return wall, cpu, done.stderr


def ahead_processes(cache: Path) -> list[int]:
    """The processes compiling ahead into `cache` (ours: this script's commands started them)."""
    found = []
    for proc in Path("/proc").iterdir():
        try:
            line = (proc / "cmdline").read_bytes()
        except OSError:
            continue
        if (
            proc.name.isdigit()
            and b"pipeline.run.compile_ahead" in line
            and (str(cache).encode() in line)
        ):
            found.append(int(proc.name))
    return found


def stop_ahead(cache: Path) -> None:
    for pid in ahead_processes(cache):
        try:
            os.kill(pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
    while ahead_processes(cache):
        time.sleep(0.1)


def wait_ahead(cache: Path, timeout: float = 1800) -> None:
    deadline = time.monotonic() + timeout
    while ahead_processes(cache) and time.monotonic() < deadline:
        time.sleep(0.2)


COMPILE = """
import sys, time
from pipeline.run.warmup import KERNELS, with_parts
start = time.process_time()
for name in with_parts([sys.argv[1]]):
    KERNELS[name].load()
print(time.process_time() - start)
"""


def kernel_seconds(name: str, folder: Path) -> float:
    """CPU seconds to compile the kernel `name` alone from nothing (its parts with it), in a
    fresh process and cache folder: what it takes on a core of its own."""
    env = {**os.environ, "XDG_CACHE_HOME": str(folder / f"cache-{name}")}
    env.pop("NUMBA_CACHE_DIR", None)
    done = subprocess.run(
        [sys.executable, "-c", COMPILE, name], env=env, capture_output=True, text=True, check=True
    )
    return float(done.stdout.strip())


def load_average() -> str:
    try:
        return Path("/proc/loadavg").read_text().split()[0]
    except OSError:
        return "?"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--write", type=Path, help="update this Markdown file's section")
    parser.add_argument("--kernels", action="store_true", help="time each kernel alone too")
    parser.add_argument("--only", action="append", help="only these commands (labels)")
    args = parser.parse_args()
    loads = [load_average()]
    first = [
        "| command | first run s | CPU s | the notice's estimate s | floor 10 s |",
        "|---|---:|---:|---:|---|",
    ]
    later = ["| command | a later run s | CPU s | floor 3 s |", "|---|---:|---:|---|"]
    missed = []
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        kinds = {k: v for k, v in commands(folder).items() if not args.only or k in args.only}
        for label, argv in kinds.items():
            cache = folder / f"cache-first-{len(first)}"
            wall, cpu, stderr = run(argv, cache)
            stop_ahead(cache)
            said = NOTICE.search(stderr)
            estimate = said.group(1) if said else "-"
            verdict = "ok" if wall <= FIRST_FLOOR else "MISSED"
            first.append(f"| `{label}` | {wall:.1f} | {cpu:.1f} | {estimate} | {verdict} |")
            print(first[-1], flush=True)
            if wall > FIRST_FLOOR:
                missed.append(f"first `{label}`")
        loads.append(load_average())
        cache = folder / "cache-later"
        start = time.perf_counter()
        wall, _, _ = run(kinds.get("solve", commands(folder)["solve"]), cache)
        wait_ahead(cache)
        ahead = time.perf_counter() - start
        print(f"solve first: {wall:.1f} s; every kernel cached {ahead:.1f} s after it started")
        for label, argv in kinds.items():
            wall, cpu, stderr = run(argv, cache)
            compiled = " (compiled!)" if "compiling" in stderr else ""
            verdict = "ok" if wall <= LATER_FLOOR and not compiled else "MISSED"
            later.append(f"| `{label}` | {wall:.1f}{compiled} | {cpu:.1f} | {verdict} |")
            print(later[-1], flush=True)
            if verdict != "ok":
                missed.append(f"later `{label}`")
        kernels = []
        if args.kernels:
            from pipeline.run.warmup import KERNELS

            kernels = ["", "| kernel, compiled alone (with its parts) | CPU s |", "|---|---:|"]
            for name in KERNELS:
                kernels.append(f"| {name} | {kernel_seconds(name, folder):.1f} |")
                print(kernels[-1], flush=True)
    loads.append(load_average())
    stamp = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    body = (
        f"Measured {stamp} on {machine()} with `python -m benchmarks.first_run"
        f"{' --kernels' if args.kernels else ''}` (load average {', '.join(loads)} at the "
        "start, between the parts and at the end, on 2 cores).\n\n"
        "The first command after an install (each kind with an empty cache of its own):\n\n"
        + "\n".join(first)
        + f"\n\nEvery later command: after `solve` on an empty cache, every kernel was in the "
        f"cache {ahead:.0f} s after it started (compiled ahead, in the background); then:\n\n"
        + "\n".join(later + kernels)
        + "\n\n"
        + (f"Missed: {', '.join(missed)}.\n" if missed else "Every floor met.\n")
    )
    if args.write:
        write_section(args.write, "first-run", body)
    print(body)


if __name__ == "__main__":
    main()
