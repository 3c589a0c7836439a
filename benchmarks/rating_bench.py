"""Benchmark of the ratings: grade and difficulty throughput, sanity shares, agreement with tdoku.

    taskset -c 1 python -m benchmarks.rating_bench [--samples 16] [--repeats 3] [--write FILE]
    TDOKU_BENCH=/path/to/tdoku/build/run_benchmark taskset -c 1 python -m benchmarks.rating_bench

* `grade` puzzles/s on one core for each public set (Kaggle rows: the 9,999 rows of the sample
  and 9 random symmetries of each, ~100k rows, for a steady figure), with the share of each set
  graded at the singles and needing `search`. Floors: >= 50,000 puzzles/s on Kaggle rows; >= 95%
  of Kaggle rows at the singles; >= 95% of forum_hardest_1106 need `search`.
* `difficulty` puzzles/s on one core (`--samples` searches per puzzle).
* With TDOKU_BENCH naming tdoku's `run_benchmark`: the Spearman rank correlation of our
  `difficulty` with tdoku's rating on a mix of Kaggle, 17-clue, top1465 and forum-hardest puzzles
  (`--mix` of each, seeded). tdoku rates with `run_benchmark -a -b -s tdoku -n K -e SEED FILE`:
  for each puzzle of FILE (one per line, `.` blanks) it solves K random permutations for the
  first solution and prints the mean guesses, one line per puzzle (`-a` rates, `-b` by guesses
  rather than time, `-n` the permutations per puzzle, default 100,000!). Floor: >= 0.8.
"""

import argparse
import datetime
import os
import subprocess
import tempfile
from pathlib import Path

import numpy as np
import polars as pl

from benchmarks.common import available_sets, best_of, machine, write_section
from pipeline.grid import format_grids
from pipeline.rating import GRADES, SINGLES, grade_grids
from pipeline.rating.difficulty import difficulty_grids
from pipeline.symmetry import random_symmetries

GRADE_FLOOR = 50_000
SHARE_FLOOR = 0.95
SPEARMAN_FLOOR = 0.8
MIX_SETS = (
    "kaggle_first9999",
    "17-clue",
    "top1465",
    "forum_hardest_1905_11+",
    "forum_hardest_1106",
)
DIFFICULTY_ROWS = 5_000  # puzzles per set for the difficulty timing (k searches each)


def spearman(a: np.ndarray, b: np.ndarray) -> float:
    """Spearman's rank correlation: Pearson's correlation of the ranks, ties given their
    average rank (what scipy.stats.spearmanr computes)."""
    rank_a = pl.Series(a).rank("average").to_numpy()
    rank_b = pl.Series(b).rank("average").to_numpy()
    return float(np.corrcoef(rank_a, rank_b)[0, 1])


