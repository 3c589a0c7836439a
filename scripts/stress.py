"""The whole test suite, round after round, beside a steady load: a suite that never flakes.

    make stress                  # 10 rounds beside 2 loaded cores, or:
    python -m scripts.stress --rounds 3 --load 2 --kind spin

Each load process keeps one core busy the way a build machine is busy: `solve` (the default)
generates puzzles, writes them to Parquet and solves them with backtracking in a loop (numba
kernels, Arrow, file writes); `spin` is a bare `while True: pass`. Every other round runs the
tests in reverse order (`--reverse-order`, tests/conftest.py), so a test that leans on what
another left behind fails. The first round that fails stops it all, with pytest's summary of
what failed; each round's full output is kept in artifacts/stress/. The figure at the end:
`10/10 green, median 512 s (min 498, max 530)`.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LOGS = ROOT / "artifacts" / "stress"
LOADS = {
    "spin": "while True: pass",
    "solve": """
import pathlib, tempfile
from pipeline import generate
from pipeline.jobs.solve.job import solve_file
with tempfile.TemporaryDirectory(prefix="stress-load-") as folder:
    corpus = pathlib.Path(folder) / "corpus.parquet"
    solved = pathlib.Path(folder) / "solved.parquet"
    seed = 0
    while True:
        generate(300, seed=seed).write_parquet(corpus)
        solve_file(corpus, solved, workers=1, strategy="backtrack", progress=False)
        seed += 1
""",
}


def start_load(kind: str, count: int) -> list[subprocess.Popen]:
    """`count` processes, each keeping one core busy (`LOADS[kind]`)."""
    return [
        subprocess.Popen([sys.executable, "-c", LOADS[kind]], cwd=ROOT, stdout=subprocess.DEVNULL)
        for _ in range(count)
    ]


def stop_load(load: list[subprocess.Popen]) -> None:
    for process in load:
        process.kill()
        process.wait()


def one_round(number: int, pytest_args: list[str]) -> tuple[bool, float, Path]:
    """Run the suite once; whether it passed, its wall time and where its output is."""
    reverse = number % 2 == 0
    log = LOGS / f"round-{number}{'-reversed' if reverse else ''}.log"
    argv = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *pytest_args]
    if reverse:
        argv.append("--reverse-order")
    started = time.monotonic()
    with log.open("w") as out:
        done = subprocess.run(argv, cwd=ROOT, stdout=out, stderr=subprocess.STDOUT)
    return done.returncode == 0, time.monotonic() - started, log


def failures(log: Path) -> str:
    """pytest's short summary of what failed (its FAILED and ERROR lines), else its tail."""
    lines = log.read_text(errors="replace").splitlines()
    found = [line for line in lines if line.startswith(("FAILED", "ERROR"))]
    return "\n".join(found or lines[-30:])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--load", type=int, default=2, help="load processes (default 2)")
    parser.add_argument("--kind", choices=sorted(LOADS), default="solve")
    parser.add_argument("pytest_args", nargs="*", help="passed to pytest (after --)")
    args = parser.parse_args(argv)
    LOGS.mkdir(parents=True, exist_ok=True)
    print(
        f"{args.rounds} rounds of the suite beside {args.load} '{args.kind}' load processes; "
        f"output in {LOGS.relative_to(ROOT)}/",
        flush=True,
    )
    load = start_load(args.kind, args.load)
    times: list[float] = []
    try:
        for number in range(1, args.rounds + 1):
            green, took, log = one_round(number, args.pytest_args)
            order = "reversed" if number % 2 == 0 else "in order"
            print(
                f"round {number}/{args.rounds} ({order}): {'green' if green else 'FAILED'} "
                f"in {took:.0f} s",
                flush=True,
            )
            if not green:
                print(failures(log))
                print(
                    f"{len(times)}/{args.rounds} green before round {number} failed; its "
                    f"output: {log.relative_to(ROOT)}"
                )
                return 1
            times.append(took)
            if ended := [p.returncode for p in load if p.poll() is not None]:
                print(
                    f"a load process ended (exit code {ended[0]}): the rounds after it would "
                    "not be under load"
                )
                return 1
    finally:
        stop_load(load)
    print(
        f"{len(times)}/{args.rounds} green, median {statistics.median(times):.0f} s "
        f"(min {min(times):.0f}, max {max(times):.0f})"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
