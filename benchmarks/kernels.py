"""Kernel benchmark: each public set x each strategy, one core, counting up to 2 solutions.

    python -m benchmarks.kernels [--write docs/BENCHMARKS.md] [--repeats 3]

The table solver authors know from tdoku's harness: puzzles/s, us/puzzle, nodes/puzzle,
guesses/puzzle, % solved without guessing. `backtrack` and `mrv` run with a node budget so
that they finish the hard sets; rows they leave at the budget are counted in the `limit` column.
"""

import argparse
import datetime
from pathlib import Path

import numpy as np

from benchmarks.common import available_sets, best_of, machine, write_section
from pipeline.kernels import REGISTRY, STRATEGIES, codes, solve_grids

SEED_STRATEGY_SETS = {"17-clue": 2_000, "forum_hardest_1905_11+": 2_000}  # subsample: slow
FLOORS = {
    "17-clue": 120_000,
    "top1465": 40_000,
    "forum_hardest_1905_11+": 7_000,
    "forum_hardest_1106": 4_500,
}
TDOKU = {
    "17-clue": 313_000,
    "top1465": 115_000,
    "forum_hardest_1905_11+": 19_900,
    "forum_hardest_1106": 12_300,
    "serg_benchmark": 438_000,
    "kaggle_first9999": 752_000,
}


def measure(puzzles: np.ndarray, strategy: str, repeats: int) -> dict[str, float]:
    solve_grids(puzzles[:10], strategy=strategy)  # compile or load from cache first
    budget = REGISTRY[strategy].default_budget
    result = {}

    def run() -> None:
        result["found"] = solve_grids(puzzles, strategy=strategy, solutions=2, max_nodes=budget)

    seconds = best_of(repeats, run)
    found = result["found"]
    n = len(puzzles)
    return {
        "puzzles": n,
        "rate": n / seconds,
        "us": seconds / n * 1e6,
        "nodes": found.nodes.mean(),
        "guesses": found.guesses.mean(),
        "no_guess": 100.0 * (found.guesses == 0).mean(),
        "limit": int((found.verdicts == codes.LIMIT).sum()),
    }


def table(repeats: int) -> str:
    sets = available_sets()
    if not sets:
        return "No public sets found in ../shared/data: nothing to measure.\n"
    lines = [
        "| set | strategy | puzzles | puzzles/s | us/puzzle | nodes/puzzle | guesses/puzzle "
        "| % no guess | limit | floor | tdoku |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for name, puzzles in sets.items():
        for strategy in STRATEGIES:
            subset = puzzles
            if strategy != "fast" and name in SEED_STRATEGY_SETS:
                subset = puzzles[: SEED_STRATEGY_SETS[name]]
            m = measure(subset, strategy, repeats if strategy == "fast" else 1)
            floor = FLOORS.get(name) if strategy == "fast" else None
            floor_text = ""
            if floor is not None:
                floor_text = f"{floor:,} {'ok' if m['rate'] >= floor else 'MISSED'}"
            tdoku = f"{TDOKU[name]:,}" if strategy == "fast" and name in TDOKU else ""
            lines.append(
                f"| {name} | {strategy} | {m['puzzles']:,} | {m['rate']:,.0f} | {m['us']:.1f} "
                f"| {m['nodes']:.1f} | {m['guesses']:.1f} | {m['no_guess']:.1f} | {m['limit']} "
                f"| {floor_text} | {tdoku} |"
            )
            print(lines[-1], flush=True)
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--write", type=Path, help="update this Markdown file's kernel section")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    body = table(args.repeats)
    stamp = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    header = (
        f"Measured {stamp} on {machine()} with `python -m benchmarks.kernels` "
        f"(one process, one core, best of {args.repeats} for `fast`).\n\n"
    )
    if args.write:
        write_section(args.write, "kernels", header + body)
        print(f"updated {args.write}")


if __name__ == "__main__":
    main()