def tdoku_ratings(tdoku: str, puzzles: np.ndarray, samples: int, seed: int) -> np.ndarray:
    """tdoku's rating of each puzzle: mean guesses over `samples` random permutations."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "mix.txt"
        path.write_text("\n".join(format_grids(puzzles).to_pylist()) + "\n")  # '.' blanks
        command = [tdoku, "-a", "-b", "-s", "tdoku", "-n", str(samples), "-e", str(seed), path]
        out = subprocess.run(command, capture_output=True, text=True, check=True).stdout
    ratings = np.array([float(line) for line in out.split()])
    if len(ratings) != len(puzzles):
        raise SystemExit(f"tdoku rated {len(ratings)} puzzles out of {len(puzzles)}")
    return ratings


def grade_table(sets: dict[str, np.ndarray], repeats: int) -> tuple[list[str], dict[str, float]]:
    lines = [
        "| set | puzzles | grade puzzles/s | at singles | need search | hardest grades |",
        "|---|---:|---:|---:|---:|---|",
    ]
    shares = {}
    singles = [GRADES.index(g) for g in SINGLES]
    for name, puzzles in sets.items():
        if name == "kaggle_first9999":  # ~100k rows, as in a real corpus of easy puzzles
            copies = random_symmetries(np.repeat(puzzles, 9, axis=0), np.random.default_rng(0))
            puzzles = np.concatenate([puzzles, copies])
        grade_grids(puzzles[:10])  # load the kernels first
        seconds = best_of(repeats, lambda p=puzzles: grade_grids(p))
        grades = grade_grids(puzzles).grades
        at_singles = float(np.isin(grades, singles).mean())
        search = float((grades == GRADES.index("search")).mean())
        shares[name] = (len(puzzles) / seconds, at_singles, search)
        counts = np.bincount(grades[grades >= 0], minlength=len(GRADES))
        top = ", ".join(
            f"{GRADES[g]} {100 * counts[g] / len(grades):.1f}%"
            for g in np.argsort(-counts)[:3]
            if counts[g]
        )
        lines.append(
            f"| {name} | {len(puzzles):,} | {len(puzzles) / seconds:,.0f} | "
            f"{100 * at_singles:.1f}% | {100 * search:.1f}% | {top} |"
        )
        print(lines[-1], flush=True)
    return lines, shares


def difficulty_table(sets: dict[str, np.ndarray], samples: int, repeats: int) -> list[str]:
    lines = [
        f"| set | puzzles | difficulty puzzles/s (k={samples}) | mean difficulty |",
        "|---|---:|---:|---:|",
    ]
    for name, puzzles in sets.items():
        puzzles = puzzles[:DIFFICULTY_ROWS]
        difficulty_grids(puzzles[:10], samples=samples)
        seconds = best_of(repeats, lambda p=puzzles: difficulty_grids(p, samples))
        mean = np.nanmean(difficulty_grids(puzzles, samples)[0])
        lines.append(f"| {name} | {len(puzzles):,} | {len(puzzles) / seconds:,.0f} | {mean:.2f} |")
        print(lines[-1], flush=True)
    return lines


def spearman_lines(sets: dict[str, np.ndarray], samples: int, per_set: int) -> list[str]:
    tdoku = os.environ.get("TDOKU_BENCH")
    if not tdoku:
        return ["Spearman with tdoku: set TDOKU_BENCH to tdoku's run_benchmark to measure it."]
    rng = np.random.default_rng(0)
    parts = {
        name: sets[name][rng.choice(len(sets[name]), min(per_set, len(sets[name])), replace=False)]
        for name in MIX_SETS
        if name in sets
    }
    mix = np.concatenate(list(parts.values()))
    ours = difficulty_grids(mix, samples=samples, seed=0)[0]
    lines = [
        f"Mix: {', '.join(f'{n} {len(p):,}' for n, p in parts.items())} puzzles; "
        f"ours k={samples} seed 0.",
        "",
        "| tdoku -n | Spearman (mix) | within each set |",
        "|---:|---:|---|",
    ]
    for tdoku_samples in (samples, 256):
        theirs = tdoku_ratings(tdoku, mix, tdoku_samples, seed=1)
        within, start = [], 0
        for name, part in parts.items():
            a, b = ours[start : start + len(part)], theirs[start : start + len(part)]
            start += len(part)
            if np.ptp(a) > 0 and np.ptp(b) > 0:
                within.append(
                    f"{name} {spearman(a, b):.2f} (means {a.mean():.2f} / {b.mean():.2f})"
                )
            else:
                within.append(f"{name} constant (means {a.mean():.2f} / {b.mean():.2f})")
        rho = spearman(ours, theirs)
        verdict = "ok" if rho >= SPEARMAN_FLOOR else f"BELOW the {SPEARMAN_FLOOR} floor"
        lines.append(f"| {tdoku_samples} | {rho:.3f} ({verdict}) | {'; '.join(within)} |")
        print(lines[-1], flush=True)
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--samples", type=int, default=16, help="symmetries per puzzle")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--mix", type=int, default=1000, help="puzzles of each set in the mix")
    parser.add_argument("--write", type=Path, help="update this Markdown file's rating section")
    args = parser.parse_args()
    sets = available_sets()
    sets.pop("serg_benchmark", None)  # several solutions each: nothing to rate
    if not sets:
        print("No public sets found in ../shared/data: nothing to measure.")
        return
    lines, shares = grade_table(sets, args.repeats)
    checks = []
    if "kaggle_first9999" in shares:
        rate, singles, _ = shares["kaggle_first9999"]
        checks.append(
            f"grade on Kaggle rows {rate:,.0f}/s (floor {GRADE_FLOOR:,}): "
            f"{'ok' if rate >= GRADE_FLOOR else 'BELOW'}"
        )
        checks.append(
            f"Kaggle rows at the singles {100 * singles:.1f}% (floor 95%): "
            f"{'ok' if singles >= SHARE_FLOOR else 'BELOW'}"
        )
    if "forum_hardest_1106" in shares:
        search = shares["forum_hardest_1106"][2]
        checks.append(
            f"forum_hardest_1106 needing search {100 * search:.1f}% (floor 95%): "
            f"{'ok' if search >= SHARE_FLOOR else 'BELOW'}"
        )
    for check in checks:
        print(check)
    lines += ["", *[f"- {c}" for c in checks], ""]
    lines += difficulty_table(sets, args.samples, args.repeats)
    lines += ["", *spearman_lines(sets, args.samples, args.mix)]
    stamp = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    header = (
        f"Measured {stamp} on {machine()} with `python -m benchmarks.rating_bench` "
        f"(one process, best of {args.repeats}).\n\n"
    )
    if args.write:
        write_section(args.write, "rating", header + "\n".join(lines) + "\n")
        print(f"updated {args.write}")


if __name__ == "__main__":
    main()
