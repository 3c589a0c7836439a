"""The first run after an install: every command, its kernels compiled from nothing.

    python -m benchmarks.first_run [--write docs/BENCHMARKS.md] [--kernels]

Each command runs as a real process with an empty cache folder of its own (`XDG_CACHE_HOME`),
on the shipped sample (3,000 rows) or a small generated corpus: the wall time includes start-up
and every kernel the command compiles, and the estimate its notice gave is shown beside it.
Floor (issue 24): every command's first run with its default options <= 10 s on this 2-core
machine. `--kernels` also times each kernel of `pipeline.run.warmup.KERNELS` compiled alone,
from nothing (CPU seconds, each in a fresh process and cache): the figures behind
`pipeline.compiled.COMPILE_SECONDS`.
"""

import argparse
import datetime
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.common import machine, write_section

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = str(ROOT / "data" / "sample.csv")
FLOOR = 10.0
NOTICE = re.compile(r"compiling the solver kernels \(first use; about (\d+) s")


def commands(folder: Path) -> dict[str, tuple[list[str], bool]]:
    """What a new user runs first: (arguments, whether the 10 s floor applies)."""
    out = str(folder / "out")
    return {
        "solve data/sample.csv": (["solve", SAMPLE, "-o", f"{out}.parquet", "--force"], True),
        "validate data/sample.csv": (
            ["validate", SAMPLE, "-o", f"{out}.findings.parquet", "--force", "--exit-zero"],
            True,
        ),
        "generate 1000": (["generate", "1000", "-o", f"{out}.csv", "--force"], True),
        "bench data/sample.csv": (["bench", SAMPLE, "--repeats", "1", "--rows", "300"], True),
        "solve --rate --canonical": (
            ["solve", SAMPLE, "-o", f"{out}.rated.parquet", "--force", "--rate", "--canonical"],
            False,
        ),
        "validate --symmetry": (
            [
                "validate",
                SAMPLE,
                "-o",
                f"{out}.sym.parquet",
                "--force",
                "--exit-zero",
                "--symmetry",
            ],  # fmt: skip
            False,
        ),
    }


def first_run(argv: list[str], folder: Path) -> tuple[float, str]:
    """Wall seconds of `sudoku-pipeline ARGV` with an empty cache folder, and its stderr."""
    env = {**os.environ, "XDG_CACHE_HOME": str(folder / "cache")}
    env.pop("NUMBA_CACHE_DIR", None)
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "pipeline.cli", *argv], env=env,
                          capture_output=True, text=True)  # fmt: skip
    wall = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed ({done.returncode}): {done.stderr}")
    return wall, done.stderr


COMPILE = """
import sys, time
from pipeline.run.warmup import KERNELS
start = time.process_time()
KERNELS[sys.argv[1]].load()
print(time.process_time() - start)
"""


def kernel_seconds(name: str, folder: Path) -> float:
    """CPU seconds to compile the kernel `name` alone from nothing, in a fresh process and
    cache folder: what it takes on a core of its own (the figure a load beside it moves least)."""
    env = {**os.environ, "XDG_CACHE_HOME": str(folder / f"cache-{name}")}
    env.pop("NUMBA_CACHE_DIR", None)
    done = subprocess.run([sys.executable, "-c", COMPILE, name], env=env, capture_output=True,
                          text=True, check=True)  # fmt: skip
    return float(done.stdout.strip())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--write", type=Path, help="update this Markdown file's section")
    parser.add_argument("--kernels", action="store_true", help="time each kernel alone too")
    args = parser.parse_args()
    lines = [
        "| command | first run s | the notice's estimate s | floor |",
        "|---|---:|---:|---|",
    ]
    verdicts = []
    with tempfile.TemporaryDirectory() as tmp:
        for label, (argv, floored) in commands(Path(tmp)).items():
            with tempfile.TemporaryDirectory() as cache:
                wall, stderr = first_run(argv, Path(cache))
            said = NOTICE.search(stderr)
            estimate = said.group(1) if said else "-"
            floor = f"{FLOOR:.0f} s" if floored else "-"
            lines.append(f"| `{label}` | {wall:.1f} | {estimate} | {floor} |")
            print(lines[-1], flush=True)
            if floored:
                verdicts.append(f"`{label}` {wall:.1f} s: {'ok' if wall <= FLOOR else 'MISSED'}")
        kernels = []
        if args.kernels:
            from pipeline.run.warmup import KERNELS

            kernels = ["", "| kernel, compiled alone | CPU s |", "|---|---:|"]
            for name in KERNELS:
                kernels.append(f"| {name} | {kernel_seconds(name, Path(tmp)):.1f} |")
                print(kernels[-1], flush=True)
    stamp = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    body = (
        f"Measured {stamp} on {machine()} with `python -m benchmarks.first_run"
        f"{' --kernels' if args.kernels else ''}` (each command a real process with an empty "
        "cache folder of its own).\n\n"
        + "\n".join(lines + kernels)
        + "\n\n"
        + "\n".join(f"- {v}" for v in verdicts)
        + "\n"
    )
    if args.write:
        write_section(args.write, "first-run", body)
    print(body)


if __name__ == "__main__":
    main()
